"""``trt.OnnxParser``: ONNX loops, conditionals and recurrent layers imported the way
onnx-tensorrt imports them, run through ``ig.load(network)`` against ONNX Runtime (or the ONNX
node suite's expected outputs), and the models TensorRT's importer refuses refused with the
reason and the node."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import itergraph as ig
import itergraph.network as trt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from onnx_builders import body, const, model, run_ort, vi  # noqa: E402

F, I64, B = TP.FLOAT, TP.INT64, TP.BOOL


def raw_model(nodes, inputs, outputs, inits=(), opset=21):
    """A model without the checker's shape inference (for models TensorRT refuses)."""
    g = h.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def parse(m):
    net = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR)).create_network()
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.INTERNAL_ERROR))
    ok = parser.parse(m.SerializeToString())
    return ok, net, parser


def assert_parses_and_matches_ort(m, feeds, backends=("numpy",)):
    ok, net, parser = parse(m)
    assert ok, [str(parser.get_error(i)) for i in range(parser.num_errors)]
    want = run_ort(m, feeds)
    for backend in backends:
        got = ig.load(net).run(feeds, backend=backend)
        for k, w in want.items():
            assert got[k].dtype == w.dtype and got[k].shape == w.shape, (k, got[k].shape, w.shape)
            np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-5, err_msg=k)
    return net


def for_loop():
    """M trips; x doubles; a scan output of x * i (the iteration number)."""
    b = body([h.make_node("Add", ["x_in", "x_in"], ["x_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"]),
              h.make_node("Cast", ["i"], ["i_f"], to=F),
              h.make_node("Mul", ["x_out", "i_f"], ["s"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2])],
             [vi("c_out", B, []), vi("x_out", F, [2]), vi("s", F, [2])])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x_last", "scan"], body=b, name="loop")],
                 [vi("M", I64, []), vi("x0", F, [2])],
                 [vi("x_last", F, [2]), vi("scan", F, [None, 2])])


def while_loop(scan_output=False):
    """while sum(x) < 10: x += 1 (the torch.jit.script while loop of onnx-tensorrt #891)."""
    nodes = [h.make_node("Add", ["x_in", "one"], ["x_out"]),
             h.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
             h.make_node("Less", ["s", "ten"], ["c_out"])]
    outs = [vi("c_out", B, []), vi("x_out", F, [2])]
    if scan_output:
        nodes.append(h.make_node("Identity", ["x_out"], ["y"]))
        outs.append(vi("y", F, [2]))
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2])], outs,
             inits=[const("one", np.ones(2, np.float32)), const("ten", np.float32(10))])
    names = ["x_last", "ys"] if scan_output else ["x_last"]
    gouts = [vi("x_last", F, [2])] + ([vi("ys", F, [None, 2])] if scan_output else [])
    return model([h.make_node("Loop", ["", "c0", "x0"], names, body=b, name="while")],
                 [vi("c0", B, []), vi("x0", F, [2])], gouts)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_for_loop_with_scan_output(backend):
    net = assert_parses_and_matches_ort(
        for_loop(), {"M": np.array(4, np.int64), "x0": np.array([1, 2], np.float32)}, (backend,))
    loop = net.loops[0]
    assert loop.name == "loop" and [t.kind for t in loop.trip_limits] == [trt.TripLimit.COUNT]
    kinds = [o.kind for o in loop.outputs]
    assert kinds == [trt.LoopOutput.LAST_VALUE, trt.LoopOutput.CONCATENATE]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_while_loop_condition_becomes_a_while_trip_limit(backend):
    net = assert_parses_and_matches_ort(
        while_loop(), {"c0": np.array(True), "x0": np.array([2.2, 3.3], np.float32)}, (backend,))
    assert [t.kind for t in net.loops[0].trip_limits] == [trt.TripLimit.WHILE]


