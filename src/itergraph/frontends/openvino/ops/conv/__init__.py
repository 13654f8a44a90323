"""Convolutions and pooling, binary and deformable convolutions: both directions."""
