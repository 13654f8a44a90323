"""Constant folding in NumPy plans (`backends/numpy/plan.py:_fold`): pure nodes over
constants run once when the plan is compiled, and nothing a run can observe changes."""

import numpy as np
import onnx
from onnx import helper as h

import itergraph as ig
from itergraph.backends.numpy import CompileContext

F, B = onnx.TensorProto.FLOAT, onnx.TensorProto.BOOL


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


def _if_model(then_nodes, then_out, else_nodes, else_out):
    c = onnx.numpy_helper.from_array(np.arange(3, dtype=np.float32), "c")
    tb = h.make_graph(then_nodes, "then", [], [vi(then_out, F, [3])])
    eb = h.make_graph(else_nodes, "else", [], [vi(else_out, F, [3])])
    g = h.make_graph([h.make_node("If", ["b"], ["y"], then_branch=tb, else_branch=eb)], "g",
                     [vi("b", B, [])], [vi("y", F, [3])], [c])
    return ig.load(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def test_a_folded_value_leaves_the_plan_as_a_writable_copy():
    m = _if_model([h.make_node("Neg", ["c"], ["t"]), h.make_node("Identity", ["t"], ["t2"])],
                  "t2", [h.make_node("Identity", ["c"], ["e"])], "e")
    for _ in range(2):
        y = m.run({"b": np.array(True)}, backend="numpy")["y"]
        np.testing.assert_array_equal(y, [0, -1, -2])
        y[0] = 100  # the caller's array: the next run is unaffected


def test_pure_nodes_over_outer_constants_run_once_when_compiling():
    m = _if_model([h.make_node("Neg", ["c"], ["t"]), h.make_node("Exp", ["t"], ["t2"]),
                   h.make_node("Identity", ["t2"], ["t3"])],
                  "t3", [h.make_node("Identity", ["c"], ["e"])], "e")
    ctx = CompileContext()
    ctx.compile(m.graph)
    branch = next(p for p in ctx._cache.values() if p.graph.name == "then")
    assert "k0(" not in branch.source and "k1(" not in branch.source  # no kernel calls left
    assert len(ctx.folded) == 2
    np.testing.assert_allclose(m.run({"b": np.array(True)}, backend="numpy")["y"],
                               np.exp(-np.arange(3)))


def test_a_failing_node_over_constants_fails_only_where_it_runs():
    bad = h.make_node("Reshape", ["c", "shape"], ["t"])  # 3 elements into 2: fails
    shape = h.make_node("Constant", [], ["shape"],
                        value=onnx.numpy_helper.from_array(np.array([2], np.int64)))
    m = _if_model([shape, bad], "t", [h.make_node("Identity", ["c"], ["e"])], "e")
    np.testing.assert_array_equal(m.run({"b": np.array(False)}, backend="numpy")["y"],
                                  [0, 1, 2])
    try:
        m.run({"b": np.array(True)}, backend="numpy")
    except ig.Error as e:
        assert "Reshape" in str(e)
    else:
        raise AssertionError("the taken branch's Reshape must fail")
