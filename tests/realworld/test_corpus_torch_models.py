"""The real-world corpus entries of source `torch-models` (see `corpus`; written by
``generators/gen_torch_models.py``:
small everyday PyTorch networks; the stored outputs are ONNX Runtime's on each file)."""

from stages import stage_tests

test_stage = stage_tests("torch-models")
