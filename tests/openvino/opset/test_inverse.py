"""Inverse-14 against OpenVINO; read (as ``org.openvinotoolkit`` Inverse), run on NumPy and
JAX, written back. No ONNX op inverts a matrix, so there is no ONNX Runtime leg."""

from __future__ import annotations

import numpy as np
import openvino.opset14 as ops14
import pytest
from opcheck import check_op

rng = np.random.default_rng(71)


def _well_conditioned(shape, dtype):
    n = shape[-1]
    return (rng.standard_normal(shape) + 3 * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 1)])
def test_inverse(adjoint, shape, tmp_path):
    x = ops14.parameter(list(shape), np.float32, name="x")
    y = ops14.inverse(x, adjoint)
    check_op([y], [x], {"x": _well_conditioned(shape, np.float32)}, tmp_path, rtol=1e-4,
             atol=1e-4, to_onnx=False)


def test_inverse_dynamic_batch(tmp_path):
    x = ops14.parameter([-1, 2, 2], np.float32, name="x")
    y = ops14.inverse(x, False)
    check_op([y], [x], {"x": _well_conditioned((3, 2, 2), np.float32)}, tmp_path, rtol=1e-4,
             atol=1e-4, to_onnx=False)
