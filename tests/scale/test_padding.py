"""`analysis.padding`: a graph whose input is padded along an axis, run with any values in the
padding and cut back, gives ONNX Runtime's outputs on the unpadded input; graphs where the
padding would change a result get no plan. The JAX engine runs a stream of lengths on a few
padded programs (`backends.jax.padded_calls`) with ONNX Runtime's results."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.analysis.padding import VALID_LENGTH, bucket, plan_padding
from itergraph.backends.numpy import CompileContext, run_plan
from onnx_builders import I64, F, const, vi

RNG = np.random.default_rng(11)


def model(nodes, inputs, outputs, inits=()):
    """A model whose outputs may name only their element type (ONNX's full check wants more)."""
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21)], ir_version=10)
HID, INP = 5, 6


def _w(*shape):
    return RNG.normal(0, 0.5, shape).astype(np.float32)


def _cell(op="LSTM", layout=0, direction="forward", name="cell"):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    dirs = 2 if direction == "bidirectional" else 1
    node = h.make_node(op, ["X", f"{name}_W", f"{name}_R", f"{name}_B"], ["Y", "Yh"],
                       hidden_size=HID, layout=layout, direction=direction, name=name)
    inits = [const(f"{name}_W", _w(dirs, gates * HID, INP)),
             const(f"{name}_R", _w(dirs, gates * HID, HID)),
             const(f"{name}_B", _w(dirs, 2 * gates * HID))]
    return node, inits


def _cell_model(op="LSTM", layout=0, direction="forward"):
    node, inits = _cell(op, layout, direction)
    x = ["N", "T", INP] if layout else ["T", "N", INP]
    return model([node], [vi("X", F, x)], [vi("Y", F, None), vi("Yh", F, None)], inits)


def _conv_lstm_model():
    """silero VAD v6's shape of work: frames as a batch of 1-D convolutions, then an LSTM over
    the frames, a pointwise convolution over its steps and a Reshape to one score per frame."""
    nodes = [
        h.make_node("Pad", ["X", "pads"], ["P"], mode="reflect"),
        h.make_node("Unsqueeze", ["P", "one"], ["U"]),
        h.make_node("Conv", ["U", "cw", "cb"], ["C"], kernel_shape=[4], strides=[2]),
        h.make_node("Relu", ["C"], ["R"]),
        h.make_node("ReduceMean", ["R", "two"], ["M"], keepdims=0),
        h.make_node("Unsqueeze", ["M", "one"], ["X1"]),
        h.make_node("LSTM", ["X1", "W", "Rw", "", "", "h0"], ["Y", "hn"], hidden_size=HID),
        h.make_node("Squeeze", ["Y", "one"], ["S"]),
        h.make_node("Transpose", ["S"], ["St"], perm=[1, 2, 0]),
        h.make_node("Conv", ["St", "pw"], ["Pc"], kernel_shape=[1]),
        h.make_node("Sigmoid", ["Pc"], ["Sg"]),
        h.make_node("Reshape", ["Sg", "flat"], ["probs"]),
    ]
    inits = [const("pads", np.array([0, 2, 0, 2], np.int64)), const("one", np.array([1], np.int64)),
             const("two", np.array([2], np.int64)), const("cw", _w(INP, 1, 4)),
             const("cb", _w(INP)), const("W", _w(1, 4 * HID, INP)),
             const("Rw", _w(1, 4 * HID, HID)), const("pw", _w(1, HID, 1)),
             const("flat", np.array([-1], np.int64))]
    return model(nodes, [vi("X", F, ["T", 12]), vi("h0", F, [1, 1, HID])],
                 [vi("probs", F, ["T"]), vi("hn", F, [1, 1, HID])], inits)


def _batch_conv_model():
    nodes = [h.make_node("Conv", ["X", "cw"], ["C"], kernel_shape=[3], pads=[1, 1]),
             h.make_node("MaxPool", ["C"], ["Y"], kernel_shape=[2], strides=[2]),
             h.make_node("Flatten", ["Y"], ["Fl"]),
             h.make_node("Gemm", ["Fl", "G"], ["out"])]
    return model(nodes, [vi("X", F, ["N", 3, 8])], [vi("out", F, ["N", 2])],
                 [const("cw", _w(4, 3, 3)), const("G", _w(16, 2))])


ADMITTED = {  # name -> (model, input, axis)
    "lstm-time": (lambda: _cell_model(), "X", 0),
    "lstm-time-layout1": (lambda: _cell_model(layout=1), "X", 1),
    "lstm-bidirectional": (lambda: _cell_model(direction="bidirectional"), "X", 0),
    "lstm-reverse": (lambda: _cell_model(direction="reverse"), "X", 0),
    "gru-time": (lambda: _cell_model("GRU"), "X", 0),
    "rnn-time": (lambda: _cell_model("RNN"), "X", 0),
    "lstm-batch": (lambda: _cell_model(), "X", 1),
    "conv-lstm-frames": (_conv_lstm_model, "X", 0),
    "conv-batch": (_batch_conv_model, "X", 0),
}


def _feeds(name, n):
    m, inp, axis = ADMITTED[name]
    shape = {"conv-lstm-frames": [n, 12], "conv-batch": [n, 3, 8]}.get(name)
    if shape is None:
        shape = [n, 2, INP] if axis == 0 else [2, n, INP]
    feeds = {"X": RNG.normal(size=shape).astype(np.float32)}
    if name == "conv-lstm-frames":
        feeds["h0"] = _w(1, 1, HID)
    return feeds


