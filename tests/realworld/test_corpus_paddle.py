"""The real-world corpus entries of source `paddle` (see `corpus`; PaddlePaddle programs with
loops, conditions and recurrent layers converted by paddle2onnx, written by
``generators/gen_paddle.py``), plus one more stage
for them: the OpenVINO IR that ``convert`` wrote, read back by itergraph and written to ONNX,
computes the same outputs in ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("paddle")
test_ir_back_to_onnx = roundtrip_tests("paddle")
