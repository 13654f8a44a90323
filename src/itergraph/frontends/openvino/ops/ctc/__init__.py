"""CTC greedy decoders (read) and ``CTCLoss`` (both directions)."""
