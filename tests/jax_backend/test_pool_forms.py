"""MaxPool and AveragePool on JAX reduce one spatial axis at a time (`ops.conv._separable`),
and windows that tile the input in one reduction over a reshape (`ops.conv._tiled`):
a grid of windows, strides, pads, dilations, auto_pad, batch and element types against
ONNX Runtime, for inputs held channels first and channels last."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper as h

import itergraph as ig

GRID = [
    ("MaxPool", (2, 3, 9, 8), {"kernel_shape": [3, 3]}),
    ("MaxPool", (1, 4, 13, 13), {"kernel_shape": [13, 13], "pads": [6, 6, 6, 6]}),
    ("MaxPool", (1, 3, 11, 10), {"kernel_shape": [3, 2], "strides": [2, 3],
                                 "pads": [1, 0, 1, 1]}),
    ("MaxPool", (1, 2, 12, 11), {"kernel_shape": [2, 3], "dilations": [2, 1],
                                 "strides": [1, 2]}),
    ("MaxPool", (2, 3, 9, 7), {"kernel_shape": [3, 3], "strides": [2, 2],
                               "auto_pad": "SAME_UPPER"}),
    ("MaxPool", (1, 3, 10), {"kernel_shape": [4], "strides": [3], "auto_pad": "SAME_LOWER"}),
    ("MaxPool", (1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [1, 2, 1]}),
    # windows that tile the input (as long as their stride): one reduction over a reshape
    ("MaxPool", (1, 3, 9, 10), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("MaxPool", (2, 2, 8, 9), {"kernel_shape": [2, 3], "strides": [2, 1],
                               "pads": [0, 1, 0, 1]}),
    ("AveragePool", (1, 3, 7, 9), {"kernel_shape": [3, 3], "strides": [3, 3]}),
    ("AveragePool", (1, 2, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2],
                                   "auto_pad": "SAME_UPPER"}),
    ("AveragePool", (2, 3, 9, 8), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ("AveragePool", (1, 3, 9, 8), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                   "count_include_pad": 1}),
    ("AveragePool", (1, 3, 11, 10), {"kernel_shape": [5, 2], "strides": [2, 3],
                                     "pads": [2, 0, 1, 1]}),
    ("AveragePool", (1, 3, 12), {"kernel_shape": [3], "auto_pad": "SAME_UPPER",
                                 "strides": [2]}),
]


def _run(op, x, attrs, conv_first):
    c = x.shape[1]
    nodes, inits, src = [], [], "x"
    if conv_first:  # a 1x1 Conv before: the pooling reads a value held channels last
        w = np.random.default_rng(3).standard_normal((c, c) + (1,) * (x.ndim - 2))
        inits.append(onnx.numpy_helper.from_array(w.astype(x.dtype), "w"))
        nodes.append(h.make_node("Conv", ["x", "w"], ["c"]))
        src = "c"
    nodes.append(h.make_node(op, [src], ["y"], **attrs))
    et = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", et, list(x.shape))],
                     [h.make_tensor_value_info("y", et, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    model = ig.load(m)
    got = model.run({"x": x}, backend="jax")["y"]
    assert all(r.compiles for r in model._jax.explain())
    return got, want


@pytest.mark.parametrize("conv_first", [False, True])
@pytest.mark.parametrize("op,shape,attrs", GRID)
def test_pooling_matches_onnx_runtime(op, shape, attrs, conv_first):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    got, want = _run(op, x, attrs, conv_first)
    assert got.shape == want.shape
    if op == "MaxPool" and not conv_first:  # (the Conv's sums may round apart)
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_integer_max_pool_matches_onnx_runtime():
    x = np.random.default_rng(1).integers(-100, 100, (1, 3, 9, 8)).astype(np.int8)
    got, want = _run("MaxPool", x, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                    "strides": [2, 2]}, conv_first=False)
    np.testing.assert_array_equal(got, want)
