"""``QLinearConv`` and ``QLinearMatMul`` (statically quantized models in QOperator form)
compile on JAX and give ONNX Runtime's codes exactly: uint8/int8 codes, per-tensor and
per-channel (per-column) scales and zero points, bias, groups, strides, padding, and weights
large enough for the int8 product (`backends.jax.ops.int8_dot`)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from onnx_builders import run_ort

rng = np.random.default_rng(11)
NP_T = {np.dtype(np.uint8): T.UINT8, np.dtype(np.int8): T.INT8}


def _codes(dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def _scale(shape):
    return (rng.random(shape) * 0.02 + 0.002).astype(np.float32)


def _check(node, x, consts):
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    y_t = NP_T[np.dtype(consts["yz"].dtype)]
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", NP_T[x.dtype], list(x.shape))],
                     [h.make_tensor_value_info("y", y_t, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8)
    model = ig.load(m)
    want = run_ort(m, {"x": x})["y"]
    got = model.run({"x": x}, backend="jax")["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert all(r.compiles for r in model._jax.explain())  # what that run did: all in XLA


CONV = [  # (x codes, w codes, channels in/out, group, per-channel w?, bias?, attrs)
    (np.uint8, np.int8, (8, 16), 1, True, True, {"pads": [1, 1, 1, 1]}),
    (np.uint8, np.uint8, (6, 4), 1, False, False, {"strides": [2, 1], "pads": [0, 1, 2, 1]}),
    (np.uint8, np.int8, (12, 12), 12, True, True, {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    (np.int8, np.int8, (4, 6), 2, False, True, {"dilations": [2, 1]}),
    (np.uint8, np.int8, (64, 128), 1, True, True, {"pads": [1, 1, 1, 1]}),  # int8 (16x16)
]


@pytest.mark.parametrize("x_t,w_t,chans,group,per_channel,bias,attrs", CONV)
def test_qlinear_conv(x_t, w_t, chans, group, per_channel, bias, attrs):
    c, o = chans
    x = _codes(x_t, (1, c) + ((16, 16) if c >= 64 else (7, 6)))
    w = _codes(w_t, (o, c // group, 3, 3))
    cols = (o,) if per_channel else ()
    wz = np.zeros(cols, w_t) if w_t == np.int8 else _codes(w_t, cols)
    consts = {"xs": _scale(()), "xz": _codes(x_t, ()), "w": w, "ws": _scale(cols), "wz": wz,
              "ys": np.float32(0.05 if c < 64 else 0.5), "yz": _codes(x_t, ())}
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        consts["b"] = rng.integers(-2000, 2000, o).astype(np.int32)
        names.append("b")
    _check(h.make_node("QLinearConv", names, ["y"], group=group, **attrs), x, consts)


MATMUL = [  # (a codes, b codes, a's shape, K, N, per-column b?)
    (np.uint8, np.int8, (5, 32), 32, 12, True),
    (np.uint8, np.uint8, (2, 3, 24), 24, 7, False),
    (np.int8, np.int8, (4, 16), 16, 9, True),
    (np.uint8, np.int8, (128, 256), 256, 256, True),  # the int8 product
]


@pytest.mark.parametrize("a_t,b_t,shape,k,n,per_column", MATMUL)
def test_qlinear_matmul(a_t, b_t, shape, k, n, per_column):
    a, b = _codes(a_t, shape), _codes(b_t, (k, n))
    cols = (n,) if per_column else ()
    bz = np.zeros(cols, b_t) if b_t == np.int8 else _codes(b_t, cols)
    consts = {"as": _scale(()), "az": _codes(a_t, ()), "b": b, "bs": _scale(cols), "bz": bz,
              "ys": np.float32(0.05 if k < 256 else 0.5), "yz": _codes(a_t, ())}
    node = h.make_node("QLinearMatMul", ["x", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    _check(node, a, consts)
