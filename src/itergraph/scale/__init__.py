"""Scaling out: many inputs in batches (`run_many`), batches sharded over JAX devices
(`devices`), and Ray Data workers (`itergraph.ray`), with the proof of when batching is exact
(`batch_axis`)."""
