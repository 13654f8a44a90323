"""The NumPy MaxPool kernel against ONNX Runtime: end-only padding (where ``onnx.reference``
is wrong), auto_pad, dilations, ceil_mode, strides, storage_order, int8 inputs, 1-3
spatial axes, and the indices output."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper as h

import itergraph as ig

rng = np.random.default_rng(5)

CASES = [
    ((1, 2, 6, 7), dict(kernel_shape=[2, 2], pads=[0, 0, 1, 1])),
    ((2, 3, 32, 32), dict(kernel_shape=[2, 2], auto_pad="SAME_UPPER")),
    ((1, 1, 5, 6), dict(kernel_shape=[3, 2], auto_pad="SAME_LOWER", strides=[2, 1])),
    ((1, 2, 7, 8), dict(kernel_shape=[2, 3], dilations=[2, 1], pads=[1, 0, 0, 2])),
    ((1, 1, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, pads=[0, 0, 1, 1])),
    ((1, 2, 6, 5), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)),
    ((1, 2, 6, 5), dict(kernel_shape=[2, 2], storage_order=1, pads=[1, 1, 0, 0])),
    ((2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[0, 2])),
    ((1, 2, 4, 5, 6), dict(kernel_shape=[2, 2, 3], pads=[0, 1, 0, 1, 0, 2])),
    ((1, 1, 5, 5), dict(kernel_shape=[2, 2], auto_pad="VALID", strides=[2, 2])),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
@pytest.mark.parametrize("shape,attrs", CASES)
def test_max_pool_matches_onnxruntime(shape, attrs, dtype):
    elem = 1 if dtype == np.float32 else 3
    two = dtype == np.float32  # ONNX Runtime gives indices for float inputs only
    node = h.make_node("MaxPool", ["x"], ["y", "i"] if two else ["y"], **attrs)
    outs = [h.make_tensor_value_info("y", elem, None)]
    if two:
        outs.append(h.make_tensor_value_info("i", 7, None))
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", elem, list(shape))], outs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 12)], ir_version=8)
    x = (rng.standard_normal(shape) * 40).astype(dtype)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = list(ig.load(m).run({"x": x}).values())
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
