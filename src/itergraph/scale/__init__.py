"""Scaling out: many inputs in batches (`run_many`), batches sharded over JAX devices
(`devices`), and Ray Data workers (`itergraph.ray`); the proof of when batching is exact is
`analysis.batch_axis`."""
