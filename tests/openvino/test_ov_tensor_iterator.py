"""TensorIterator-1 models built with OpenVINO's Python API: read, run, compare, write back."""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops
from ov_helpers import check_model, run_ov, save

from itergraph.frontends.openvino import read
from itergraph.ir import Loop, Sliced

rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _lstm_ti(reverse: bool, batch=2, seq=5, n_in=3, hs=4):
    X = ops.parameter([batch, seq, n_in], np.float32, name="X")
    H0 = ops.parameter([batch, hs], np.float32, name="H0")
    C0 = ops.parameter([batch, hs], np.float32, name="C0")
    xi = ops.parameter([batch, 1, n_in], np.float32, name="xi")
    hi = ops.parameter([batch, hs], np.float32, name="hi")
    ci = ops.parameter([batch, hs], np.float32, name="ci")
    x2 = ops.squeeze(xi, ops.constant(np.array([1], np.int64)))
    cell = ops.lstm_cell(x2, hi, ci, ops.constant(rand(4 * hs, n_in)),
                         ops.constant(rand(4 * hs, hs)), ops.constant(rand(4 * hs)), hs)
    rh, rc = ops.result(cell.output(0)), ops.result(cell.output(1))
    ry = ops.result(ops.unsqueeze(cell.output(0), ops.constant(np.array([1], np.int64))))
    body = ov.Model([rh, rc, ry], [xi, hi, ci], "body")
    ti = ops.tensor_iterator()
    ti.set_body(body)
    if reverse:
        ti.set_sliced_input(xi, X.output(0), -1, -1, 1, 0, 1)
    else:
        ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, H0.output(0), rh.output(0))
    ti.set_merged_input(ci, C0.output(0), rc.output(0))
    outs = [ti.get_iter_value(rh.output(0), -1), ti.get_iter_value(rc.output(0), -1),
            ti.get_concatenated_slices(ry.output(0), -1 if reverse else 0,
                                       -1 if reverse else 1, 1, 0 if reverse else -1, 1)]
    m = ov.Model(outs, [X, H0, C0], "lstm_ti")
    feeds = {"X": rand(batch, seq, n_in), "H0": rand(batch, hs), "C0": rand(batch, hs)}
    return m, feeds


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_cell_body(tmp_path, reverse):
    m, feeds = _lstm_ti(reverse)
    g, _ = check_model(m, feeds, tmp_path)
    loop = g.nodes[-1]
    assert isinstance(loop, Loop) and loop.origin == "openvino.TensorIterator"
    (s,) = loop.sliced
    assert s.keep_axis and s.axis == 1 and s.reverse == reverse
    assert len(loop.carried) == 2
    ops_in_body = {n.op_type for n in loop.body.nodes}
    assert "LSTM" in ops_in_body  # translated into the ONNX vocabulary


def test_gru_cell_body_linear_before_reset(tmp_path):
    batch, seq, n_in, hs = 2, 4, 3, 5
    X = ops.parameter([batch, seq, n_in], np.float32, name="X")
    H0 = ops.parameter([batch, hs], np.float32, name="H0")
    xi = ops.parameter([batch, 1, n_in], np.float32, name="xi")
    hi = ops.parameter([batch, hs], np.float32, name="hi")
    x2 = ops.reshape(xi, ops.constant(np.array([0, -1], np.int64)), True)
    cell = ops.gru_cell(x2, hi, ops.constant(rand(3 * hs, n_in)), ops.constant(rand(3 * hs, hs)),
                        ops.constant(rand(4 * hs)), hs, linear_before_reset=True)
    rh = ops.result(cell.output(0))
    body = ov.Model([rh], [xi, hi], "body")
    ti = ops.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, H0.output(0), rh.output(0))
    m = ov.Model([ti.get_iter_value(rh.output(0), -1)], [X, H0], "gru_ti")
    check_model(m, {"X": rand(batch, seq, n_in), "H0": rand(batch, hs)}, tmp_path)


