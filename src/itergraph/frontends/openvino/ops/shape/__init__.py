"""Data movement: reshape, slice, gather, broadcast, pad, channel and block rearrangements."""
