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
from onnx_builders import I32, const, model, run_ort, vi

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


LENS_CASES = [
    ("LSTM", {}), ("LSTM", {"direction": "reverse", "clip": 0.7}),
    ("LSTM", {"direction": "bidirectional", "layout": 1}),
    ("GRU", {"linear_before_reset": 1, "direction": "bidirectional"}),
    ("GRU", {"direction": "reverse"}), ("RNN", {"activations": ["Relu"]}),
    ("RNN", {"direction": "reverse", "layout": 1}),
]


def _lens_case(op, attrs, lens, as_input, T=9, I=3, H=4, seed=1):
    """`op` with `sequence_lens` (a graph input, or an initializer), initial states given."""
    rng = np.random.default_rng(seed)
    batch = len(lens)
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    layout = attrs.get("layout", 0)

    def draw(shape, scale=1.0):  # time-major numbers, made batch-first when `layout` is 1
        a = (scale * rng.standard_normal(shape)).astype(np.float32)
        return a.transpose(1, 0, 2) if layout else a

    feeds = {"X": draw([T, batch, I]), "initial_h": draw([dirs, batch, H], 0.5)}
    ss = list(feeds["initial_h"].shape)
    inits = [const("W", 0.6 * rng.standard_normal((dirs, G[op] * H, I)), np.float32),
             const("R", 0.6 * rng.standard_normal((dirs, G[op] * H, H)), np.float32),
             const("B", 0.3 * rng.standard_normal((dirs, 2 * G[op] * H)), np.float32)]
    names = ["X", "W", "R", "B", "L", "initial_h"]
    if op == "LSTM":
        feeds["initial_c"] = draw([dirs, batch, H], 0.5)
        names.append("initial_c")
    inputs = [vi(n, 1, list(feeds[n].shape)) for n in names if n in feeds]
    lens = np.asarray(lens, np.int32)
    if as_input:
        feeds["L"] = lens
        inputs.append(vi("L", I32, [batch]))
    else:
        inits.append(const("L", lens))
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = h.make_node(op, names, outs, hidden_size=H, **attrs)
    shapes = {"Y": [batch, T, dirs, H] if layout else [T, dirs, batch, H], "Y_h": ss, "Y_c": ss}
    m = model([node], inputs, [vi(o, 1, shapes[o]) for o in outs], inits, opset=14)
    return m, feeds


@pytest.mark.parametrize("op,attrs", LENS_CASES)
@pytest.mark.parametrize("lens,as_input", [([9, 0, 4, 9, 1], True), ([3, 7, 3], False),
                                           ([9, 9], True), ([5], False)])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_sequence_lens_on_the_fast_steps(op, attrs, lens, as_input, backend):
    """Entries of other lengths (zero and full ones among them) run on the in-place steps
    (NumPy: the steps between distinct lengths over the entries still going) and the scans
    (JAX: masked per entry), in every direction and layout, against ONNX Runtime; an entry
    of length zero ends with zero states, as in ONNX Runtime and OpenVINO."""
    m, feeds = _lens_case(op, attrs, lens, as_input)
    got = ig.load(m).run(feeds, backend=backend)
    if attrs.get("layout"):  # ONNX Runtime has no batch-first kernels: its time-major run
        m0, feeds0 = _lens_case(op, {**attrs, "layout": 0}, lens, as_input)
        assert np.array_equal(feeds0["X"], feeds["X"].transpose(1, 0, 2))
        want = run_ort(m0, feeds0)
        want = {k: v.transpose(2, 0, 1, 3) if k == "Y" else v.transpose(1, 0, 2)
                for k, v in want.items()}
    else:
        want = run_ort(m, feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)
