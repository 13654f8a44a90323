"""Detection ops, both directions: non-maximum suppressions, proposals, SSD post-processing,
YOLO regions (read)."""
