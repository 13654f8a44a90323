"""The in-place recurrent steps (NumPy) and the per-gate/row-block scans (JAX) against ONNX
Runtime: LSTM without peepholes, GRU both ways, RNN with each activation they special-case,
with clip, both directions, a batch of one (matrix-vector steps), float64, and the input
projection computed chunk by chunk."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
import itergraph.backends.jax.ops.rnn_scan as jax_steps
import itergraph.backends.numpy.kernels.rnn_steps as numpy_steps
from onnx_builders import model, run_ort, vi

G = {"LSTM": 4, "GRU": 3, "RNN": 1}
CASES = [
    ("LSTM", {}, 3), ("LSTM", {"clip": 0.6, "direction": "bidirectional"}, 1),
    ("GRU", {"linear_before_reset": 1, "clip": 0.8}, 1), ("GRU", {"direction": "reverse"}, 4),
    ("RNN", {"activations": ["Relu"], "clip": 0.9}, 2), ("RNN", {"activations": ["Sigmoid"]}, 1),
]


def _case(op, attrs, batch, T=13, I=3, H=5, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    feeds = {"X": rng.standard_normal((T, batch, I)),
             "W": 0.6 * rng.standard_normal((dirs, G[op] * H, I)),
             "R": 0.6 * rng.standard_normal((dirs, G[op] * H, H)),
             "B": 0.3 * rng.standard_normal((dirs, 2 * G[op] * H)),
             "initial_h": 0.5 * rng.standard_normal((dirs, batch, H))}
    names = ["X", "W", "R", "B", "", "initial_h"]
    if op == "LSTM":
        feeds["initial_c"] = 0.5 * rng.standard_normal((dirs, batch, H))
        names.append("initial_c")
    feeds = {k: v.astype(dtype) for k, v in feeds.items()}
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = h.make_node(op, names, outs, hidden_size=H, **attrs)
    code = 11 if dtype == np.float64 else 1
    shapes = {"Y": [T, dirs, batch, H], "Y_h": [dirs, batch, H], "Y_c": [dirs, batch, H]}
    m = model([node], [vi(n, code, list(feeds[n].shape)) for n in names if n],
              [vi(o, code, shapes[o]) for o in outs], opset=14)
    return m, feeds


@pytest.mark.parametrize("op,attrs,batch", CASES)
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_fast_steps_match_onnxruntime(op, attrs, batch, backend):
    m, feeds = _case(op, attrs, batch)
    got, want = ig.load(m).run(feeds, backend=backend), run_ort(m, feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_projection_in_chunks_with_a_tail(backend, monkeypatch):
    """37 steps in chunks of a few steps (the last chunk shorter), on both backends."""
    monkeypatch.setattr(numpy_steps, "CHUNK_BYTES", 256)
    monkeypatch.setattr(jax_steps, "CHUNK_BYTES", 256)
    monkeypatch.setattr(jax_steps, "CHUNK_ABOVE", 256)
    for op, attrs, batch in (CASES[0], CASES[2]):
        m, feeds = _case(op, attrs, batch, T=37)
        got, want = ig.load(m).run(feeds, backend=backend), run_ort(m, feeds)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_float64_cells_on_numpy():
    """float64 runs the same steps in float64 (ONNX Runtime's LSTM has no double kernel:
    compared with its float32 run, at float32 tolerance)."""
    for op, attrs, batch in CASES[::2]:
        m, feeds = _case(op, attrs, batch, dtype=np.float64)
        m32, feeds32 = _case(op, attrs, batch)
        got, want = ig.load(m).run(feeds), run_ort(m32, feeds32)
        for k in want:
            assert got[k].dtype == np.float64
            np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)
