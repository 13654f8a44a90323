"""ONNX forms written to OpenVINO IR that once went wrong: OpenVINO's CPU plugin (f32) on
itergraph's IR computes ONNX Runtime's outputs on the original file.

- an LSTM with peepholes (input ``P``), in every direction;
- an LSTM, GRU or RNN with sequence lengths on input shapes known only at run time;
- a Pad whose pads and constant value come from ``Constant`` nodes, not initializers;
- an If inside an If inside a Loop body (OpenVINO once crashed compiling it);
- a reduction of a 3-D value's last axis without ``keepdims``, then an elementwise op with a
  per-column constant (skl2onnx's ``GaussianNB``: the CPU plugin broadcast the constant along
  the wrong axis);
- a Pad in mode ``wrap`` (circular padding: torch's dynamo export of ``padding_mode=
  "circular"``), which OpenVINO's Pad has no mode for."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from ov_helpers import run_ov

import itergraph as ig

rng = np.random.default_rng(11)


def _agree(m: onnx.ModelProto, feeds: dict, tmp_path, tol=1e-5) -> None:
    onnx.checker.check_model(m, full_check=True)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    got = run_ov(xml, feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {i}: shape {g.shape}, ONNX Runtime {w.shape}"
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"output {i}")


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_with_peepholes(direction, tmp_path):
    d, hidden, feat, steps, batch = (2 if direction == "bidirectional" else 1), 4, 3, 5, 2
    inits = [nh.from_array(rng.normal(size=s).astype(np.float32) * 0.5, n) for n, s in
             (("W", (d, 4 * hidden, feat)), ("R", (d, 4 * hidden, hidden)),
              ("B", (d, 8 * hidden)), ("P", (d, 3 * hidden)))]
    node = h.make_node("LSTM", ["X", "W", "R", "B", "", "", "", "P"], ["Y", "Yh", "Yc"],
                       hidden_size=hidden, direction=direction)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, [steps, batch, feat])],
                     [h.make_tensor_value_info("Y", T.FLOAT, [steps, d, batch, hidden]),
                      h.make_tensor_value_info("Yh", T.FLOAT, [d, batch, hidden]),
                      h.make_tensor_value_info("Yc", T.FLOAT, [d, batch, hidden])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    _agree(m, {"X": rng.normal(size=(steps, batch, feat)).astype(np.float32)}, tmp_path)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_from_constant_nodes(mode, tmp_path):
    nodes = [h.make_node("Constant", [], ["pads"], value=nh.from_array(
                 np.array([0, 1, 2, 0, 2, 1], np.int64))),
             h.make_node("Constant", [], ["cv"], value=nh.from_array(np.array(-3.5, np.float32))),
             h.make_node("Pad", ["x", "pads", "cv" if mode == "constant" else ""], ["y"],
                         mode=mode)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 6, 7])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    _agree(m, {"x": rng.normal(size=(2, 3, 4)).astype(np.float32)}, tmp_path)


def _branch(name: str, nodes, out: str) -> onnx.GraphProto:
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(out, T.FLOAT, [3])])


def test_if_inside_if_inside_loop(tmp_path):
    """Per iteration i: ``s + x`` when i is even, else ``s * 2`` when i > 2, else ``s - x``."""
    inner = h.make_node(
        "If", ["big"], ["r_inner"],
        then_branch=_branch("twice", [h.make_node("Mul", ["s", "two"], ["t1"])], "t1"),
        else_branch=_branch("minus", [h.make_node("Sub", ["s", "x"], ["t2"])], "t2"))
    outer = h.make_node(
        "If", ["even"], ["r"],
        then_branch=_branch("plus", [h.make_node("Add", ["s", "x"], ["t0"])], "t0"),
        else_branch=_branch("odd", [h.make_node("Greater", ["i", "two_i"], ["big"]), inner,
                                    h.make_node("Identity", ["r_inner"], ["t3"])], "t3"))
    body = h.make_graph(
        [h.make_node("Mod", ["i", "two_i"], ["rem"]),
         h.make_node("Equal", ["rem", "zero_i"], ["even"]), outer,
         h.make_node("Identity", ["c"], ["c_out"]), h.make_node("Identity", ["r"], ["scan"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("s", T.FLOAT, [3])],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("r", T.FLOAT, [3]),
         h.make_tensor_value_info("scan", T.FLOAT, [3])])
    loop = h.make_node("Loop", ["n", "", "s0"], ["sf", "ys"], body=body)
    inits = [nh.from_array(np.array(2.0, np.float32), "two"),
             nh.from_array(np.array(2, np.int64), "two_i"),
             nh.from_array(np.array(0, np.int64), "zero_i")]
    g = h.make_graph([loop], "g", [h.make_tensor_value_info("n", T.INT64, []),
                                   h.make_tensor_value_info("s0", T.FLOAT, [3]),
                                   h.make_tensor_value_info("x", T.FLOAT, [3])],
                     [h.make_tensor_value_info("sf", T.FLOAT, [3]),
                      h.make_tensor_value_info("ys", T.FLOAT, [None, 3])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    feeds = {"n": np.array(6, np.int64), "s0": np.array([1.0, -2.0, 0.5], np.float32),
             "x": np.array([0.25, 1.0, -1.5], np.float32)}
    _agree(m, feeds, tmp_path)


def _lstm_with_lengths(direction: str, peepholes: bool, layout: int, d: int, hidden: int,
                       feat: int) -> onnx.ModelProto:
    inits = [nh.from_array(np.random.default_rng(3).normal(size=s).astype(np.float32) * 0.5, n)
             for n, s in (("W", (d, 4 * hidden, feat)), ("R", (d, 4 * hidden, hidden)),
                          ("B", (d, 8 * hidden)), ("P", (d, 3 * hidden)))]
    ins = ["X", "W", "R", "B", "lens", "h0", "c0"] + (["P"] if peepholes else [])
    node = h.make_node("LSTM", ins, ["Y", "Yh", "Yc"], hidden_size=hidden,
                       direction=direction, **({"layout": 1} if layout else {}))
    xs = ["T", "N", feat] if not layout else ["N", "T", feat]
    ss = [d, "N", hidden] if not layout else ["N", d, hidden]
    ys = ["T", d, "N", hidden] if not layout else ["N", "T", d, hidden]
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, xs),
                                   h.make_tensor_value_info("lens", T.INT32, ["N"]),
                                   h.make_tensor_value_info("h0", T.FLOAT, ss),
                                   h.make_tensor_value_info("c0", T.FLOAT, ss)],
                     [h.make_tensor_value_info("Y", T.FLOAT, ys),
                      h.make_tensor_value_info("Yh", T.FLOAT, ss),
                      h.make_tensor_value_info("Yc", T.FLOAT, ss)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)])


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("peepholes", [False, True])
def test_lstm_with_lengths_on_dynamic_shapes(direction, peepholes, tmp_path):
    """Sequence lengths from data, input shapes known only at run time: OpenVINO's CPU
    plugin ignores the lengths of its LSTMSequence there, so the LSTM is written as a Scan
    of standard nodes; every output (Y zero past each length, the states at each row's last
    step) matches ONNX Runtime."""
    d = 2 if direction == "bidirectional" else 1
    m = _lstm_with_lengths(direction, peepholes, 0, d, 3, 2)
    state = rng.normal(size=(d, 4, 3))
    feeds = {"X": rng.normal(size=(6, 4, 2)).astype(np.float32),
             "lens": np.array([6, 1, 4, 3], np.int32), "h0": state.astype(np.float32),
             "c0": (state * 0.5).astype(np.float32)}
    _agree(m, feeds, tmp_path)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_with_lengths_batch_major(direction, tmp_path):
    """``layout=1`` (ONNX Runtime has no kernel for it): OpenVINO on the IR of the batch-major
    model equals ONNX Runtime on its sequence-major twin, transposed."""
    d = 2 if direction == "bidirectional" else 1
    state = rng.normal(size=(d, 4, 3)).astype(np.float32)
    feeds = {"X": rng.normal(size=(6, 4, 2)).astype(np.float32),
             "lens": np.array([2, 6, 5, 1], np.int32), "h0": state, "c0": state * 0.5}
    twin = _lstm_with_lengths(direction, True, 0, d, 3, 2)
    want = ort.InferenceSession(twin.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    xml = tmp_path / "m.xml"
    ig.load(_lstm_with_lengths(direction, True, 1, d, 3, 2)).save(xml)
    got = run_ov(xml, {"X": feeds["X"].transpose(1, 0, 2), "lens": feeds["lens"],
                       "h0": state.transpose(1, 0, 2), "c0": feeds["c0"].transpose(1, 0, 2)})
    np.testing.assert_allclose(got[0], want[0].transpose(2, 0, 1, 3), rtol=1e-5, atol=1e-5)
    for g_, w_ in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g_, w_.transpose(1, 0, 2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("kind", ["GRU", "GRU-linear-before-reset", "RNN", "RNN-relu"])
def test_gru_and_rnn_with_lengths_on_dynamic_shapes(direction, kind, tmp_path):
    """The same for a GRU (both reset forms) and an RNN: Y zero past each length, Y_h each
    row's state at its last step, as ONNX Runtime computes them."""
    d, hidden, feat = (2 if direction == "bidirectional" else 1), 3, 2
    gates = 3 if kind.startswith("GRU") else 1
    inits = [nh.from_array(rng.normal(size=s).astype(np.float32) * 0.5, n) for n, s in
             (("W", (d, gates * hidden, feat)), ("R", (d, gates * hidden, hidden)),
              ("B", (d, 2 * gates * hidden)))]
    extra = {"linear_before_reset": 1} if kind == "GRU-linear-before-reset" else \
        {"activations": ["Relu"] * d} if kind == "RNN-relu" else {}
    node = h.make_node(kind[:3], ["X", "W", "R", "B", "lens", "h0"], ["Y", "Yh"],
                       hidden_size=hidden, direction=direction, **extra)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, ["T", "N", feat]),
                                   h.make_tensor_value_info("lens", T.INT32, ["N"]),
                                   h.make_tensor_value_info("h0", T.FLOAT, [d, "N", hidden])],
                     [h.make_tensor_value_info("Y", T.FLOAT, ["T", d, "N", hidden]),
                      h.make_tensor_value_info("Yh", T.FLOAT, [d, "N", hidden])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    feeds = {"X": rng.normal(size=(5, 4, feat)).astype(np.float32),
             "lens": np.array([3, 5, 1, 4], np.int32),
             "h0": rng.normal(size=(d, 4, hidden)).astype(np.float32)}
    _agree(m, feeds, tmp_path)


def test_if_whose_branches_differ_in_rank_is_refused(tmp_path):
    """ONNX Runtime runs an If whose branches return different ranks; OpenVINO's If output
    would have a dynamic rank, which its CPU plugin does not compile: a named refusal."""
    then = h.make_graph([h.make_node("Reshape", ["x", "to2"], ["a"])], "then", [],
                        [h.make_tensor_value_info("a", T.FLOAT, [2, 3])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "else", [],
                         [h.make_tensor_value_info("b", T.FLOAT, [6])])
    node = h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="pick")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("c", T.BOOL, []),
                                   h.make_tensor_value_info("x", T.FLOAT, [6])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(np.array([2, 3], np.int64), "to2")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    x = np.arange(6, dtype=np.float32)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"c": np.array(True), "x": x})[0].shape == (2, 3)
    with pytest.raises(ig.UnsupportedError, match="If node 'pick'.*rank 2 in the then branch "
                                                  "and rank 1 in the else"):
        ig.load(m).save(tmp_path / "m.xml")


