"""ONNX Loop of every version -> canonical Loop -> ONNX, with ONNX Runtime as the oracle."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper
from onnxfe_util import check_numpy, model, roundtrip, vi

import itergraph as ig
from itergraph import LeniencyWarning
from itergraph.frontends.onnx import read
from itergraph.ir import Carried, Concat, Last, Loop

# Loop version -> a model opset under which that version is the current Loop
LOOP_VERSIONS = {1: 10, 11: 11, 13: 13, 16: 16, 19: 19, 21: 21, 23: 23, 24: 24, 25: 25}


def loop_model(opset: int, m: bool = True, cond: bool = True):
    """x_{k+1} = x_k + a; scan output (x_k + a)^2; continue while float(k) < lim."""
    body = h.make_graph(
        [
            h.make_node("Add", ["x", "a"], ["y"]),
            h.make_node("Mul", ["y", "y"], ["s"]),
            h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
            h.make_node("Less", ["fi", "lim"], ["c_out"]),
        ],
        "body",
        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), vi("x", TP.FLOAT, [2])],
        [vi("c_out", TP.BOOL, []), vi("y", TP.FLOAT, [2]), vi("s", TP.FLOAT, [2])],
    )
    node = h.make_node("Loop", ["M" if m else "", "cond" if cond else "", "x0"], ["xf", "ss"],
                       body=body, name="the_loop")
    inputs = [vi("M", TP.INT64, []), vi("cond", TP.BOOL, []), vi("x0", TP.FLOAT, [2]),
              vi("a", TP.FLOAT, [2]), vi("lim", TP.FLOAT, [])]
    inputs = [i for i in inputs if (m or i.name != "M") and (cond or i.name != "cond")]
    return model([node], inputs, [vi("xf", TP.FLOAT, [2]), vi("ss", TP.FLOAT, [None, 2])], opset)


def feeds(m=True, cond=True, trip=5, start=True, lim=2.5):
    f = {"M": np.array(trip, np.int64), "cond": np.array(start), "x0": np.array([1, 2], np.float32),
         "a": np.array([0.5, -1], np.float32), "lim": np.array(lim, np.float32)}
    if not m:
        del f["M"]
    if not cond:
        del f["cond"]
    return f


@pytest.mark.parametrize("version", sorted(LOOP_VERSIONS))
def test_loop_versions_roundtrip(version):
    opset = LOOP_VERSIONS[version]
    for m, c in [(True, True), (True, False), (False, True)]:
        mod = loop_model(opset, m, c)
        fs = [feeds(m, c), feeds(m, c, trip=0), feeds(m, c, lim=10.0), feeds(m, c, trip=-1)]
        if c:
            fs.append(feeds(m, c, start=False))
        g, _ = roundtrip(mod, fs if m else fs[1:] + [feeds(m, c)])
        check_numpy(g, mod, fs if m else [feeds(m, c)])
        loop = g.nodes[0]
        assert isinstance(loop, Loop) and loop.origin == "onnx.Loop"
        assert loop.origin_attrs["version"] == version
        assert loop.name == "the_loop"


def test_loop_structure():
    g = read(loop_model(16))
    (loop,) = g.nodes
    body = loop.body
    assert loop.trip_count is g.inputs[0] and loop.initial_condition is g.inputs[1]
    assert loop.iteration_param is body.inputs[0]
    assert loop.condition_param is body.inputs[1]
    assert loop.condition_result is body.outputs[0]
    (c,) = loop.input_ports
    assert isinstance(c, Carried) and c.value is g.inputs[2] and c.param is body.inputs[2]
    assert c.result is body.outputs[1]
    last, cat = loop.output_ports
    assert isinstance(last, Last) and last.result is body.outputs[1]
    assert isinstance(cat, Concat) and cat.new_axis and cat.axis == 0 and not cat.reverse
    assert [v.name for v in loop.outputs] == ["xf", "ss"]
    assert g.outputs == loop.outputs
    # the body's reference to the outer "a" is the outer Value itself
    assert body.captures() == [g.inputs[3], g.inputs[4]]


def test_loop_omitted_trip_and_cond():
    g = read(loop_model(13, m=False, cond=False))
    (loop,) = g.nodes
    assert loop.trip_count is None and loop.initial_condition is None


@pytest.mark.parametrize("opset", [13, 16, 21, 25])
def test_loop_carried_sequence(opset):
    """A loop-carried sequence (Loop-13+): append x*k each iteration."""
    body = h.make_graph(
        [
            h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
            h.make_node("Mul", ["x", "fi"], ["xi"]),
            h.make_node("SequenceInsert", ["seq_in", "xi"], ["seq_out"]),
            h.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []),
         h.make_tensor_sequence_value_info("seq_in", TP.FLOAT, None)],
        [vi("c_out", TP.BOOL, []), h.make_tensor_sequence_value_info("seq_out", TP.FLOAT, None)],
    )
    nodes = [h.make_node("SequenceEmpty", [], ["empty"], dtype=TP.FLOAT),
             h.make_node("Loop", ["M", "", "empty"], ["seq"], body=body)]
    mod = model(nodes, [vi("M", TP.INT64, []), vi("x", TP.FLOAT, [3])],
                [h.make_tensor_sequence_value_info("seq", TP.FLOAT, None)], opset)
    fs = [{"M": np.array(n, np.int64), "x": np.arange(3, dtype=np.float32)} for n in (0, 1, 4)]
    g, _ = roundtrip(mod, fs)
    check_numpy(g, mod, fs)


@pytest.mark.parametrize("opset", [16, 25])
def test_loop_carried_optional(opset):
    """A loop-carried optional (Loop-16+): starts empty, holds x after the first iteration."""
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT, [2]))
    body = h.make_graph(
        [h.make_node("Optional", ["x"], ["o_out"]), h.make_node("Identity", ["c"], ["c_out"])],
        "body",
        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), h.make_value_info("o_in", opt)],
        [vi("c_out", TP.BOOL, []), h.make_value_info("o_out", opt)],
    )
    nodes = [h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(TP.FLOAT, [2])),
             h.make_node("Loop", ["M", "", "none"], ["o"], body=body),
             h.make_node("OptionalHasElement", ["o"], ["has"])]
    mod = model(nodes, [vi("M", TP.INT64, []), vi("x", TP.FLOAT, [2])],
                [vi("has", TP.BOOL, [])], opset)
    fs = [{"M": np.array(n, np.int64), "x": np.ones(2, np.float32)} for n in (0, 2)]
    g, _ = roundtrip(mod, fs)
    check_numpy(g, mod, fs)


def test_nested_loops_roundtrip():
    """A Loop inside a Loop body; the inner body reads the outer iteration number."""
    inner = h.make_graph(
        [h.make_node("Add", ["j", "i"], ["ij"]), h.make_node("Add", ["acc", "ij"], ["acc2"]),
         h.make_node("Identity", ["cj"], ["cj_out"])],
        "inner",
        [vi("j", TP.INT64, []), vi("cj", TP.BOOL, []), vi("acc", TP.INT64, [])],
        [vi("cj_out", TP.BOOL, []), vi("acc2", TP.INT64, []), vi("ij", TP.INT64, [])],
    )
    outer = h.make_graph(
        [h.make_node("Loop", ["N", "", "t"], ["t2", "rows"], body=inner),
         h.make_node("Identity", ["c"], ["c_out"])],
        "outer",
        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), vi("t", TP.INT64, [])],
        [vi("c_out", TP.BOOL, []), vi("t2", TP.INT64, []), vi("rows", TP.INT64, [None])],
    )
    mod = model([h.make_node("Loop", ["M", "", "t0"], ["total", "grid"], body=outer)],
                [vi("M", TP.INT64, []), vi("N", TP.INT64, []), vi("t0", TP.INT64, [])],
                [vi("total", TP.INT64, []), vi("grid", TP.INT64, [None, None])], 13)
    fs = [{"M": np.array(m, np.int64), "N": np.array(n, np.int64), "t0": np.array(1, np.int64)}
          for m, n in [(3, 4), (2, 0), (1, 1)]]
    g, _ = roundtrip(mod, fs)
    check_numpy(g, mod, fs)


def test_torchscript_opset7_unbounded_trip_count_is_read_as_absent():
    """torch.onnx at opset 7 writes a while loop's "no trip count" as Cast(2**63 as float):
    out of int64's range, ONNX Runtime runs no iteration; PyTorch and OpenVINO run the loop,
    and so does itergraph, with a LeniencyWarning (tests/realworld/models/torch/while_sum_op7)."""
    b = h.make_graph([h.make_node("Add", ["x_in", "one"], ["x_out"]),
                      h.make_node("Less", ["x_out", "limit"], ["c_out"])],
                     "body", [h.make_tensor_value_info("i", TP.INT64, []),
                              h.make_tensor_value_info("c", TP.BOOL, []),
                              h.make_tensor_value_info("x_in", TP.FLOAT, [])],
                     [h.make_tensor_value_info("c_out", TP.BOOL, []),
                      h.make_tensor_value_info("x_out", TP.FLOAT, [])],
                     [numpy_helper.from_array(np.array(1, np.float32), "one"),
                      numpy_helper.from_array(np.array(5, np.float32), "limit")])
    big = numpy_helper.from_array(np.array(2.0**63, np.float64))
    g = h.make_graph([h.make_node("Constant", [], ["huge"], value=big),
                      h.make_node("Cast", ["huge"], ["M"], to=TP.INT64),
                      h.make_node("Loop", ["M", "go", "x0"], ["x"], body=b)], "g",
                     [h.make_tensor_value_info("go", TP.BOOL, []),
                      h.make_tensor_value_info("x0", TP.FLOAT, [])],
                     [h.make_tensor_value_info("x", TP.FLOAT, [])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 7)], ir_version=3)
    feeds = {"go": np.array(True), "x0": np.array(0, np.float32)}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loaded = ig.load(m)
    assert any(issubclass(w.category, LeniencyWarning) and "trip count" in str(w.message)
               for w in seen)
    for backend in ("numpy", "jax"):
        assert float(loaded.run(feeds, backend=backend)["x"]) == 5.0  # the while loop ran
