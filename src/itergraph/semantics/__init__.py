"""Op formulas written once over an array module (``xp``: ``numpy`` or ``jax.numpy``).

The NumPy kernels and the JAX lowerings call them to run an op; the writers call them to
precompute what a target format cannot express directly (the lookup table of a quantized
elementwise op, say). They sit below both, so a writer never imports a backend.
"""
