"""The JAX backend compiles a rewritten copy of the graph (layout passes, loop-invariant work
hoisted by `passes.hoist_invariants`): same results, the original graph's errors, and the
user's graph is never changed."""

from __future__ import annotations

import numpy as np
import pytest
from jaxutil import assert_same
from onnx import helper as h

import itergraph as ig
from itergraph.backends import jax as jb
from itergraph.backends.jax.program import CompiledGraph
from itergraph.errors import ExecutionError
from itergraph.ir import Loop
from onnx_builders import I64, F, body, const, model, vi

BOOL = 9


def _model():
    """acc = tanh(acc @ reshape(W, S) + X[i] @ V) for M steps, rows scanned out."""
    b = body([h.make_node("Reshape", ["W", "S"], ["W2"]),
              h.make_node("Gather", ["X", "i"], ["x_i"], axis=0),
              h.make_node("MatMul", ["x_i", "V"], ["xv"]),
              h.make_node("MatMul", ["acc_in", "W2"], ["aw"]),
              h.make_node("Add", ["aw", "xv"], ["pre"]),
              h.make_node("Tanh", ["pre"], ["acc_out"]),
              h.make_node("Identity", ["acc_out"], ["y"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F, [1, 4])],
             [vi("c_out", BOOL, []), vi("acc_out", F, [1, 4]), vi("y", F, [1, 4])])
    r = np.random.default_rng(1)
    return model([h.make_node("Loop", ["M", "", "acc0"], ["acc", "Y"], body=b)],
                 [vi("M", I64, []), vi("X", F, [5, 1, 3]), vi("acc0", F, [1, 4]),
                  vi("S", I64, [2])],
                 [vi("acc", F, [1, 4]), vi("Y", F, ["n", 1, 4])],
                 [const("W", r.standard_normal(16).astype(np.float32) * 0.4),
                  const("V", r.standard_normal((3, 4)).astype(np.float32))])


def _feeds(m, shape=(4, 4)):
    r = np.random.default_rng(2)
    return {"M": np.array(m, np.int64), "X": r.standard_normal((5, 1, 3)).astype(np.float32),
            "acc0": r.standard_normal((1, 4)).astype(np.float32),
            "S": np.array(shape, np.int64)}


def _body_ops(graph):
    return [[n.op_type for n in lp.body.nodes] for _, lp in graph.walk()
            if isinstance(lp, Loop)]


def test_invariant_work_that_may_raise_stays_and_results_are_the_originals():
    """The invariant Reshape may raise (S is an input) and the loop may run zero times: it
    stays in the body (`passes.loop_entry`)."""
    graph = ig.load(_model()).graph
    before = _body_ops(graph)
    cg = jb.compile_graph(graph)
    assert "Reshape" in before[0] and "Reshape" in _body_ops(cg.graph)[0]
    plain = CompiledGraph(graph, rewrite=False)
    for trips in (0, 1, 5):
        assert_same(cg.run(_feeds(trips)), plain.run(_feeds(trips)))
    assert _body_ops(graph) == before


def test_a_failing_hoisted_node_in_a_loop_that_never_runs_is_no_error():
    cg = jb.compile_graph(ig.load(_model()).graph)
    bad = _feeds(0, shape=(3, 5))  # W cannot be reshaped to 3 x 5
    got = cg.run(bad)
    np.testing.assert_array_equal(got["acc"], bad["acc0"])
    assert got["Y"].shape[0] == 0


def _message(fn) -> str:
    with pytest.raises(ExecutionError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("feeds", [_feeds(2, shape=(3, 5)), _feeds(6)],
                         ids=["bad-reshape", "gather-past-the-end"])
def test_errors_are_the_original_graphs_errors(feeds):
    graph = ig.load(_model()).graph
    cg = jb.compile_graph(graph)
    plain = CompiledGraph(graph, rewrite=False)
    assert _message(lambda: cg.run(feeds)) == _message(lambda: plain.run(feeds))
