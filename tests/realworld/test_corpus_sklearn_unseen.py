"""The real-world corpus entries of source `sklearn-unseen` (see `corpus`; written by
``generators/gen_sklearn_unseen.py``:
everyday scikit-learn pipelines; the stored outputs are ONNX Runtime's on each file)."""

from stages import stage_tests

test_stage = stage_tests("sklearn-unseen")
