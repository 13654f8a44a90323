"""The real-world corpus entries of source `ort-fused` (see `corpus`; written by
``generators/gen_ort_fused.py``), plus the OpenVINO IR that ``convert`` wrote, read
back by itergraph and written to ONNX, run by ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("ort-fused")
test_ir_back_to_onnx = roundtrip_tests("ort-fused")
