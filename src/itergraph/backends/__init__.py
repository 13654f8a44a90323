"""Execution backends: `numpy` (reference, always available) and `jax` (compiled, optional)."""
