"""Each translated OpenVINO op against OpenVINO itself: import (NumPy run) and re-export.

Every case builds a one-op model with OpenVINO's Python API; `check_model` reads it, runs it on
the NumPy backend, compares with OpenVINO, writes it back and has OpenVINO run the copy.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset15 as ops15
import pytest
from openvino import opset13 as ops
from ov_helpers import check_model

rng = np.random.default_rng(5)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def i32(*shape, lo=-9, hi=10):
    return rng.integers(lo, hi, shape).astype(np.int32)


def c64(v):
    return ops.constant(np.asarray(v, np.int64))


def P(name, arr):
    return ops.parameter(list(arr.shape), arr.dtype, name=name)


def one(build, *arrays):
    """(model, feeds) for `build(*params)` over inputs a, b, c ... holding `arrays`."""
    params = [P(chr(ord("a") + i), a) for i, a in enumerate(arrays)]
    out = build(*params)
    outs = out if isinstance(out, list) else [out]
    m = ov.Model([ops.result(o) for o in outs], params, "op")
    return m, {p.get_friendly_name(): a for p, a in zip(params, arrays)}


POS = np.abs(f32(3, 4)) + 0.5


def _trunc_divide(a, b):
    d = ops.divide(a, b)
    d.set_attribute("m_pythondiv", False)
    return d
CASES = {
    "add": (lambda a, b: ops.add(a, b), f32(3, 4), f32(4)),
    "subtract": (lambda a, b: ops.subtract(a, b), f32(2, 3, 4), f32(3, 1)),
    "multiply": (lambda a, b: ops.multiply(a, b), f32(3, 4), f32(3, 4)),
    "divide_float": (lambda a, b: ops.divide(a, b), f32(3, 4), POS),
    "divide_int_trunc": (lambda a, b: _trunc_divide(a, b), i32(4, 5), i32(4, 5, lo=1, hi=5) *
                         np.where(rng.random((4, 5)) < .5, -1, 1).astype(np.int32)),
    "maximum": (lambda a, b: ops.maximum(a, b), f32(3, 4), f32(3, 4)),
    "minimum": (lambda a, b: ops.minimum(a, b), i32(3, 4), i32(1, 4)),
    "power": (lambda a, b: ops.power(a, b), POS, f32(3, 4)),
    "squared_difference": (lambda a, b: ops.squared_difference(a, b), f32(3, 4), f32(4)),
    "floor_mod_int": (lambda a, b: ops.floor_mod(a, b), i32(3, 4), i32(3, 4, lo=1, hi=4) * -1),
    "floor_mod_float": (lambda a, b: ops.floor_mod(a, b), f32(3, 4) * 3, POS),
    "mod_int": (lambda a, b: ops.mod(a, b), i32(3, 4), i32(3, 4, lo=1, hi=4)),
    "matmul": (lambda a, b: ops.matmul(a, b, False, False), f32(2, 3, 4), f32(4, 5)),
    "matmul_transposed": (lambda a, b: ops.matmul(a, b, True, True), f32(2, 4, 3), f32(5, 4)),
    "matmul_vector": (lambda a, b: ops.matmul(a, b, False, True), f32(4), f32(5, 4)),
    "compare": (lambda a, b: [ops.equal(a, b), ops.not_equal(a, b), ops.less(a, b),
                              ops.less_equal(a, b), ops.greater(a, b),
                              ops.greater_equal(a, b)], i32(3, 4, lo=0, hi=3),
                i32(3, 4, lo=0, hi=3)),
    "logical": (lambda a, b: [ops.logical_and(a, b), ops.logical_or(a, b),
                              ops.logical_xor(a, b), ops.logical_not(a)],
                rng.random((3, 4)) < .5, rng.random((3, 4)) < .5),
    "select": (lambda c, a, b: ops.select(c, a, b), rng.random((3, 4)) < .5, f32(3, 4), f32(4)),
    "unary": (lambda a: [ops.sigmoid(a), ops.tanh(a), ops.relu(a), ops.exp(a), ops.abs(a),
                         ops.negative(a), ops.floor(a), ops.ceiling(a), ops.erf(a), ops.sign(a)],
              f32(3, 4)),
    "log_sqrt": (lambda a: [ops.log(a), ops.sqrt(a)], POS),
    "clamp_float": (lambda a: ops.clamp(a, -0.5, 0.7), f32(3, 4)),
    "clamp_int": (lambda a: ops.clamp(a, -2.5, 3.5), i32(3, 4)),
    "convert": (lambda a: [ops.convert(a, "i32"), ops.convert(a, "boolean"),
                           ops.convert(a, "f16")], f32(3, 4) * 3),
    "convert_like": (lambda a, b: ops.convert_like(a, b), i32(3, 4), f32(2)),
    "reshape_special_zero": (lambda a: ops.reshape(a, c64([0, -1]), True), f32(2, 3, 4)),
    "reshape_plain": (lambda a: ops.reshape(a, c64([4, 6]), False), f32(2, 3, 4)),
    "squeeze": (lambda a: [ops.squeeze(a, c64([1])), ops15.squeeze(a)], f32(2, 1, 3, 1)),
    "unsqueeze": (lambda a: ops.unsqueeze(a, c64([0, -1])), f32(2, 3)),
    "concat": (lambda a, b: ops.concat([a, b, a], -1), f32(2, 3), f32(2, 1)),
    "split": (lambda a: list(ops.split(a, c64(1), 3).outputs()), f32(2, 6)),
    "variadic_split": (lambda a: list(ops.variadic_split(a, c64(-1), c64([1, -1, 2]))
                                      .outputs()), f32(2, 7)),
    "strided_slice_masks": (lambda a: ops.strided_slice(
        a, c64([0, 1, 0]), c64([0, -1, 2]), c64([1, 2, 1]), [1, 0, 0], [1, 0, 0]),
        f32(3, 6, 4)),
    "strided_slice_reverse": (lambda a: ops.strided_slice(
        a, c64([0, -1]), c64([0, 0]), c64([1, -1]), [1, 0], [1, 1]), f32(3, 5)),
    "strided_slice_new_shrink": (lambda a: ops.strided_slice(
        a, c64([0, 1, 0]), c64([0, 2, 0]), c64([1, 1, 1]), [1, 0, 1], [1, 0, 1],
        new_axis_mask=[0, 0, 0], shrink_axis_mask=[0, 1, 0]), f32(3, 4, 5)),
    "strided_slice_ellipsis": (lambda a: ops.strided_slice(
        a, c64([0, 0, 1]), c64([0, 0, 3]), c64([1, 1, 1]), [0, 0, 0], [0, 0, 0],
        new_axis_mask=[1, 0, 0], ellipsis_mask=[0, 1, 0]), f32(2, 3, 4)),
    "strided_slice_dynamic_begin": (lambda a, b: ops.strided_slice(
        a, b, ops.add(b, c64([1, 2])), c64([1, 1]), [0, 0], [0, 0]), f32(4, 5),
        np.array([1, 2], np.int64)),
    "slice8": (lambda a: ops.slice(a, c64([1, -1]), c64([3, 0]), c64([1, -2]), c64([0, 1])),
               f32(4, 6)),
    "gather": (lambda a, b: ops.gather(a, b, c64(1)), f32(3, 5),
               np.array([[0, -1], [4, 2]], np.int64)),
    "gather_batch_dims": (lambda a, b: ops.gather(a, b, c64(2), 1), f32(2, 3, 4, 5),
                          rng.integers(0, 4, (2, 6)).astype(np.int32)),
    "transpose": (lambda a: ops.transpose(a, c64([2, 0, 1])), f32(2, 3, 4)),
    "broadcast_numpy": (lambda a: ops.broadcast(a, c64([2, 3, 4])), f32(3, 1)),
    "broadcast_bidirectional": (lambda a: ops.broadcast(a, c64([2, 1, 4]),
                                                        broadcast_spec="bidirectional"),
                                f32(3, 1)),
    "broadcast_explicit": (lambda a: ops.broadcast(a, c64([2, 3, 4]), c64([1]), "explicit"),
                           f32(3)),
    "shape_of": (lambda a: [ops.shape_of(a), ops.shape_of(a, "i32")], f32(2, 3, 4)),
    "tile": (lambda a: [ops.tile(a, c64([2])), ops.tile(a, c64([2, 1, 3]))], f32(2, 3)),
    "reduce": (lambda a: [ops.reduce_sum(a, c64([1]), True), ops.reduce_mean(a, c64([0, 2])),
                          ops.reduce_max(a, c64([-1]), True), ops.reduce_min(a, c64([0])),
                          ops.reduce_prod(a, c64([1, 2]))], f32(2, 3, 4)),
    "softmax_v1": (lambda a: ops1.softmax(a, 1), f32(2, 3, 4)),
    "softmax_v8": (lambda a: ops.softmax(a, -1), f32(2, 3, 4)),
    "range": (lambda a: ops.range(c64(0), a, c64(2), "i32"), np.array(7, np.int64)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op(tmp_path, name):
    build, *arrays = CASES[name]
    m, feeds = one(build, *arrays)
    check_model(m, feeds, tmp_path, rtol=1e-5, atol=1e-5)


H = 4


def _cell_inputs(n_in=3, batch=2, gates=4):
    return (f32(batch, n_in), f32(batch, H), f32(gates * H, n_in), f32(gates * H, H),
            f32(gates * H))


def test_lstm_cell_v4(tmp_path):
    x, h, w, r, b = _cell_inputs()
    m, feeds = one(lambda X, Hh, Cc: list(ops.lstm_cell(
        X, Hh, Cc, ops.constant(w), ops.constant(r), ops.constant(b), H).outputs()),
        x, h, f32(2, H))
    check_model(m, feeds, tmp_path)


def test_lstm_cell_v1_with_clip_and_runtime_weights(tmp_path):
    x, h, w, r, b = _cell_inputs()
    m, feeds = one(lambda X, Hh, Cc, W, R, B: list(ops1.lstm_cell(
        X, Hh, Cc, W, R, B, H, clip=0.8).outputs()), x, h, f32(2, H), w, r, b)
    check_model(m, feeds, tmp_path)


@pytest.mark.parametrize("lbr", [False, True])
def test_gru_cell(tmp_path, lbr):
    x, h, w, r, _ = _cell_inputs(gates=3)
    b = f32((4 if lbr else 3) * H)
    m, feeds = one(lambda X, Hh: ops.gru_cell(X, Hh, ops.constant(w), ops.constant(r),
                                              ops.constant(b), H, linear_before_reset=lbr),
                   x, h)
    check_model(m, feeds, tmp_path)


def test_rnn_cell_relu(tmp_path):
    x, h, w, r, b = _cell_inputs(gates=1)
    m, feeds = one(lambda X, Hh, W: ops.rnn_cell(X, Hh, W, ops.constant(r), ops.constant(b), H,
                                                 ["relu"], [], []), x, h, w)
    check_model(m, feeds, tmp_path)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_sequence(tmp_path, direction):
    d = 2 if direction == "bidirectional" else 1
    batch, seq, n_in = 3, 5, 2
    lens = np.array([5, 3, 4], np.int32)
    w, r, b = f32(d, 4 * H, n_in), f32(d, 4 * H, H), f32(d, 4 * H)
    m, feeds = one(lambda X, H0, C0, L: list(ops.lstm_sequence(
        X, H0, C0, L, ops.constant(w), ops.constant(r), ops.constant(b), H, direction)
        .outputs()), f32(batch, seq, n_in), f32(batch, d, H), f32(batch, d, H), lens)
    check_model(m, feeds, tmp_path, rtol=1e-4)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_sequence(tmp_path, direction):
    d = 2 if direction == "bidirectional" else 1
    batch, seq, n_in = 2, 4, 3
    w, r, b = f32(d, 3 * H, n_in), f32(d, 3 * H, H), f32(d, 4 * H)
    m, feeds = one(lambda X, H0, W: list(ops.gru_sequence(
        X, H0, c64([4, 4]), W, ops.constant(r), ops.constant(b), H, direction,
        linear_before_reset=True).outputs()), f32(batch, seq, n_in), f32(batch, d, H), w)
    check_model(m, feeds, tmp_path, rtol=1e-4)


def test_rnn_sequence(tmp_path):
    batch, seq, n_in = 2, 4, 3
    w, r, b = f32(1, H, n_in), f32(1, H, H), f32(1, H)
    m, feeds = one(lambda X, H0: list(ops.rnn_sequence(
        X, H0, c64([4, 2]), ops.constant(w), ops.constant(r), ops.constant(b), H, "reverse")
        .outputs()), f32(batch, seq, n_in), f32(batch, 1, H))
    check_model(m, feeds, tmp_path, rtol=1e-4)


def test_integer_divide_floors_as_openvino_reference(tmp_path):
    """``m_pythondiv`` (the default) floors. OpenVINO's reference evaluation (used for constant
    folding) floors; its CPU plugin truncates at run time, against the specification."""
    from itergraph.backends.numpy import run_graph
    from itergraph.frontends.openvino import read

    a = np.array([-7, -1, 7, 1, -6, 6, -8, 9], np.int32)
    b = np.array([2, 3, -2, -3, 4, -4, 3, -2], np.int32)
    d = ops.divide(ops.constant(a), ops.constant(b))
    want = [ov.Tensor(np.zeros(8, np.int32))]
    assert d.evaluate(want, [ov.Tensor(a), ov.Tensor(b)])
    np.testing.assert_array_equal(want[0].data, a // b)
    m, feeds = one(lambda x, y: ops.divide(x, y), a, b)
    ov.save_model(m, str(tmp_path / "div.xml"))
    (got,) = run_graph(read(tmp_path / "div.xml"), feeds).values()
    np.testing.assert_array_equal(got, want[0].data)
