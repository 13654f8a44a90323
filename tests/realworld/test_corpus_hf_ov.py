"""The real-world corpus entries of source `hf-ov` (see `corpus`; written by
``generators/gen_hf_ov.py``: transformers models converted to IR by OpenVINO's PyTorch
frontend; the stored outputs are the models' own)."""

from stages import stage_tests

test_stage = stage_tests("hf-ov")
