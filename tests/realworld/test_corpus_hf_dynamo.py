"""The real-world corpus entries of source `hf-dynamo` (see `corpus`; written by
``generators/gen_hf.py``: Hugging Face ``transformers`` architectures exported by
``torch.onnx``'s dynamo exporter, at opset 18 and, with ``sdpa`` attention, at opset 23),
plus the OpenVINO IR that ``convert`` wrote read back by itergraph, written to ONNX and run
by ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("hf-dynamo")
test_ir_back_to_onnx = roundtrip_tests("hf-dynamo")
