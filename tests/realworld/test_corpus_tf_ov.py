"""The real-world corpus entries of source `tf-ov` (see `corpus`; one file per source so that
``--dist loadfile`` spreads the corpus over the test workers)."""

from stages import stage_tests

test_stage = stage_tests("tf-ov")
