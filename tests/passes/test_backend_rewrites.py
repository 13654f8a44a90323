"""The NumPy backend compiles loops from rewritten copies: same results, same errors, and the
user's graph is never changed."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.errors import ExecutionError
from itergraph.ir.clone import clone_graph
from itergraph.passes.pipelines import NUMPY, run_pipeline
from onnx_builders import I64, F, body, const, model, vi
from passutil import loops, ops, rng, run

BOOL = 9


def _shape_of(graph):
    return [(ops(lp.body), len(lp.input_ports), lp.condition_result is None)
            for lp in loops(graph)] + [ops(graph)]


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
    r = rng(1)
    return model([h.make_node("Loop", ["M", "", "acc0"], ["acc", "Y"], body=b)],
                 [vi("M", I64, []), vi("X", F, [5, 1, 3]), vi("acc0", F, [1, 4]),
                  vi("S", I64, [2])],
                 [vi("acc", F, [1, 4]), vi("Y", F, ["n", 1, 4])],
                 [const("W", r.standard_normal(16).astype(np.float32) * 0.4),
                  const("V", r.standard_normal((3, 4)).astype(np.float32))])


def _feeds(m, shape=(4, 4)):
    r = rng(2)
    return {"M": np.array(m, np.int64), "X": r.standard_normal((5, 1, 3)).astype(np.float32),
            "acc0": r.standard_normal((1, 4)).astype(np.float32),
            "S": np.array(shape, np.int64)}


def test_rewritten_loop_gives_the_same_results_and_leaves_the_graph_alone():
    m = ig.load(_model())
    before = _shape_of(m.graph)
    rewritten = clone_graph(m.graph)
    # condition, Gather; the Reshape may raise and M may be 0, so it stays (`loop_entry`)
    assert run_pipeline(NUMPY, rewritten) == 2
    assert ops(rewritten) == ["Loop"]
    for trips in (0, 1, 5):
        got = m.run(_feeds(trips))
        want = run(m.graph, _feeds(trips))
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)
            assert got[k].shape == want[k].shape and got[k].dtype == want[k].dtype
    assert _shape_of(m.graph) == before


def test_a_failing_hoisted_node_in_a_loop_that_never_runs_is_no_error():
    m = ig.load(_model())
    bad = _feeds(0, shape=(3, 5))  # W cannot be reshaped to 3 x 5
    got = m.run(bad)
    np.testing.assert_array_equal(got["acc"], bad["acc0"])
    assert got["Y"].shape[0] == 0


def _message(fn) -> str:
    with pytest.raises(ExecutionError) as e:
        fn()
    return str(e.value)


def test_errors_are_the_original_loops_errors():
    m = ig.load(_model())
    feeds = _feeds(2, shape=(3, 5))
    assert _message(lambda: m.run(feeds)) == _message(lambda: run(m.graph, feeds))


def test_reading_past_the_end_stays_an_execution_error():
    """`iteration_gather` makes the Gather a sliced input: the error class stays, its text
    names the loop's sliced input instead of the Gather."""
    m = ig.load(_model())
    assert "beyond sliced input" in _message(lambda: m.run(_feeds(6)))
    assert "out of bounds" in _message(lambda: run(m.graph, _feeds(6)))
