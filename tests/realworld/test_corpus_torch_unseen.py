"""The real-world corpus entries of source `torch-unseen` (see `corpus`; loop programs written
apart from the `torch` source's, by ``generators/gen_torch_unseen.py``), plus one more stage
for them: the OpenVINO IR that ``convert`` wrote, read back by itergraph and written to ONNX,
computes the same outputs in ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("torch-unseen")
test_ir_back_to_onnx = roundtrip_tests("torch-unseen")
