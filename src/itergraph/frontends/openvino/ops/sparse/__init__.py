"""``SparseFillEmptyRows``: both directions."""
