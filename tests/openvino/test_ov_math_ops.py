"""Round, HardSigmoid, Selu, IsInf, IsFinite, the Bitwise family, CumSum and Einsum read from
OpenVINO IR: one-op models built with OpenVINO's Python API, OpenVINO the oracle, then
itergraph's written IR run by OpenVINO again (`check_model`)."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset3 as ops3
import openvino.opset5 as ops5
import openvino.opset7 as ops7
import openvino.opset10 as ops10
import openvino.opset13 as ops13
import openvino.opset15 as ops15
import pytest
from ov_helpers import check_model, save
from test_ov_order_ops import _model

from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(13)


@pytest.mark.parametrize("mode", ["half_to_even", "half_away_from_zero"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_round5(mode, dtype, tmp_path):
    a = (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2, -3.7]) * (4 if dtype == np.int32 else 1))
    a = a.astype(dtype)
    x = ops5.parameter([8], dtype, name="x")
    check_model(_model([ops5.round(x, mode).output(0)], [x]), {"x": a}, tmp_path)


def test_hard_sigmoid_and_selu(tmp_path):
    a = rng.standard_normal((3, 5)).astype(np.float32) * 4
    x = ops1.parameter([3, 5], np.float32, name="x")
    alpha, beta, lam = (ops1.constant(np.float32(v)) for v in (0.3, 0.6, 1.05))
    hs = ops1.hard_sigmoid(x, alpha, beta)
    se = ops1.selu(x, alpha, lam)
    g, _ = check_model(_model([hs.output(0), se.output(0)], [x]), {"x": a}, tmp_path)
    assert {"HardSigmoid", "Selu"} <= {n.op_type for n in g.nodes}


def test_selu_runtime_alpha_refused(tmp_path):
    x = ops1.parameter([3], np.float32, name="x")
    al = ops1.parameter([], np.float32, name="al")
    m = _model([ops1.selu(x, al, ops1.constant(np.float32(1.0))).output(0)], [x, al])
    with pytest.raises(UnsupportedError, match="alpha"):
        read(save(m, tmp_path))


@pytest.mark.parametrize("neg,pos", [(True, True), (True, False), (False, True)])
def test_is_inf_and_is_finite(neg, pos, tmp_path):
    a = np.array([1.0, np.inf, -np.inf, np.nan, -2.0, 0.0], np.float32)
    x = ops10.parameter([6], np.float32, name="x")
    inf = ops10.is_inf(x, {"detect_negative": neg, "detect_positive": pos})
    fin = ops10.is_finite(x)
    check_model(_model([inf.output(0), fin.output(0)], [x]), {"x": a}, tmp_path)


def test_bitwise_on_booleans(tmp_path):
    a, c = rng.random((2, 3)) < 0.5, rng.random((3,)) < 0.5
    x = ops13.parameter([2, 3], bool, name="x")
    y = ops13.parameter([3], bool, name="y")
    outs = [ops13.bitwise_and(x, y), ops13.bitwise_or(x, y), ops13.bitwise_xor(x, y),
            ops13.bitwise_not(x)]
    g, _ = check_model(_model([o.output(0) for o in outs], [x, y]), {"x": a, "y": c}, tmp_path)
    assert {n.op_type for n in g.nodes} == {"And", "Or", "Xor", "Not"}


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_bitwise_shifts(dtype, tmp_path):
    lo = 0 if dtype == np.uint8 else -50
    a = rng.integers(lo, 50, (2, 4)).astype(dtype)
    s = rng.integers(0, 5, (4,)).astype(dtype)
    x = ops15.parameter([2, 4], dtype, name="x")
    sh = ops15.parameter([4], dtype, name="s")
    outs = [ops15.bitwise_left_shift(x, sh), ops15.bitwise_right_shift(x, sh)]
    check_model(_model([o.output(0) for o in outs], [x, sh]), {"x": a, "s": s}, tmp_path,
                )


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [None, 1, -1])
def test_cumsum3(exclusive, reverse, axis, tmp_path):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = ops3.parameter([3, 4], np.float32, name="x")
    ax = None if axis is None else ops3.constant(np.int32(axis))
    c = ops3.cumsum(x, ax, exclusive=exclusive, reverse=reverse) if ax is not None else \
        ops3.cumsum(x, ops3.constant(np.int64(0)), exclusive=exclusive, reverse=reverse)
    check_model(_model([c.output(0)], [x]), {"x": a}, tmp_path)


def test_cumsum_runtime_axis(tmp_path):
    a = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    x = ops3.parameter([3, 4], np.int32, name="x")
    ax = ops3.parameter([], np.int64, name="ax")
    c = ops3.cumsum(x, ax)
    check_model(_model([c.output(0)], [x, ax]), {"x": a, "ax": np.int64(1)}, tmp_path)


@pytest.mark.parametrize("eq,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]),
                                       ("bij->bji", [(2, 3, 4)]),
                                       ("i,i->", [(5,), (5,)]),
                                       ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 2)])])
def test_einsum7(eq, shapes, tmp_path):
    feeds = {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    params = [ops7.parameter(list(v.shape), np.float32, name=n) for n, v in feeds.items()]
    e = ops7.einsum(params, eq)
    check_model(_model([e.output(0)], params), feeds, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["floor", "ceiling"])
def test_floor_and_ceiling_of_integers(op, tmp_path):
    """OpenVINO's PyTorch frontend writes ``floor_divide`` of int64 sizes as ``Floor`` of
    an integer ``Divide``; ONNX's Floor and Ceil take floats only: the ONNX copy must run in
    ONNX Runtime."""
    import onnx
    import onnxruntime as ort

    import itergraph as ig

    x = ops1.parameter([5], np.int64, name="x")
    y = getattr(ops1, op)(ops1.divide(x, ops1.constant(np.int64(2))))
    xml = save(_model([y], [x]), tmp_path)
    ig.save(ig.load(xml), tmp_path / "m.onnx")
    onnx.checker.check_model(str(tmp_path / "m.onnx"), full_check=True)
    v = np.array([-5, -2, 0, 3, 7], np.int64)
    got = ort.InferenceSession(str(tmp_path / "m.onnx"),
                               providers=["CPUExecutionProvider"]).run(None, {"x": v})
    np.testing.assert_array_equal(got[0], np.floor_divide(v, 2))
