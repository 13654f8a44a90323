"""ONNX loop models -> itergraph IR -> OpenVINO IR (itergraph's writer), run by OpenVINO.

Each model is built with onnx.helper; the oracle is ONNX Runtime. Where OpenVINO's own ONNX
importer handles the model, its result is compared too.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper
from onnx import helper as h
from ov_helpers import CORE, assert_close, run_ov

from itergraph.backends.numpy import run_graph
from itergraph.frontends.onnx import read as read_onnx
from itergraph.frontends.openvino import read, write

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
rng = np.random.default_rng(9)


def vi(name, elem=F, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m


def run_ort(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def check(m, feeds, tmp_path, openvino_onnx=True, rtol=1e-5, atol=1e-5):
    want = run_ort(m, feeds)
    g = read_onnx(m)
    xml = tmp_path / "from_onnx.xml"
    write(g, xml)
    got = run_ov(xml, feeds)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert_close(a, b, rtol, atol, f"OpenVINO on itergraph's IR, output {i}")
    # itergraph reads its own export back and agrees
    again = list(run_graph(read(xml), feeds).values())
    for i, (a, b) in enumerate(zip(again, want)):
        assert_close(a, b, rtol, atol, f"itergraph on its own IR, output {i}")
    if openvino_onnx:
        path = tmp_path / "m.onnx"
        onnx.save(m, str(path))
        theirs = run_ov(CORE.read_model(str(path)), feeds)
        for i, (a, b) in enumerate(zip(theirs, got)):
            assert_close(a, b, rtol, atol, f"OpenVINO's ONNX import vs itergraph's, output {i}")
    return g


def _loop_model(use_capture=True):
    """y_{k+1} = y_k * 0.9 + x (+ i); stops when sum(y) > limit; scan output of y."""
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["i_f"], to=F),
         h.make_node("Mul", ["y_in", "decay"], ["y_d"]),
         h.make_node("Add", ["y_d", "x" if use_capture else "one"], ["y_x"]),
         h.make_node("Add", ["y_x", "i_f"], ["y_out"]),
         h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0),
         h.make_node("Less", ["s", "limit"], ["c_out"]),
         h.make_node("Identity", ["y_out"], ["scan"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [3])],
        [vi("c_out", B, []), vi("y_out", F, [3]), vi("scan", F, [3])],
        [const("decay", np.float32(0.9)), const("one", np.ones(3, np.float32))])
    return model(
        [h.make_node("Loop", ["M", "cond", "y0"], ["y", "ys"], body=body)],
        [vi("M", I64, []), vi("cond", B, []), vi("y0", F, [3]), vi("x", F, [3])],
        [vi("y", F, [3]), vi("ys", F, [None, 3])],
        [const("limit", np.float32(40.0))])


@pytest.mark.parametrize("trip", [6, 100])
def test_loop_with_condition_iteration_and_capture(tmp_path, trip):
    m = _loop_model()
    feeds = {"M": np.array(trip, np.int64), "cond": np.array(True),
             "y0": rng.random(3).astype(np.float32), "x": rng.random(3).astype(np.float32)}
    g = check(m, feeds, tmp_path)
    assert g.nodes[-1].origin == "onnx.Loop"


def test_loop_negative_trip_count_runs_no_iteration(tmp_path):
    m = _loop_model()
    feeds = {"M": np.array(-1, np.int64), "cond": np.array(True),
             "y0": rng.random(3).astype(np.float32), "x": rng.random(3).astype(np.float32)}
    want = run_ort(m, feeds)
    xml = tmp_path / "neg.xml"
    write(read_onnx(m), xml)
    got = run_ov(xml, feeds)
    assert_close(got[0], want[0], what="carried value after zero iterations")
    assert got[1].shape[0] == 0 and want[1].shape[0] == 0


def test_for_loop_with_matmul_and_if_in_body(tmp_path):
    then_g = h.make_graph([h.make_node("Relu", ["h1"], ["o"])], "then", [], [vi("o", F, None)])
    else_g = h.make_graph([h.make_node("Tanh", ["h1"], ["o2"])], "else", [], [vi("o2", F, None)])
    body = h.make_graph(
        [h.make_node("MatMul", ["h_in", "W"], ["h1"]),
         h.make_node("Mod", ["i", "two"], ["r"]),
         h.make_node("Equal", ["r", "zero"], ["even"]),
         h.make_node("If", ["even"], ["h_out"], then_branch=then_g, else_branch=else_g),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("h_in", F, [2, 4])],
        [vi("c_out", B, []), vi("h_out", F, [2, 4])],
        [const("two", np.int64(2)), const("zero", np.int64(0))])
    m = model([h.make_node("Loop", ["M", "", "h0"], ["h"], body=body)],
              [vi("M", I64, []), vi("h0", F, [2, 4])], [vi("h", F, [2, 4])],
              [const("W", rng.standard_normal((4, 4)).astype(np.float32) * 0.5)])
    feeds = {"M": np.array(5, np.int64), "h0": rng.standard_normal((2, 4)).astype(np.float32)}
    check(m, feeds, tmp_path)


@pytest.mark.parametrize("in_axis,in_dir,out_axis,out_dir", [
    (0, 0, 0, 0), (1, 1, 0, 0), (0, 0, 1, 1), (1, 0, 2, 1)])
def test_scan_axes_and_directions(tmp_path, in_axis, in_dir, out_axis, out_dir):
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "x_t"], ["acc_out"]),
         h.make_node("Mul", ["acc_out", "x_t"], ["y_t"])],
        "body", [vi("acc_in", F, [3]), vi("x_t", F, [3])],
        [vi("acc_out", F, [3]), vi("y_t", F, [3])])
    x_shape = [5, 3] if in_axis == 0 else [3, 5]
    node = h.make_node("Scan", ["acc0", "x"], ["acc", "ys"], body=body, num_scan_inputs=1,
                       scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                       scan_output_axes=[min(out_axis, 1)], scan_output_directions=[out_dir])
    m = model([node], [vi("acc0", F, [3]), vi("x", F, x_shape)],
              [vi("acc", F, [3]), vi("ys", F, [None, None])])
    feeds = {"acc0": rng.random(3).astype(np.float32),
             "x": rng.random(x_shape).astype(np.float32)}
    g = check(m, feeds, tmp_path)
    assert g.nodes[-1].origin == "onnx.Scan"


def test_scan_with_lstm_step(tmp_path):
    hs, n_in = 4, 3
    W = rng.standard_normal((1, 4 * hs, n_in)).astype(np.float32) * 0.5
    R = rng.standard_normal((1, 4 * hs, hs)).astype(np.float32) * 0.5
    Bb = rng.standard_normal((1, 8 * hs)).astype(np.float32) * 0.1
    body = h.make_graph(
        [h.make_node("Unsqueeze", ["x_t", "ax0"], ["x1"]),
         h.make_node("Unsqueeze", ["h_in", "ax0"], ["h1"]),
         h.make_node("Unsqueeze", ["c_in", "ax0"], ["c1"]),
         h.make_node("LSTM", ["x1", "W", "R", "B", "", "h1", "c1"], ["", "yh", "yc"],
                     hidden_size=hs),
         h.make_node("Squeeze", ["yh", "ax0"], ["h_out"]),
         h.make_node("Squeeze", ["yc", "ax0"], ["c_out"]),
         h.make_node("Identity", ["h_out"], ["y_t"])],
        "body", [vi("h_in", F, [2, hs]), vi("c_in", F, [2, hs]), vi("x_t", F, [2, n_in])],
        [vi("h_out", F, [2, hs]), vi("c_out", F, [2, hs]), vi("y_t", F, [2, hs])])
    node = h.make_node("Scan", ["h0", "c0", "x"], ["h", "c", "ys"], body=body,
                       num_scan_inputs=1)
    m = model([node], [vi("h0", F, [2, hs]), vi("c0", F, [2, hs]), vi("x", F, [6, 2, n_in])],
              [vi("h", F, [2, hs]), vi("c", F, [2, hs]), vi("ys", F, [6, 2, hs])],
              [const("W", W), const("R", R), const("B", Bb), const("ax0", np.array([0]))])
    feeds = {"h0": rng.random((2, hs)).astype(np.float32),
             "c0": rng.random((2, hs)).astype(np.float32),
             "x": rng.random((6, 2, n_in)).astype(np.float32)}
    check(m, feeds, tmp_path, rtol=1e-4)


def test_nested_loops(tmp_path):
    inner = h.make_graph(
        [h.make_node("Add", ["v_in", "j_f"], ["v_out"]),
         h.make_node("Cast", ["j"], ["j_f"], to=F),
         h.make_node("Identity", ["c"], ["c_o"])],
        "inner", [vi("j", I64, []), vi("c", B, []), vi("v_in", F, [2])],
        [vi("c_o", B, []), vi("v_out", F, [2])])
    inner.node.sort(key=lambda n: n.op_type != "Cast")
    outer = h.make_graph(
        [h.make_node("Loop", ["N", "", "a_in"], ["a_mid"], body=inner),
         h.make_node("Mul", ["a_mid", "half"], ["a_out"]),
         h.make_node("Identity", ["c"], ["c_o"]),
         h.make_node("Identity", ["a_out"], ["a_scan"])],
        "outer", [vi("i", I64, []), vi("c", B, []), vi("a_in", F, [2])],
        [vi("c_o", B, []), vi("a_out", F, [2]), vi("a_scan", F, [2])],
        [const("half", np.float32(0.5))])
    m = model([h.make_node("Loop", ["M", "", "a0"], ["a", "as"], body=outer)],
              [vi("M", I64, []), vi("N", I64, []), vi("a0", F, [2])],
              [vi("a", F, [2]), vi("as", F, [None, 2])])
    feeds = {"M": np.array(3, np.int64), "N": np.array(4, np.int64),
             "a0": rng.random(2).astype(np.float32)}
    # OpenVINO's own ONNX importer refuses this model (an inner Loop's trip count from the
    # enclosing scope); OpenVINO runs itergraph's conversion of it
    check(m, feeds, tmp_path, openvino_onnx=False)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_argmax_with_ties_in_a_loop(tmp_path, op, keepdims):
    """A greedy decoder's ``ArgMax`` (TopK with k=1 in OpenVINO) over rows with ties, in a loop
    body and outside: OpenVINO compiles the written IR, itergraph reads it back, and the lower
    index wins ties as in ONNX."""
    body = h.make_graph(
        [h.make_node(op, ["s_in"], ["a"], axis=1, keepdims=keepdims),
         h.make_node("Cast", ["a"], ["a_f"], to=F),
         h.make_node("ReduceSum", ["a_f"], ["t"], keepdims=0),
         h.make_node("Add", ["s_in", "t"], ["s_out"]),
         h.make_node("Identity", ["a"], ["picked"]),
         h.make_node("Identity", ["c"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c", B, []), vi("s_in", F, [2, 4])],
        [vi("c_out", B, []), vi("s_out", F, [2, 4]), vi("picked", I64, [2, 1][:1 + keepdims])])
    m = model([h.make_node("Loop", ["M", "", "x"], ["s", "ps"], body=body),
               h.make_node(op, ["x"], ["top"], axis=0, keepdims=keepdims)],
              [vi("M", I64, []), vi("x", F, [2, 4])],
              [vi("s", F, [2, 4]), vi("ps", I64, [3, 2, 1][:2 + keepdims]),
               vi("top", I64, [1, 4][1 - keepdims:])])
    x = np.array([[1, 3, 3, 0], [2, 2, 0, 2]], np.float32)
    check(m, {"M": np.array(3, np.int64), "x": x}, tmp_path)


def test_if_branch_returning_outer_values_in_a_loop(tmp_path):
    """torch.onnx's ``break``/``continue``: an If whose else branch returns an outer
    ``Constant`` (and whose then branch returns an outer graph input) through ``Identity``; the
    written If-8 branches have Results fed straight by Parameters, which itergraph's reader
    bound to the branch Parameter instead of the outer value."""
    then_g = h.make_graph([h.make_node("Identity", ["flag"], ["t_out"])], "then", [],
                          [vi("t_out", B, [])])
    else_g = h.make_graph([h.make_node("Identity", ["no"], ["e_out"])], "else", [],
                          [vi("e_out", B, [])])
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "x"], ["s_out"]),
         h.make_node("ReduceSum", ["s_out"], ["t"], keepdims=0),
         h.make_node("Less", ["t", "limit"], ["small"]),
         h.make_node("If", ["small"], ["c_out"], then_branch=then_g, else_branch=else_g)],
        "body", [vi("i", I64, []), vi("c", B, []), vi("s_in", F, [3])],
        [vi("c_out", B, []), vi("s_out", F, [3])])
    top = h.make_node("If", ["flag"], ["top"], then_branch=h.make_graph(
        [h.make_node("Identity", ["flag"], ["t2"])], "then2", [], [vi("t2", B, [])]),
        else_branch=h.make_graph([h.make_node("Identity", ["no"], ["e2"])], "else2", [],
                                 [vi("e2", B, [])]))
    m = model([h.make_node("Constant", [], ["no"], value=const("v", np.array(False))),
               h.make_node("Loop", ["M", "", "s0"], ["s"], body=body), top],
              [vi("M", I64, []), vi("flag", B, []), vi("s0", F, [3]), vi("x", F, [3])],
              [vi("s", F, [3]), vi("top", B, [])], [const("limit", np.float32(20.0))])
    for flag in (True, False):
        feeds = {"M": np.array(10, np.int64), "flag": np.array(flag),
                 "s0": np.zeros(3, np.float32), "x": np.ones(3, np.float32)}
        check(m, feeds, tmp_path)
