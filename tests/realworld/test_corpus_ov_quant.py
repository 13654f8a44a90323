"""The real-world corpus entries of source `ov-quant` (see `corpus`; OpenVINO IR written by
OpenVINO's own converter from the quantized, fused and float16 ONNX files, by
``generators/gen_ov_quant.py``)."""

from stages import stage_tests

test_stage = stage_tests("ov-quant")
