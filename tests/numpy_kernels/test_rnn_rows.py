"""LSTM over a batch of one on NumPy (`rnn_rows`: gates from one product of ``[h, x, 1]``,
reordered gates) against ONNX Runtime: with and without bias and initial states, clip, both
directions, ``sequence_lens``, one step, constant weights (the prepared matrix kept between
calls) and weights fed as inputs that change between calls; an input wider than the state
takes the general steps."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.backends.numpy.kernels import rnn_rows
from onnx_builders import run_ort

rng = np.random.default_rng(3)


def _lstm(I, H, steps, *, direction="forward", bias=True, states=True, clip=None,
          lens=False, weights_as_inputs=False):
    dirs = 2 if direction == "bidirectional" else 1
    arrays = {"W": 0.5 * rng.standard_normal((dirs, 4 * H, I)),
              "R": 0.5 * rng.standard_normal((dirs, 4 * H, H))}
    if bias:
        arrays["B"] = 0.3 * rng.standard_normal((dirs, 8 * H))
    feeds = {"X": rng.standard_normal((steps, 1, I))}
    if states:
        feeds["h0"] = 0.5 * rng.standard_normal((dirs, 1, H))
        feeds["c0"] = 0.5 * rng.standard_normal((dirs, 1, H))
    feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    consts = {}
    if lens:
        consts["lens"] = np.array([max(steps - 2, 1)], np.int32)
    if weights_as_inputs:
        feeds.update(arrays)
    else:
        consts.update(arrays)
    names = ["X", "W", "R", "B" if bias else "", "lens" if lens else "",
             "h0" if states else "", "c0" if states else ""]
    attrs = {"hidden_size": H, "direction": direction, **({"clip": clip} if clip else {})}
    node = h.make_node("LSTM", names, ["Y", "Y_h", "Y_c"], **attrs)
    ins = [h.make_tensor_value_info(k, T.FLOAT, list(v.shape)) for k, v in feeds.items()]
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("Y", "Y_h", "Y_c")]
    g = h.make_graph([node], "g", ins, outs,
                     [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)], ir_version=8), feeds


def _same(got, want):
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("kw", [
    {}, {"bias": False, "states": False}, {"clip": 0.7}, {"direction": "reverse"},
    {"direction": "bidirectional", "lens": True}, {"steps": 1},
])
def test_batch_of_one_matches_onnx_runtime(monkeypatch, kw):
    kw = {"steps": 9, **kw}
    m, feeds = _lstm(6, 8, kw.pop("steps"), **kw)
    calls = []
    run = rnn_rows.run
    monkeypatch.setattr(rnn_rows, "run", lambda *a: calls.append(1) or run(*a))
    sess = ig.load(m).compile("numpy")
    for _ in range(2):  # the second call reads the kept matrix
        _same(sess.run(feeds), run_ort(m, feeds))
        feeds["X"] = rng.standard_normal(feeds["X"].shape).astype(np.float32)
    assert calls


def test_weights_fed_as_inputs_change_between_calls():
    m, feeds = _lstm(4, 5, 6, weights_as_inputs=True)
    sess = ig.load(m).compile("numpy")
    for _ in range(3):
        _same(sess.run(feeds), run_ort(m, feeds))
        for k in ("W", "R", "B"):  # in place: the same array objects, new values
            feeds[k] += (0.1 * rng.standard_normal(feeds[k].shape)).astype(np.float32)


def test_input_wider_than_the_state_takes_the_general_steps(monkeypatch):
    m, feeds = _lstm(12, 4, 5)
    monkeypatch.setattr(rnn_rows, "run", None)  # would fail if called
    _same(ig.load(m).run(feeds, backend="numpy"), run_ort(m, feeds))


@pytest.mark.parametrize("states", [True, False])
def test_a_constant_cell_over_one_sequence_prepares_its_matrix_once(monkeypatch, states):
    """`rnn._one_row`: a forward LSTM with constant weights over a batch of one builds the
    step matrix on its first call only; every call's outputs are its own arrays."""
    m, feeds = _lstm(5, 7, 6, states=states)
    built = []
    augmented = rnn_rows.augmented
    monkeypatch.setattr(rnn_rows, "augmented", lambda *a: built.append(1) or augmented(*a))
    sess = ig.load(m).compile("numpy")
    firsts = []
    for _ in range(3):
        got = sess.run(feeds)
        _same(got, run_ort(m, feeds))
        firsts.append({k: v.copy() for k, v in got.items()})
        assert all(v.flags.c_contiguous and v.flags.writeable for v in got.values())
        got["Y"][...] = np.nan  # the caller's: the next call does not see it
        feeds["X"] = rng.standard_normal(feeds["X"].shape).astype(np.float32)
    assert len(built) == 1
    assert not np.array_equal(firsts[0]["Y"], firsts[1]["Y"])