def _ort(proto, feeds):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), so)
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


@pytest.mark.parametrize("name", sorted(ADMITTED))
def test_padded_runs_cut_back_give_onnx_runtimes_outputs(name):
    build, inp, axis = ADMITTED[name]
    proto = build()
    plan = plan_padding(ig.load(proto).graph, inp, axis)
    assert plan is not None
    numpy_plan = CompileContext().compile(plan.graph)
    for n in (1, 3, 5, 8):
        feeds = _feeds(name, n)
        # ONNX Runtime runs no LSTM of layout 1: there the NumPy reference unpadded is the oracle
        want = ig.load(proto).run(feeds) if name == "lstm-time-layout1" else _ort(proto, feeds)
        padded, length = plan.feeds(feeds)
        assert length == n and padded[VALID_LENGTH] == n
        assert padded[inp].shape[axis] == bucket(n)
        garbage = RNG.normal(size=padded[inp].shape).astype(np.float32) * 100
        cut = (slice(None),) * axis + (slice(n, None),)
        padded[inp][cut] = garbage[cut]  # any values in the padding
        got = plan.unpad(run_plan(numpy_plan, padded), n)
        for out, w in want.items():
            assert got[out].shape == w.shape, out
            np.testing.assert_allclose(got[out], w, rtol=1e-5, atol=1e-5, err_msg=out)


REFUSED = {  # name -> (nodes, inits, input shape, axis)
    "sum-over-time": ([h.make_node("ReduceSum", ["X", "a"], ["Y"], keepdims=1)],
                      [const("a", np.array([0], np.int64))], ["T", 4], 0),
    "softmax-over-time": ([h.make_node("Softmax", ["X"], ["Y"], axis=0)], [], ["T", 4], 0),
    "conv-window-along-time": ([h.make_node("Conv", ["X", "w"], ["Y"], kernel_shape=[3])],
                               [const("w", _w(2, 2, 3))], [1, 2, "T"], 2),
    "shape-as-number": ([h.make_node("Shape", ["X"], ["S"]),
                         h.make_node("Cast", ["S"], ["Y"], to=1)], [], ["T", 4], 0),
    "fixed-extent": ([h.make_node("Relu", ["X"], ["Y"])], [], [8, 4], 0),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_no_plan_where_padding_would_change_a_result(name):
    nodes, inits, shape, axis = REFUSED[name]
    proto = model(nodes, [vi("X", F, shape)], [vi("Y", F, None)], inits)
    assert plan_padding(ig.load(proto).graph, "X", axis) is None


def test_a_cell_with_lengths_of_its_own_gets_no_plan():
    node = h.make_node("LSTM", ["X", "W", "R", "", "L"], ["Y"], hidden_size=HID)
    proto = model([node], [vi("X", F, ["T", 2, INP]), vi("L", h.TensorProto.INT32, [2])],
                  [vi("Y", F, None)],
                  [const("W", _w(1, 4 * HID, INP)), const("R", _w(1, 4 * HID, HID))])
    assert plan_padding(ig.load(proto).graph, "X", 0) is None


LENGTHS = [37, 12, 13, 50, 64, 1, 2, 3, 37, 5, 9, 17, 33, 20, 21, 22]


@pytest.mark.parametrize("backend", ["jax", "auto"])
def test_a_stream_of_lengths_compiles_per_power_of_two(backend):
    pytest.importorskip("jax")
    proto = _cell_model()
    m = ig.load(proto)
    sess = m.compile(backend=backend)
    frames = RNG.normal(size=(64, 2, INP)).astype(np.float32)
    for n in LENGTHS:
        feeds = {"X": frames[:n]}
        got = sess.run(feeds)
        for out, w in _ort(proto, feeds).items():
            assert got[out].shape == w.shape
            np.testing.assert_allclose(got[out], w, rtol=1e-5, atol=1e-5)
    if backend == "auto":
        sess._call.wait()
        for n in LENGTHS:  # compiled buckets answer now, on whichever engine is faster
            got = sess.run({"X": frames[:n]})
            np.testing.assert_allclose(got["Yh"], _ort(proto, {"X": frames[:n]})["Yh"],
                                       rtol=1e-5, atol=1e-5)
    # the first length exactly, then one program per power of two the others fall in
    buckets = {bucket(n) for n in LENGTHS[1:]}
    assert m.jax_compiled().compiled_signatures <= 1 + len(buckets)


def test_a_stream_that_cannot_be_padded_compiles_each_length():
    pytest.importorskip("jax")
    proto = model([h.make_node("CumSum", ["X", "a"], ["Y"])], [vi("X", F, ["T", 3])],
                  [vi("Y", F, None)], [const("a", np.array(0, np.int64))])
    m = ig.load(proto)
    sess = m.compile(backend="jax")
    for n in (3, 5, 6):
        x = RNG.normal(size=(n, 3)).astype(np.float32)
        np.testing.assert_allclose(sess.run({"X": x})["Y"], np.cumsum(x, axis=0), rtol=1e-5)
    assert m.jax_compiled().compiled_signatures == 3


def test_a_model_with_an_input_named_like_the_valid_length_gets_no_plan():
    proto = model([h.make_node("Relu", ["X"], ["Y"])],
                  [vi("X", F, ["T", 2]), vi(VALID_LENGTH, I64, [])], [vi("Y", F, None)])
    assert plan_padding(ig.load(proto).graph, "X", 0) is None