def test_max_trip_count_means_no_count():
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
              h.make_node("Less", ["s", "ten"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2])],
             [vi("c_out", B, []), vi("x_out", F, [2])],
             inits=[const("one", np.ones(2, np.float32)), const("ten", np.float32(10))])
    m = model([h.make_node("Loop", ["M", "c0", "x0"], ["x_last"], body=b)],
              [vi("c0", B, []), vi("x0", F, [2])], [vi("x_last", F, [2])],
              inits=[const("M", np.int64(2**63 - 1))])
    net = assert_parses_and_matches_ort(m, {"c0": np.array(True),
                                            "x0": np.zeros(2, np.float32)})
    assert [t.kind for t in net.loops[0].trip_limits] == [trt.TripLimit.WHILE]


def test_scan_reversed_input_and_output():
    sb = body([h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
               h.make_node("Identity", ["s_out"], ["y_t"])],
              [vi("s_in", F, [3]), vi("x_t", F, [3])], [vi("s_out", F, [3]), vi("y_t", F, [3])])
    m = model([h.make_node("Scan", ["s0", "X"], ["s_last", "Y"], body=sb, num_scan_inputs=1,
                           scan_input_directions=[1], scan_output_directions=[1])],
              [vi("s0", F, [3]), vi("X", F, [None, 3])], [vi("s_last", F, [3]),
                                                           vi("Y", F, [None, 3])])
    assert_parses_and_matches_ort(m, {"s0": np.zeros(3, np.float32),
                                      "X": np.arange(12, dtype=np.float32).reshape(4, 3)})


@pytest.mark.parametrize("x", [[1, -3], [1, 3]])
def test_if_with_a_run_time_condition(x):
    tb = body([h.make_node("Mul", ["x", "x"], ["y"])], [], [vi("y", F, [2])])
    eb = body([h.make_node("Neg", ["x"], ["y2"])], [], [vi("y2", F, [2])])
    m = model([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
               h.make_node("Greater", ["s", "zero"], ["c"]),
               h.make_node("If", ["c"], ["out"], then_branch=tb, else_branch=eb, name="if")],
              [vi("x", F, [2])], [vi("out", F, [2])], inits=[const("zero", np.float32(0))])
    net = assert_parses_and_matches_ort(m, {"x": np.array(x, np.float32)})
    cond = net.conditionals[0]
    assert cond.name == "if" and len(cond.inputs) == 1  # x reaches both branches through it


def _rnn_model(op, direction, lens, seed=0, layout=0):
    rng = np.random.default_rng(seed)
    S, Bt, In, H = 5, 2, 3, 4
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    D = 2 if direction == "bidirectional" else 1
    inits = [const("W", rng.standard_normal((D, G * H, In)).astype(np.float32) * 0.5),
             const("R", rng.standard_normal((D, G * H, H)).astype(np.float32) * 0.5),
             const("B", rng.standard_normal((D, 2 * G * H)).astype(np.float32) * 0.1)]
    ins = ["X", "W", "R", "B", "L" if lens else "", "h0"] + (["c0"] if op == "LSTM" else [])
    outs = ["Y", "Yh"] + (["Yc"] if op == "LSTM" else [])
    extra = {"linear_before_reset": 1} if op == "GRU" and lens else {}
    if layout:
        extra["layout"] = 1
    node = h.make_node(op, ins, outs, hidden_size=H, direction=direction, name="rnn", **extra)
    gin = [vi("X", F, [None, Bt, In]), vi("h0", F, [D, Bt, H])]
    gin += [vi("c0", F, [D, Bt, H])] if op == "LSTM" else []
    gin += [vi("L", TP.INT32, [Bt])] if lens else []
    gout = [vi("Y", F, [None, D, Bt, H]), vi("Yh", F, [D, Bt, H])]
    gout += [vi("Yc", F, [D, Bt, H])] if op == "LSTM" else []
    feeds = {"X": rng.standard_normal((S, Bt, In)).astype(np.float32),
             "h0": rng.standard_normal((D, Bt, H)).astype(np.float32)}
    if op == "LSTM":
        feeds["c0"] = rng.standard_normal((D, Bt, H)).astype(np.float32)
    if lens:
        feeds["L"] = np.array([3, 5], np.int32)
    return (raw_model if layout else model)([node], gin, gout, inits=inits), feeds


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction,lens", [("forward", False), ("reverse", True),
                                            ("bidirectional", False), ("bidirectional", True)])
