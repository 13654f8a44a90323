"""A Conv over spatial axes of length 1 that its kernel only passes through (a TensorFlow
Conv1D exported as a Conv over ``[N, C, L, 1]``) runs on JAX as the convolution over the
other axes, with ONNX Runtime's outputs; an axis the kernel pads or spans keeps the full
convolution."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.backends.jax.ops import conv

RNG = np.random.default_rng(0)
# (input shape, kernel, attributes, spatial rank the lowering computes)
CASES = {
    "conv1d-as-2d": ((2, 6, 17, 1), (5, 1), {}, 1),
    "strided-dilated-padded": ((1, 4, 23, 1), (3, 1), {"strides": [2, 3], "dilations": [2, 1],
                                                       "pads": [1, 0, 2, 0]}, 1),
    "unit-first-axis": ((1, 4, 1, 19), (1, 3), {"pads": [0, 1, 0, 1]}, 1),
    "depthwise": ((1, 8, 15, 1), (3, 1), {"group": 8, "pads": [1, 0, 1, 0]}, 1),
    "grouped-same": ((2, 6, 12, 1), (4, 1), {"group": 2, "auto_pad": "SAME_UPPER"}, 1),
    "3d-two-unit-axes": ((1, 3, 1, 9, 1), (1, 3, 1), {}, 1),
    "unit-axis-padded": ((1, 4, 11, 1), (3, 1), {"pads": [1, 1, 1, 1]}, 2),
    "same-padding-of-none": ((1, 4, 11, 1), (3, 1), {"auto_pad": "SAME_LOWER"}, 1),
    "unit-axis-spanned": ((1, 4, 11, 1), (3, 3), {"auto_pad": "SAME_LOWER"}, 2),
    "all-axes-unit": ((1, 4, 1, 1), (1, 1), {}, 2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_conv_over_unit_axes_is_ort_s(name, monkeypatch):
    shape, kernel, attrs, rank = CASES[name]
    group = attrs.get("group", 1)
    out_c = 8 if group == 1 else shape[1]
    w = RNG.standard_normal((out_c, shape[1] // group, *kernel)).astype(np.float32)
    b = RNG.standard_normal(out_c).astype(np.float32)
    x = RNG.standard_normal(shape).astype(np.float32)
    node = h.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=list(kernel), **attrs)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    (want,) = ort.InferenceSession(m.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, {"x": x})
    ranks = []
    real = conv._conv
    monkeypatch.setattr(conv, "_conv", lambda cx, x, *a: ranks.append(x.ndim - 2)
                        or real(cx, x, *a))
    got = ig.load(m).run({"x": x}, backend="jax")["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert ranks == [rank]
