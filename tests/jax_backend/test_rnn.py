"""LSTM, GRU and RNN ops (one lax.scan each) against the NumPy kernels and ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest
from jaxutil import compare, onnx_graph, vi
from onnx import TensorProto as T
from onnx import helper as h

rng = np.random.default_rng(7)


def _inputs(kind, direction, layout, seq=5, batch=3, inp=4, hidden=6, lens=None, init=True,
            peep=False):
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    xs = (batch, seq, inp) if layout else (seq, batch, inp)
    st = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    f = np.float32
    d = {"X": rng.standard_normal(xs).astype(f),
         "W": (rng.standard_normal((dirs, G * hidden, inp)) * 0.5).astype(f),
         "R": (rng.standard_normal((dirs, G * hidden, hidden)) * 0.5).astype(f),
         "B": (rng.standard_normal((dirs, 2 * G * hidden)) * 0.1).astype(f)}
    d["seq_lens"] = lens if lens is not None else None
    if init:
        d["initial_h"] = rng.standard_normal(st).astype(f)
        if kind == "LSTM":
            d["initial_c"] = rng.standard_normal(st).astype(f)
    if peep:
        d["P"] = rng.standard_normal((dirs, 3 * hidden)).astype(f)
    return d


def _graph(kind, inputs, attrs, n_out=3):
    order = ["X", "W", "R", "B", "seq_lens", "initial_h", "initial_c", "P"]
    if kind != "LSTM":
        order = order[:6]
    names = [k if inputs.get(k) is not None else "" for k in order]
    while names and names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h", "Y_c"][: (n_out if kind == "LSTM" else min(n_out, 2))]
    node = h.make_node(kind, names, outs, **attrs)
    feeds = {k: v for k, v in inputs.items() if v is not None}
    ins = [vi(k, h.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    g = onnx_graph([node], ins, [h.make_empty_tensor_value_info(o) for o in outs], opset=14)
    return g, feeds


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_cells_match_numpy(kind, direction, layout):
    d = _inputs(kind, direction, layout)
    attrs = {"hidden_size": 6, "direction": direction, "layout": layout}
    g, feeds = _graph(kind, d, attrs)
    compare(g, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens(kind, direction):
    lens = np.array([5, 2, 0], np.int32)
    d = _inputs(kind, direction, 0, lens=lens)
    g, feeds = _graph(kind, d, {"hidden_size": 6, "direction": direction})
    compare(g, feeds, rtol=1e-4, atol=1e-5)


def test_lstm_peepholes_clip_input_forget_and_activations():
    d = _inputs("LSTM", "bidirectional", 0, peep=True)
    attrs = {"hidden_size": 6, "direction": "bidirectional", "clip": 0.8, "input_forget": 1,
             "activations": ["HardSigmoid", "LeakyRelu", "Tanh", "Sigmoid", "ScaledTanh",
                             "Affine"],
             "activation_alpha": [0.3, 0.1, 0.7, 1.5], "activation_beta": [0.4, 0.6, 0.2]}
    g, feeds = _graph("LSTM", d, attrs)
    compare(g, feeds, rtol=1e-4, atol=1e-5)


def test_gru_linear_before_reset_without_bias_or_initial_state():
    d = _inputs("GRU", "forward", 0, init=False)
    d["B"] = None
    g, feeds = _graph("GRU", d, {"hidden_size": 6, "linear_before_reset": 1})
    compare(g, feeds, rtol=1e-4, atol=1e-5)


def test_lstm_matches_onnxruntime():
    import onnxruntime as ort

    d = _inputs("LSTM", "bidirectional", 0, lens=np.array([5, 3, 1], np.int32), peep=True)
    names = ["X", "W", "R", "B", "seq_lens", "initial_h", "initial_c", "P"]
    node = h.make_node("LSTM", names, ["Y", "Y_h", "Y_c"], hidden_size=6,
                       direction="bidirectional")
    ins = [vi(k, h.np_dtype_to_tensor_dtype(d[k].dtype), d[k].shape) for k in names]
    m = h.make_model(h.make_graph([node], "g", ins, [vi(o, T.FLOAT, None) for o in
                                                      ("Y", "Y_h", "Y_c")]),
                     opset_imports=[h.make_opsetid("", 14)], ir_version=8)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {k: d[k] for k in names})
    from itergraph.backends import jax as jb
    from itergraph.frontends.onnx import read

    got = jb.compile_graph(read(m)).run({k: d[k] for k in names})
    for g_, w_ in zip(got.values(), want):
        np.testing.assert_allclose(g_, w_, rtol=1e-4, atol=1e-5)


def test_lstm_cell_inside_a_scan_has_its_input_projection_hoisted():
    """OpenVINO's TensorIterator + LSTMCell pattern: an LSTM node of one step in a loop body.
    Its X W^T + Wb is computed for all iterations before the scan."""
    from jaxutil import compare as cmp

    from itergraph.ir import Carried, Concat, Graph, Last, Loop, Node, Sliced, Value, tensor

    H, I, T_ = 5, 3, 6
    X = Value("X", tensor("float32", (T_, 2, I)))
    h0 = Value("h0", tensor("float32", (2, H)))
    c0 = Value("c0", tensor("float32", (2, H)))
    body = Graph("body")
    xt = Value("xt", tensor("float32", (2, I)))
    hp = Value("hp", tensor("float32", (2, H)))
    cp = Value("cp", tensor("float32", (2, H)))
    body.inputs = [xt, hp, cp]

    def add(op, *ins, n=1, **attrs):
        return body.add(Node(op, ins, n, attrs, version=14)).outputs

    zero = Value("zero", const=np.array([0]))
    W = Value("W", const=(rng.standard_normal((1, 4 * H, I)) * 0.5).astype(np.float32))
    R = Value("R", const=(rng.standard_normal((1, 4 * H, H)) * 0.5).astype(np.float32))
    B = Value("B", const=(rng.standard_normal((1, 8 * H)) * 0.1).astype(np.float32))
    (x3,) = add("Unsqueeze", xt, zero)
    (h3,) = add("Unsqueeze", hp, zero)
    (c3,) = add("Unsqueeze", cp, zero)
    _, yh, yc = add("LSTM", x3, W, R, B, None, h3, c3, n=3, hidden_size=H)
    (hn,) = add("Squeeze", yh, zero)
    (cn,) = add("Squeeze", yc, zero)
    loop = Loop(body, [Sliced(X, xt), Carried(h0, hp, hn), Carried(c0, cp, cn)], name="TI")
    outs = [loop.add_output(Concat(hn, Value("Y"))), loop.add_output(Last(cn, Value("C")))]
    g = Graph("g", [X, h0, c0], outs, [loop], opset_imports={"": 14})
    feeds = {"X": rng.standard_normal((T_, 2, I)).astype(np.float32),
             "h0": np.zeros((2, H), np.float32), "c0": np.zeros((2, H), np.float32)}
    _, cg = cmp(g, feeds, rtol=1e-5, atol=1e-6)
    (rec,) = cg.explain()  # the loop is fused (passes.fuse_cells) into one node
    assert "RecurrentSequence" in rec.element and "input projection" in rec.reason
    from itergraph.backends.jax.program import CompiledGraph

    unfused = CompiledGraph(g, rewrite=False)
    unfused.run(feeds)
    (rec,) = unfused.explain()
    assert "1 matrix product(s)" in rec.reason
