"""ONNX ops written as one OpenVINO op (`frontends/openvino/ops/basic/write_same.py`): ONNX
models built with onnx.helper, ONNX Runtime the oracle, written to IR by itergraph and run by
OpenVINO (`check`)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto
from onnx import helper as h
from test_ov_from_onnx import check, const, model, vi

rng = np.random.default_rng(23)
F, I64, B, U8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.UINT8


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("neg,pos", [(1, 1), (0, 1), (1, 0)])
def test_is_inf(neg, pos, tmp_path):
    a = np.array([1.0, np.inf, -np.inf, np.nan], np.float32)
    m = model([h.make_node("IsInf", ["x"], ["y"], detect_negative=neg, detect_positive=pos)],
              [vi("x", F, [4])], [vi("y", B, [4])])
    check(m, {"x": a}, tmp_path)


def test_selu(tmp_path):
    m = model([h.make_node("Selu", ["x"], ["y"], alpha=1.5, gamma=0.8)],
              [vi("x", F, [3, 4])], [vi("y", F, [3, 4])])
    check(m, {"x": _f(3, 4)}, tmp_path)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(direction, tmp_path):
    a = rng.integers(0, 200, (2, 4)).astype(np.uint8)
    s = rng.integers(0, 4, (4,)).astype(np.uint8)
    m = model([h.make_node("BitShift", ["x", "s"], ["y"], direction=direction)],
              [vi("x", U8, [2, 4]), vi("s", U8, [4])], [vi("y", U8, [2, 4])])
    # OpenVINO's own ONNX frontend saturates the left shift of uint8 (255), ONNX wraps
    check(m, {"x": a, "s": s}, tmp_path, openvino_onnx=direction == "RIGHT")


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements(reduction, axis, tmp_path):
    idx = np.array([[1, 0, 2], [1, 2, 2]], np.int64)
    if axis == 1:
        idx = idx.T.copy()
    attrs = {} if reduction == "none" else {"reduction": reduction}
    shape = list(idx.shape)
    m = model([h.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=axis, **attrs)],
              [vi("x", F, [3, 3]), vi("u", F, shape)], [vi("y", F, [3, 3])],
              [const("i", idx)], opset=18)
    feeds = {"x": _f(3, 3), "u": _f(*shape)}
    check(m, feeds, tmp_path, openvino_onnx=reduction == "none")


@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot_negative_index(axis, tmp_path):
    idx = np.array([0, -1, 2, -3], np.int64)
    out = [4, 3] if axis == -1 else [3, 4]
    m = model([h.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)],
              [vi("i", I64, [4])], [vi("y", F, out)],
              [const("d", np.int64(3)), const("v", np.array([0.5, 2.0], np.float32))])
    check(m, {"i": idx}, tmp_path)


@pytest.mark.parametrize("bias", [1.5, 2.0])
def test_batch_norm_lrn_and_blocks(bias, tmp_path):
    c = 8
    nodes = [h.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["n"], epsilon=1e-3),
             h.make_node("LRN", ["n"], ["l"], size=3, alpha=0.2, beta=0.75, bias=bias),
             h.make_node("DepthToSpace", ["l"], ["d"], blocksize=2, mode="CRD"),
             h.make_node("DepthToSpace", ["l"], ["e"], blocksize=2, mode="DCR"),
             h.make_node("SpaceToDepth", ["d"], ["s"], blocksize=2)]
    inits = [const("g", _f(c)), const("b", _f(c)), const("m", _f(c)),
             const("v", np.abs(_f(c)) + 0.5)]
    m = model(nodes, [vi("x", F, [2, c, 3, 3])],
              [vi("d", F, [2, 2, 6, 6]), vi("e", F, [2, 2, 6, 6]), vi("s", F, [2, c, 3, 3])],
              inits)
    # OpenVINO's own ONNX import of LRN shares the CPU plugin's truncated bias
    check(m, {"x": _f(2, c, 3, 3)}, tmp_path, openvino_onnx=bias == int(bias), rtol=1e-4,
          atol=1e-4)


@pytest.mark.parametrize("axis", [None, 0])
def test_unique_sorted(axis, tmp_path):
    a = rng.integers(0, 3, (5, 2)).astype(np.float32)
    a[3] = a[1]
    attrs = {} if axis is None else {"axis": axis}
    m = model([h.make_node("Unique", ["x"], ["y", "i", "r", "c"], sorted=1, **attrs)],
              [vi("x", F, [5, 2])],
              [vi("y", F, ["n"] if axis is None else ["n", 2]), vi("i", I64, ["n"]),
               vi("r", I64, [10 if axis is None else 5]), vi("c", I64, ["n"])])
    check(m, {"x": a}, tmp_path)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("pads_const", [True, False])
def test_pad(mode, pads_const, tmp_path):
    pads = np.array([1, 0, 2, 1], np.int64)
    inputs = [vi("x", F, [3, 4])] + ([] if pads_const else [vi("p", I64, [4])])
    inits = [const("p", pads)] if pads_const else []
    m = model([h.make_node("Pad", ["x", "p"], ["y"], mode=mode)], inputs, [vi("y", F, [6, 5])],
              inits)
    feeds = {"x": _f(3, 4)} if pads_const else {"x": _f(3, 4), "p": pads}
    check(m, feeds, tmp_path)
