"""The real-world corpus entries of source `onnxscript` (see `corpus`; programs written in
ONNX Script by ``generators/gen_onnxscript.py``), plus the OpenVINO IR that ``convert``
wrote, read back by itergraph and written to ONNX, run by ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("onnxscript")
test_ir_back_to_onnx = roundtrip_tests("onnxscript")
