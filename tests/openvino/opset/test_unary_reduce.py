"""Activations, Pad, Identity and the L1/L2/logical reductions against OpenVINO through the
whole round (read, NumPy and JAX, written back to IR, to ONNX): the op types other tests read
without writing back."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset4 as ops4
import openvino.opset5 as ops5
import openvino.opset7 as ops7
import openvino.opset12 as ops12
import openvino.opset16 as ops16
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(53)
X = rand(rng, 2, 3, 4)


def _x(dtype=np.float32):
    return ops1.parameter([2, 3, 4], dtype, name="x")


UNARY = {
    "elu": lambda x: ops1.elu(x, 0.7),
    "gelu_erf": lambda x: ops7.gelu(x, "erf"),
    "gelu_tanh": lambda x: ops7.gelu(x, "tanh"),
    "hsigmoid": lambda x: ops5.hsigmoid(x),
    "swish": lambda x: ops4.swish(x),
    "swish_beta": lambda x: ops4.swish(x, ops4.constant(np.float32(1.7))),
    "log_softmax": lambda x: ops5.log_softmax(x, -1),
    "prelu": lambda x: ops1.prelu(x, ops1.constant(np.array([0.1, 0.2, 0.3, 0.4], np.float32))),
    "identity": lambda x: ops16.identity(x),
    "pad_constant": lambda x: ops12.pad(x, ops12.constant(np.array([0, 1, -1], np.int64)),
                                        ops12.constant(np.array([1, 0, 2], np.int64)),
                                        "constant", ops12.constant(np.float32(2.5))),
    "pad_reflect": lambda x: ops12.pad(x, ops12.constant(np.array([0, 1, 1], np.int64)),
                                       ops12.constant(np.array([1, 2, 0], np.int64)), "reflect"),
    "reduce_l1": lambda x: ops4.reduce_l1(x, ops4.constant(np.array([1, 2])), False),
    "reduce_l2": lambda x: ops4.reduce_l2(x, ops4.constant(np.array([-1])), True),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, tmp_path):
    x = _x()
    check_op([UNARY[name](x)], [x], {"x": X}, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["and", "or"])
@pytest.mark.parametrize("keep", [False, True])
def test_reduce_logical(op, keep, tmp_path):
    x = _x(np.bool_)
    f = ops1.reduce_logical_and if op == "and" else ops1.reduce_logical_or
    y = f(x, ops1.constant(np.array([0, 2])), keep)
    check_op([y], [x], {"x": rng.random((2, 3, 4)) > 0.3}, tmp_path)
