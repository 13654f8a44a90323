"""The real-world corpus entries of source `onnxmltools` (see `corpus`; LightGBM and XGBoost
models converted by ``generators/gen_onnxmltools.py``)."""

from stages import stage_tests

test_stage = stage_tests("onnxmltools")