def test_recurrent_layers_become_loops(op, direction, lens):
    m, feeds = _rnn_model(op, direction, lens)
    net = assert_parses_and_matches_ort(m, feeds)
    assert len(net.loops) == (2 if direction == "bidirectional" else 1)


def test_lstm_on_jax():
    m, feeds = _rnn_model("LSTM", "bidirectional", True, seed=3)
    assert_parses_and_matches_ort(m, feeds, ("jax",))


# ONNX node-suite cases: name -> (generator module, class, export method)
NODE_SUITE_ACCEPTED = {
    "test_loop11": ("loop", "Loop", "export_loop_11"),
    "test_scan9_sum": ("scan", "Scan", "export_scan_9"),
    "test_scan_sum": ("scan", "Scan", "export_scan_8"),
    "test_if": ("if_", "If", "export_if"),
    "test_lstm_defaults": ("lstm", "LSTM", "export_defaults"),
    "test_lstm_with_peepholes": ("lstm", "LSTM", "export_peepholes"),
    "test_gru_seq_length": ("gru", "GRU", "export_seq_length"),
    "test_gru_bidirectional": ("gru", "GRU", "export_bidirectional"),
    "test_simple_rnn_reverse": ("rnn", "RNN", "export_reverse"),
    "test_rnn_seq_length": ("rnn", "RNN", "export_seq_length"),
}
NODE_SUITE_REFUSED = {
    "test_lstm_batchwise": (("lstm", "LSTM", "export_batchwise"),
                            "`layout` attribute must be 0"),
    "test_loop13_seq": (("loop", "Loop", "export_loop_13"), "is not a tensor"),
    "test_if_seq": (("if_", "If", "export_if_seq"),
                    "No importer registered for op: SequenceConstruct"),
}


def _node_case(name, where):
    """Generate one case of the ONNX node suite (without collecting the whole suite)."""
    import importlib

    import onnx.backend.test.case.node as suite

    importlib.import_module(f"onnx.backend.test.case.node.{where[0]}")  # registers its cases
    if not any(c.name == name for c in suite._NodeTestCases):
        module = sys.modules[f"onnx.backend.test.case.node.{where[0]}"]
        getattr(getattr(module, where[1]), where[2])()
    return next(c for c in suite._NodeTestCases if c.name == name)


@pytest.mark.parametrize("name", sorted(NODE_SUITE_ACCEPTED))
def test_onnx_node_suite_loops(name):
    case = _node_case(name, NODE_SUITE_ACCEPTED[name])
    ok, net, parser = parse(case.model)
    assert ok, str(parser.get_error(0))
    inits = {i.name for i in case.model.graph.initializer}
    names = [i.name for i in case.model.graph.input if i.name not in inits]
    inputs, outputs = case.data_sets[0]
    got = ig.load(net).run(dict(zip(names, inputs)))
    for o, want in zip(case.model.graph.output, outputs):
        np.testing.assert_allclose(got[o.name], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(NODE_SUITE_REFUSED))
def test_onnx_node_suite_refusals(name):
    where, reason = NODE_SUITE_REFUSED[name]
    ok, _, parser = parse(_node_case(name, where).model)
    assert not ok and reason in str(parser.get_error(0))


def _refusal(m):
    ok, _, parser = parse(m)
    assert not ok and parser.num_errors == 1
    return parser.get_error(0)


def test_while_loop_scan_output_is_refused():
    err = _refusal(while_loop(scan_output=True))
    assert err.code() is trt.ErrorCode.UNSUPPORTED_NODE
    assert err.node() == 0 and err.node_name() == "while" and err.node_operator() == "Loop"
    assert "length cannot be dynamic" in err.desc()
    assert str(err).startswith("In node 0 with name: while and operator: Loop (importLoop): "
                               "UNSUPPORTED_NODE: ")


