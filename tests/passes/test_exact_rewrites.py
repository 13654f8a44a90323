"""The backends' rewrites keep values and errors (`passes.pipelines`): no run is retried, so
a rewritten graph must fail exactly where the original fails, and only there.

Each case runs the graph as written (NumPy, no rewrites) and rewritten on both backends:
zero-trip loops whose invariant work would raise, the same work raising in a loop that runs,
and fused recurrent cells (LSTM, GRU, RNN) over zero steps, beyond their input and past
``max_iterations``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from cell_spellings import build
from itergraph.errors import ExecutionError, IterationLimitError
from itergraph.passes.cells import fuse_cells
from onnx_builders import I64, F, body, const, model, vi
from passutil import load, loops, run, transformed

BOOL = 9
BACKENDS = ["numpy", "jax"]


def _gather_model():
    """acc = acc + T[k] for M steps: ``T[k]`` is loop-invariant and out of range for a bad
    index k (a hoisted Gather would raise before the loop tests whether it runs)."""
    b = body([h.make_node("Gather", ["T", "k"], ["row"], axis=0),
              h.make_node("Add", ["acc_in", "row"], ["acc_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F, [4])],
             [vi("c_out", BOOL, []), vi("acc_out", F, [4])])
    return model([h.make_node("Loop", ["M", "", "acc0"], ["acc"], body=b)],
                 [vi("M", I64, []), vi("k", I64, []), vi("acc0", F, [4])],
                 [vi("acc", F, [4])],
                 [const("T", np.arange(12, dtype=np.float32).reshape(3, 4))])


def _feeds(trips: int, k: int) -> dict:
    return {"M": np.array(trips, np.int64), "k": np.array(k, np.int64),
            "acc0": np.ones(4, np.float32)}


def _outcome(fn, *args, **kw):
    """``("ok", fn(*args, **kw))`` or ``("error", error class)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(*args, **kw)
        except ig.Error as e:
            return "error", type(e)


def _assert_same(got, want):
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1] is want[1]
        return
    assert list(got[1]) == list(want[1])
    for name in want[1]:
        g, w = np.asarray(got[1][name]), np.asarray(want[1][name])
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("trips,k", [(0, 7), (0, 1), (2, 7), (2, 1)],
                         ids=["zero-trip-bad-index", "zero-trip", "bad-index", "runs"])
def test_invariant_work_fails_only_where_the_loop_runs_it(backend, trips, k):
    m = _gather_model()
    want = _outcome(lambda: run(load(m), _feeds(trips, k)))
    assert want[0] == ("error" if trips and k == 7 else "ok")
    if want[0] == "error":
        assert want[1] is ExecutionError
    _assert_same(_outcome(lambda: ig.load(m).run(_feeds(trips, k), backend=backend)), want)


def test_a_node_that_may_raise_stays_in_a_loop_that_may_not_run():
    from itergraph.passes.hoist_invariants import hoist_invariants

    g = load(_gather_model())
    t, n = transformed(g, hoist_invariants)
    assert n == 0 and [x.op_type for x in loops(t)[0].body.nodes][0] == "Gather"


def test_a_loop_that_surely_runs_hoists_what_may_raise():
    from itergraph.passes.hoist_invariants import hoist_invariants

    m = _gather_model()
    m.graph.input.pop(0)
    m.graph.initializer.append(const("M", np.array(3, np.int64)))
    g = load(m)
    t, n = transformed(g, hoist_invariants)
    assert n == 1 and [x.op_type for x in t.nodes] == ["Gather", "Loop"]
    for k in (1, 7):
        feeds = {"k": np.array(k, np.int64), "acc0": np.ones(4, np.float32)}
        _assert_same(_outcome(run, t, feeds), _outcome(run, g, feeds))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn"])
def test_fused_cells_keep_the_loops_values_and_errors(cell, backend):
    """Zero steps give the initial states and an empty Y of the loop's shape; a trip count
    beyond the input and one past max_iterations fail as the loop does."""
    m, feeds = build(cell=cell, loop="loop_gather", T=3)
    g, count = transformed(load(m), fuse_cells)
    assert count == 1 and not loops(g)
    model = ig.load(m)
    for trips in (0, 1, 3, 4):
        f = {**feeds, "M": np.array(trips, np.int64)}
        want = _outcome(run, load(m), f)
        assert want[0] == ("error" if trips == 4 else "ok")
        _assert_same(_outcome(model.run, f, backend=backend), want)
    with pytest.raises(IterationLimitError):
        model.run(feeds, backend=backend, max_iterations=2)
    zero = {**feeds, "M": np.array(0, np.int64)}
    _assert_same(_outcome(lambda: model.run(zero, backend=backend, max_iterations=0)),
                 _outcome(lambda: run(load(m), zero)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn"])
def test_fused_scans_over_an_empty_input(cell, backend):
    m, feeds = build(cell=cell)
    empty = {**feeds, "X": feeds["X"][:0]}
    _assert_same(_outcome(lambda: ig.load(m).run(empty, backend=backend)),
                 _outcome(lambda: run(load(m), empty)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mask", [dict(mask="where"), dict(mask="where", mask_output=True),
                                  dict(mask="cast", mask_output="fill")],
                         ids=["mask", "mask-carried-output", "mask-fill"])
def test_masked_cells_over_zero_steps(mask, backend):
    """Keras masking: a carried layer output after zero steps is its initial value."""
    m, feeds = build(cell="lstm", loop="loop_gather", **mask)
    assert transformed(load(m), fuse_cells)[1] == 1
    for trips in (0, 2):
        f = {**feeds, "M": np.array(trips, np.int64)}
        _assert_same(_outcome(ig.load(m).run, f, backend=backend), _outcome(run, load(m), f))
