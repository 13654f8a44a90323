"""The real-world corpus entries of source `jax2onnx` (see `corpus`; JAX programs with loops
converted by jax2onnx, by ``generators/gen_jax2onnx.py``), plus one more stage for them: the
OpenVINO IR that ``convert`` wrote, read back by itergraph and written to ONNX, computes the
same outputs in ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("jax2onnx")
test_ir_back_to_onnx = roundtrip_tests("jax2onnx")