def test_carried_value_that_changes_shape_is_refused():
    b = body([h.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [None])],
             [vi("c_out", B, []), vi("x_out", F, [None])])
    m = model([h.make_node("Loop", ["M", "", "x0"], ["x_last"], body=b, name="grow")],
              [vi("M", I64, []), vi("x0", F, [2])], [vi("x_last", F, [None])])
    err = _refusal(m)
    assert err.node_name() == "grow" and "shape of a carried value must stay" in err.desc()


def test_scan8_sequence_lens_is_refused():
    sb = body([h.make_node("Add", ["s_in", "x_t"], ["s_out"])],
              [vi("s_in", F, [1, 2]), vi("x_t", F, [1, 2])], [vi("s_out", F, [1, 2])])
    m = raw_model([h.make_node("Scan", ["lens", "s0", "X"], ["s_last"], body=sb,
                               num_scan_inputs=1, name="scan8")],
                  [vi("lens", TP.INT32, [1]), vi("s0", F, [1, 2]), vi("X", F, [1, 3, 2])],
                  [vi("s_last", F, [1, 2])], opset=8)
    err = _refusal(m)
    assert err.node_name() == "scan8" and "sequence_lens" in err.desc()


def test_scan_of_integers_is_refused():
    sb = body([h.make_node("Add", ["s_in", "x_t"], ["s_out"])],
              [vi("s_in", I64, [2]), vi("x_t", I64, [2])], [vi("s_out", I64, [2])])
    m = model([h.make_node("Scan", ["s0", "X"], ["s_last"], body=sb, num_scan_inputs=1)],
              [vi("s0", I64, [2]), vi("X", I64, [3, 2])], [vi("s_last", I64, [2])])
    err = _refusal(m)
    assert err.code() is trt.ErrorCode.UNSUPPORTED_NODE_DATATYPE and "INT64" in err.desc()


def test_lstm_layout_1_is_refused():
    m, _ = _rnn_model("LSTM", "forward", False, layout=1)
    assert "`layout` attribute must be 0" in _refusal(m).desc()


def test_unknown_operator_names_the_node_even_inside_a_body():
    b = body([h.make_node("Add", ["x_in", "x_in"], ["t"]), h.make_node("Det", ["t"], ["x_out"],
                                                                       name="det"),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2, 2])],
             [vi("c_out", B, []), vi("x_out", F, [2, 2])])
    m = raw_model([h.make_node("Loop", ["M", "", "x0"], ["x_last"], body=b, name="outer")],
                  [vi("M", I64, []), vi("x0", F, [2, 2])], [vi("x_last", F, [2, 2])])
    err = _refusal(m)
    assert err.node_name() == "det" and err.node_operator() == "Det" and err.node() == 1
    assert "No importer registered for op: Det" in err.desc() and "'outer' (Loop)" in err.desc()


def test_bad_bytes_and_missing_file():
    net = trt.Builder(trt.Logger()).create_network()
    parser = trt.OnnxParser(net, trt.Logger(trt.Logger.INTERNAL_ERROR))
    assert not parser.parse(b"not a model")
    assert parser.get_error(0).code() is trt.ErrorCode.MODEL_DESERIALIZE_FAILED
    parser.clear_errors()
    assert not parser.parse_from_file("/nonexistent/model.onnx") and parser.num_errors == 1
    assert parser.supports_operator("Loop") and not parser.supports_operator("Det")


def test_parse_from_file(tmp_path):
    path = tmp_path / "loop.onnx"
    path.write_bytes(for_loop().SerializeToString())
    net = trt.Builder(trt.Logger()).create_network()
    parser = trt.OnnxParser(net, trt.Logger())
    assert parser.parse_from_file(str(path)) and parser.num_errors == 0
    y = ig.load(net).run({"M": np.array(2, np.int64), "x0": np.ones(2, np.float32)})
    np.testing.assert_array_equal(y["x_last"], [4, 4])
