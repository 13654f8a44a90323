"""String-tensor ops: both directions."""
