"""Analyses: questions answered about a graph from the IR alone, used by passes, writers and
the portability checks, changing nothing.

- `loop_features`: every loop and node with where it sits, and the loop features runtimes
  differ on (how the count is given, carried values that change shape, scan outputs).
- `batch_axis`: the proof that a graph computes per example along a batch axis (`run_many`
  joins inputs on it), and that padding an axis leaves the valid part of every output alone.
- `padding`: on that proof, a copy of a graph that runs inputs padded to a few lengths (the
  JAX engine's answer to lengths that vary from call to call); the graph itself is unchanged.
"""
