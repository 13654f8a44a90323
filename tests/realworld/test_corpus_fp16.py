"""The real-world corpus entries of source `fp16` (see `corpus`; written by
``generators/gen_ort_fused.py``), plus the OpenVINO IR that ``convert`` wrote, read
back by itergraph and written to ONNX, run by ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("fp16")
test_ir_back_to_onnx = roundtrip_tests("fp16")
