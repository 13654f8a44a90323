"""Seeing inside loops: traces, comparisons, a picture of the loops, progress and profiles."""
