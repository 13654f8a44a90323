"""Analyses: questions answered about a graph from the IR alone, used by passes, writers and
the portability checks, changing nothing.

- `loop_features`: every loop and node with where it sits, and the loop features runtimes
  differ on (how the count is given, carried values that change shape, scan outputs).
"""
