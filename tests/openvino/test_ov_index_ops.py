"""GatherND, GatherElements, ScatterUpdate, ScatterElementsUpdate, OneHot, Roll, Bucketize, Eye
and VariadicSplit with run-time lengths, read from OpenVINO IR: one-op models built with
OpenVINO's Python API, OpenVINO the oracle, then itergraph's written IR run by OpenVINO again
(`check_model`)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino.opset1 as ops1
import openvino.opset3 as ops3
import openvino.opset5 as ops5
import openvino.opset6 as ops6
import openvino.opset7 as ops7
import openvino.opset8 as ops8
import openvino.opset9 as ops9
import openvino.opset12 as ops12
import pytest
from ov_helpers import check_model, run_itergraph, run_ov, save
from test_ov_order_ops import _model

import itergraph as ig

rng = np.random.default_rng(17)


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("version", [5, 8])
@pytest.mark.parametrize("batch_dims,ishape", [(0, (3, 2)), (0, (2, 1)), (1, (2, 2, 1)),
                                               (2, (2, 3, 1))])
def test_gather_nd(version, batch_dims, ishape, tmp_path):
    a = _f(2, 3, 4)
    idx = np.stack([rng.integers(0, a.shape[batch_dims + k], ishape[:-1])
                    for k in range(ishape[-1])], -1).astype(np.int32)
    ops = ops5 if version == 5 else ops8
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    i = ops.parameter(list(idx.shape), np.int32, name="i")
    g = ops.gather_nd(x, i, batch_dims)
    check_model(_model([g.output(0)], [x, i]), {"x": a, "i": idx}, tmp_path)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(axis, tmp_path):
    a = _f(3, 4)
    shape = [3, 4]
    shape[axis] = 2
    idx = rng.integers(0, a.shape[axis], shape).astype(np.int64)
    x = ops6.parameter([3, 4], np.float32, name="x")
    i = ops6.parameter(shape, np.int64, name="i")
    check_model(_model([ops6.gather_elements(x, i, axis).output(0)], [x, i]),
                {"x": a, "i": idx}, tmp_path)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_scatter_update_any_axis(axis, tmp_path):
    a = _f(3, 4, 5)
    idx = np.array([[2, 0]], np.int32)  # a rank-2 index tensor
    ax = axis % 3
    ushape = list(a.shape[:ax]) + list(idx.shape) + list(a.shape[ax + 1:])
    u = _f(*ushape)
    x = ops3.parameter([3, 4, 5], np.float32, name="x")
    uu = ops3.parameter(ushape, np.float32, name="u")
    s = ops3.scatter_update(x, ops3.constant(idx), uu, ops3.constant(np.int64(axis)))
    check_model(_model([s.output(0)], [x, uu]), {"x": a, "u": u}, tmp_path)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_update3(axis, tmp_path):
    a = _f(3, 4)
    shape = [3, 4]
    shape[axis] = 1
    idx = rng.integers(0, a.shape[axis], shape).astype(np.int32)
    x = ops3.parameter([3, 4], np.float32, name="x")
    u = ops3.parameter(shape, np.float32, name="u")
    s = ops3.scatter_elements_update(x, ops3.constant(idx), u, ops3.constant(np.int32(axis)))
    check_model(_model([s.output(0)], [x, u]), {"x": a, "u": _f(*shape)}, tmp_path)


@pytest.mark.parametrize("reduction", ["none", "sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("use_init_val", [True, False])
def test_scatter_elements_update12(reduction, use_init_val, tmp_path):
    a = _f(4, 3)
    idx = np.array([[1, 0, 3], [1, 2, 3], [0, 0, 3]], np.int64)  # repeated targets
    x = ops12.parameter([4, 3], np.float32, name="x")
    u = ops12.parameter([3, 3], np.float32, name="u")
    s = ops12.scatter_elements_update(x, ops12.constant(idx), u, ops12.constant(np.int64(0)),
                                      reduction=reduction, use_init_val=use_init_val)
    check_model(_model([s.output(0)], [x, u]), {"x": a, "u": _f(3, 3)}, tmp_path)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis, tmp_path):
    idx = np.array([[0, 2, -1], [3, 1, 5]], np.int32)  # -1 and 5 are out of range
    i = ops1.parameter([2, 3], np.int32, name="i")
    o = ops1.one_hot(i, ops1.constant(np.int64(4)), ops1.constant(np.float32(2.5)),
                     ops1.constant(np.float32(-1.0)), axis)
    check_model(_model([o.output(0)], [i]), {"i": idx}, tmp_path)


@pytest.mark.parametrize("shift,axes", [(2, 0), (-1, 1), ([1, 7], [0, 1]), ([1, 2], [-1, -1])])
def test_roll(shift, axes, tmp_path):
    a = _f(3, 5)
    x = ops7.parameter([3, 5], np.float32, name="x")
    r = ops7.roll(x, ops7.constant(np.array(shift, np.int64)),
                  ops7.constant(np.array(axes, np.int64)))
    check_model(_model([r.output(0)], [x]), {"x": a}, tmp_path)


def test_roll_scalar_shift_on_two_axes(tmp_path):
    """The spec applies a scalar shift to every axis; OpenVINO's CPU plugin refuses such a
    model (shift and axes of different lengths), so np.roll is the oracle."""
    a = _f(3, 5)
    x = ops7.parameter([3, 5], np.float32, name="x")
    r = ops7.roll(x, ops7.constant(np.int64(3)), ops7.constant(np.array([0, 1], np.int64)))
    path = save(_model([r.output(0)], [x]), tmp_path)
    with pytest.raises(RuntimeError, match="shiftDims"):
        run_ov(path, {"x": a})
    np.testing.assert_array_equal(run_itergraph(path, {"x": a})[0], np.roll(a, (3, 3), (0, 1)))


def test_roll_runtime_shift(tmp_path):
    a = _f(3, 5)
    x = ops7.parameter([3, 5], np.float32, name="x")
    s = ops7.parameter([2], np.int32, name="s")
    r = ops7.roll(x, s, ops7.constant(np.array([1, 0], np.int64)))
    check_model(_model([r.output(0)], [x, s]), {"x": a, "s": np.array([-6, 4], np.int32)},
                tmp_path)


@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize("out", ["i32", "i64"])
def test_bucketize(right, out, tmp_path):
    a = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, 9.0]], np.float32)
    x = ops3.parameter([2, 3], np.float32, name="x")
    bounds = ops3.constant(np.array([0.0, 1.0, 2.0], np.float32))
    r = ops3.bucketize(x, bounds, out, right)
    check_model(_model([r.output(0)], [x]), {"x": a}, tmp_path)


@pytest.mark.parametrize("rows,cols,diag", [(3, 3, 0), (2, 4, 1), (4, 2, -1), (3, 3, 5)])
@pytest.mark.parametrize("batch", [None, [2]])
def test_eye(rows, cols, diag, batch, tmp_path):
    n = ops9.parameter([], np.int64, name="n")
    args = [n, ops9.constant(np.int64(cols)), ops9.constant(np.int64(diag))]
    bs = None if batch is None else ops9.constant(np.array(batch, np.int64))
    e = ops9.eye(*args, "f32", batch_shape=bs)
    check_model(_model([e.output(0)], [n]), {"n": np.int64(rows)}, tmp_path)


@pytest.mark.parametrize("lengths", [[1, 3, 1], [2, -1, 1], [-1, 5, 0]])
@pytest.mark.parametrize("axis", [1, -1])
def test_variadic_split_runtime_lengths(lengths, axis, tmp_path):
    a = _f(2, 5)
    x = ops1.parameter([2, 5], np.float32, name="x")
    n = ops1.parameter([3], np.int64, name="n")
    s = ops1.variadic_split(x, ops1.constant(np.int64(axis)), n)
    check_model(_model([s.output(k) for k in range(3)], [x, n]),
                {"x": a, "n": np.array(lengths, np.int64)}, tmp_path)


def test_scalar_axes_written_to_onnx(tmp_path):
    """OpenVINO takes Squeeze/Unsqueeze/Reduce axes as scalars; the ONNX file itergraph writes
    from such IR must give them as vectors (ONNX Runtime refuses scalar axes)."""
    a = _f(3, 1, 4)
    x = ops1.parameter([3, 1, 4], np.float32, name="x")
    sq = ops1.squeeze(x, ops1.constant(np.int64(1)))
    r = ops1.reduce_sum(sq, ops1.constant(np.int64(0)), keep_dims=False)
    u = ops1.unsqueeze(r, ops1.constant(np.int64(1)))
    m = _model([u.output(0)], [x])
    feeds = {"x": a}
    path = save(m, tmp_path)
    want = run_ov(path, feeds)[0]
    ig.save(ig.load(path), tmp_path / "m.onnx")
    sess = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, feeds)[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("blank", [None, 0])
@pytest.mark.parametrize("types", [("i32", "i32"), ("i64", "i64")])
def test_ctc_greedy_decoder_seq_len(merge, blank, types, tmp_path):
    n, t, c = 3, 7, 4
    logits = rng.integers(0, 3, (n, t, c)).astype(np.float32)  # ties and repeats
    lens = np.array([7, 3, 0], np.int32)
    x = ops6.parameter([n, t, c], np.float32, name="x")
    s = ops6.parameter([n], np.int32, name="s")
    bi = None if blank is None else ops6.constant(np.int32(blank))
    d = ops6.ctc_greedy_decoder_seq_len(x, s, bi, merge, *types)
    check_model(_model([d.output(0), d.output(1)], [x, s]), {"x": logits, "s": lens}, tmp_path)
