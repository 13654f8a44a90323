"""The real-world corpus entries of source `timm` (see `corpus`; written by
``generators/gen_timm.py``: timm image models from tiny configurations, exported by
``torch.onnx``; the stored outputs are torch's own)."""

from stages import stage_tests

test_stage = stage_tests("timm")
