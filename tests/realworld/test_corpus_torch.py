"""The real-world corpus entries written by `generators/gen_torch.py` (see `corpus`)."""

from stages import stage_tests

test_stage = stage_tests("torch", "torch-ov")
