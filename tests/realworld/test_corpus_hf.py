"""The real-world corpus entries of source `hf` (see `corpus`; written by
``generators/gen_hf.py``: Hugging Face ``transformers`` architectures from tiny random
configurations, exported by ``torch.onnx``'s TorchScript exporter; the stored outputs are the
models' own), plus the OpenVINO IR that ``convert`` wrote read back by itergraph, written to
ONNX and run by ONNX Runtime."""

from stages import roundtrip_tests, stage_tests

test_stage = stage_tests("hf")
test_ir_back_to_onnx = roundtrip_tests("hf")
