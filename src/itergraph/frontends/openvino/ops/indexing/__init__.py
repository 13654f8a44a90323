"""Ops that index, select, reorder or scatter elements (read)."""