def test_rnn_cell_with_invariant_input_and_part_size_2(tmp_path):
    batch, seq, n_in, hs = 2, 6, 3, 4
    X = ops.parameter([batch, seq, n_in], np.float32, name="X")
    H0 = ops.parameter([batch, hs], np.float32, name="H0")
    Bias = ops.parameter([hs], np.float32, name="Bias")
    xi = ops.parameter([batch, 2, n_in], np.float32, name="xi")
    hi = ops.parameter([batch, hs], np.float32, name="hi")
    bi = ops.parameter([hs], np.float32, name="bi")
    x2 = ops.reduce_sum(xi, ops.constant(np.array([1], np.int64)), False)  # [batch, n_in]
    cell = ops.rnn_cell(x2, hi, ops.constant(rand(hs, n_in)), ops.constant(rand(hs, hs)), bi, hs,
                         ["tanh"], [], [])
    rh = ops.result(cell.output(0))
    body = ov.Model([rh], [xi, hi, bi], "body")
    ti = ops.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(xi, X.output(0), -1, -2, 2, 0, 1)  # backwards in pairs
    ti.set_merged_input(hi, H0.output(0), rh.output(0))
    ti.set_invariant_input(bi, Bias.output(0))
    m = ov.Model([ti.get_iter_value(rh.output(0), -1)], [X, H0, Bias], "rnn_ti")
    g, _ = check_model(m, {"X": rand(batch, seq, n_in), "H0": rand(batch, hs),
                           "Bias": rand(hs)}, tmp_path)
    loop = g.nodes[-1]
    assert loop.sliced[0].part_size == 2 and loop.sliced[0].stride == -2
    assert len(loop.invariant) == 1


def _slice_model(dim: int, part: int, start: int, end: int, stride: int):
    X = ops.parameter([1, dim], np.float32, name="X")
    xi = ops.parameter([1, part], np.float32, name="xi")
    r = ops.result(ops.multiply(xi, ops.constant(np.float32(2))))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([r], [xi], "body"))
    ti.set_sliced_input(xi, X.output(0), start, stride, part, end, 1)
    o = ti.get_concatenated_slices(r.output(0), 0, part, part, -1, 1)
    return ov.Model([o], [X], "slices")


@pytest.mark.parametrize("dim,part,start,end,stride", [
    (6, 1, 0, -1, 1), (6, 1, -1, 0, -1), (6, 2, 0, -1, 2), (6, 2, -1, 0, -2),
    (6, 3, -1, 0, -3), (7, 2, 0, -2, 2), (6, 1, 0, -2, 1), (6, 2, 0, 4, 2), (6, 1, -1, 1, -1),
])
def test_sliced_fence_posts_match_openvino(tmp_path, dim, part, start, end, stride):
    """The canonical `Sliced` semantics (fence posts, -1 = end of axis) against OpenVINO."""
    m = _slice_model(dim, part, start, end, stride)
    x = np.arange(dim, dtype=np.float32)[None]
    want = run_ov(save(m, tmp_path), {"X": x})[0]
    s = Sliced(None, None, axis=1, start=start, end=end, stride=stride, part_size=part,
               keep_axis=True)
    pieces = [x[:, s.piece_start(k, dim):s.piece_start(k, dim) + part] * 2
              for k in range(s.count(dim))]
    np.testing.assert_array_equal(np.concatenate(pieces, axis=1), want)
    check_model(m, {"X": x}, tmp_path)


def test_concatenated_output_reversed_and_zero_length_axis(tmp_path):
    X = ops.parameter([3, -1], np.float32, name="X")
    xi = ops.parameter([3, 1], np.float32, name="xi")
    r = ops.result(ops.add(xi, ops.constant(np.float32(1))))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([r], [xi], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    o = ti.get_concatenated_slices(r.output(0), -1, -1, 1, 0, 1)
    m = ov.Model([o], [X], "rev")
    check_model(m, {"X": rand(3, 5)}, tmp_path)  # dynamic sequence length
    g = read(save(m, tmp_path))
    from itergraph.backends.numpy import run_graph

    out = run_graph(g, {"X": np.zeros((3, 0), np.float32)})
    assert next(iter(out.values())).shape == (3, 0)  # zero iterations


def test_without_sliced_inputs_iterates_as_openvino(tmp_path):
    H = ops.parameter([2], np.float32, name="H")
    hi = ops.parameter([2], np.float32, name="hi")
    h2 = ops.add(hi, ops.constant(np.float32(1)))
    rh = ops.result(h2)
    ry = ops.result(ops.unsqueeze(h2, ops.constant(np.array([0]))))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rh, ry], [hi], "body"))
    ti.set_merged_input(hi, H.output(0), rh.output(0))
    m = ov.Model([ti.get_iter_value(rh.output(0), -1),
                  ti.get_concatenated_slices(ry.output(0), 0, 1, 1, 4, 0)], [H], "count")
    check_model(m, {"H": rand(2)}, tmp_path)