@pytest.mark.parametrize(("reduce", "op"), [("ReduceSum", "Sub"), ("ReduceMean", "Add"),
                                            ("ReduceProd", "Mul")])
def test_reduction_of_the_last_axis_then_a_per_column_constant(reduce, op, tmp_path):
    """``c - x.sum(-1)``, ``x`` of shape ``[N, C, K]`` and ``c`` of shape ``[1, C]``: each
    column gets its own constant, as ONNX Runtime computes it."""
    c = rng.normal(size=(1, 3)).astype(np.float32)
    g = h.make_graph([h.make_node(reduce, ["x", "axes"], ["r"], keepdims=0),
                      h.make_node(op, ["c", "r"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 3, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n", 3])],
                     [nh.from_array(c, "c"), nh.from_array(np.array([2], np.int64), "axes")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    _agree(m, {"x": rng.normal(size=(6, 3, 4)).astype(np.float32)}, tmp_path)


@pytest.mark.parametrize(("pads", "axes"), [([0, 1, 2, 0, 2, 1], None), ([2, 1, 0, 3], [-1, 0]),
                                            ([0, -1, 0, 1, 0, 2], None)])
def test_pad_wrap(pads, axes, tmp_path):
    """Circular padding (a negative pad crops) on an input whose batch size is known only at
    run time."""
    inits = [nh.from_array(np.array(pads, np.int64), "pads")]
    ins = ["x", "pads"]
    if axes is not None:
        inits.append(nh.from_array(np.array(axes, np.int64), "axes"))
        ins += ["", "axes"]
    g = h.make_graph([h.make_node("Pad", ins, ["y"], mode="wrap")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 3, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["n2", "c", "w"])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    _agree(m, {"x": rng.normal(size=(2, 3, 4)).astype(np.float32)}, tmp_path)
