"""The real-world corpus entries written by `generators/gen_sklearn.py` (see `corpus`)."""

from stages import stage_tests

test_stage = stage_tests("sklearn", "sklearn-ov")
