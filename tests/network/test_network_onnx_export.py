"""Networks exported through the ONNX writer run in ONNX Runtime with the oracle's outputs."""

from __future__ import annotations

import pytest
from net_cases import CASES
from net_helpers import assert_outputs, run_ort


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_onnxruntime(name):
    net, feeds, want = CASES[name]()
    assert_outputs(run_ort(net, feeds), want)
