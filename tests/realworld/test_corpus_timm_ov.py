"""The real-world corpus entries of source `timm-ov` (see `corpus`; written by
``generators/gen_timm.py``: timm image models converted to IR by OpenVINO's PyTorch frontend;
the stored outputs are torch's own)."""

from stages import stage_tests

test_stage = stage_tests("timm-ov")
