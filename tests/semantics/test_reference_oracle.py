"""The semantics models once more, against `reference_loop`, the literal transcription of the
canonical Loop's docstring: each model's graph is one Loop whose inputs are the model's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_onnx_loop_semantics import (
    counter_loop,
    doubling_model,
    growing_scan_output_model,
    if_in_body_model,
    nested_loops_model,
    runaway_model,
    trip_count_1d_model,
    while_model,
)
from test_onnx_scan_semantics import scan8_model, scan_sum_model, two_input_scan_model

import itergraph as ig
from itergraph.ir import Loop
from onnx_builders import run_ig
from reference_loop import reference_loop

f32 = np.float32


def _scan_x(shape=(3, 4)):
    return np.arange(int(np.prod(shape)), dtype=f32).reshape(shape) * 0.5


def cases():
    """(id, model, feeds) of every semantics model whose graph is a single loop."""
    for shape in [(), (2, 3)]:
        x0 = np.arange(int(np.prod(shape)), dtype=f32).reshape(shape)
        for n, cond in [(0, True), (3, False), (4, True), (-1, True)]:
            yield (f"counter{list(shape)}-n{n}-{cond}", counter_loop(shape),
                   {"M": np.array(n), "cond": np.array(cond), "x0": x0})
    yield ("trip_count_1d", trip_count_1d_model(),
           {"M": np.array([5]), "x0": np.zeros((), f32)})
    yield ("while-int64-max", while_model(),
           {"M": np.array(np.iinfo(np.int64).max), "cond": np.array(True),
            "x0": np.ones((), f32), "limit": np.array(1000.0, f32)})
    for cond in (True, False):
        yield (f"while-no-trip-count-{cond}", while_model(trip_input=False),
               {"cond": np.array(cond), "x0": np.ones((), f32), "limit": np.array(50.0, f32)})
    yield ("carried-changes-shape", doubling_model(),
           {"M": np.array(3), "x0": np.array([1.0, 2.0], f32)})
    yield ("if-in-body", if_in_body_model(), {"M": np.array(7), "x0": np.zeros((), f32)})
    yield ("three-nested-loops", nested_loops_model(),
           {"n1": np.array(3), "n2": np.array(4), "n3": np.array(5),
            "a": np.array(0.5, f32), "acc0": np.zeros((), f32)})
    for in_axis, in_dir, out_axes, out_dirs in [
            (0, 0, [0, 0], [0, 0]), (1, 0, [1, 0], [0, 0]), (0, 1, [0, 1], [1, 0]),
            (1, 1, [1, 1], [0, 1]), (-1, 0, [-1, 0], [0, 0]), (-2, 1, [-2, -1], [1, 1])]:
        x = _scan_x()
        n_other = x.shape[1 - (in_axis % 2)]
        yield (f"scan-axis{in_axis}-dir{in_dir}-out{out_axes}{out_dirs}",
               scan_sum_model([in_axis], [in_dir], out_axes, out_dirs),
               {"s0": np.zeros(n_other, f32), "X": x})
    yield ("scan-twice", scan_sum_model([0, 0], [0, 1], [0, 0], [0, 0], twice=True),
           {"s0": np.zeros(3, f32), "X": _scan_x((5, 3))})
    for opset in [9, 11, 16, 19, 21, 23, 24, 25]:
        x = np.random.default_rng(opset).standard_normal((6, 2)).astype(f32)
        yield (f"scan-opset{opset}", scan_sum_model([0], [0], [0, 0], [0, 0], opset=opset),
               {"s0": np.zeros(2, f32), "X": x})
    yield ("scan-zero-length", scan_sum_model([0], [0], [0, 0], [0, 0]),
           {"s0": np.ones(2, f32), "X": np.zeros((0, 2), f32)})
    rng = np.random.default_rng(0)
    for lens in ([5, 2, 1], [5, 0, 3]):
        yield (f"scan8-lens{lens}", scan8_model(),
               {"lens": np.array(lens), "s0": rng.standard_normal((3, 2)).astype(f32),
                "X": rng.standard_normal((3, 5, 2)).astype(f32)})


CASES = {name: (m, feeds) for name, m, feeds in cases()}


def top_loop(m, feeds):
    """The model's one Loop and the outer values it reads (the feeds and initializers)."""
    graph = ig.load(m).graph
    assert [n.op_type for n in graph.nodes] == ["Loop"]
    (loop,) = graph.nodes
    assert isinstance(loop, Loop)
    outer = {v: v.const for v in graph.initializers}
    outer.update({v: feeds[v.name] for v in graph.inputs if v.name in feeds})
    return graph, loop, outer


@pytest.mark.parametrize("name", list(CASES))
def test_backend_matches_reference_loop(name):
    m, feeds = CASES[name]
    graph, loop, outer = top_loop(m, feeds)
    with warnings.catch_warnings(record=True) as ref_warned:
        warnings.simplefilter("always", ig.LeniencyWarning)
        want = reference_loop(loop, outer, opset_imports=graph.opset_imports)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", ig.LeniencyWarning)
        got = run_ig(m, feeds)
    lenient = [w for w in warned if issubclass(w.category, ig.LeniencyWarning)]
    assert bool(lenient) == any(issubclass(w.category, ig.LeniencyWarning) for w in ref_warned)
    assert list(got) == [v.name for v in graph.outputs]
    for v in graph.outputs:
        g, w = np.asarray(got[v.name]), np.asarray(want[v])
        assert g.shape == w.shape, f"{v.name}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"{v.name}: dtype {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=v.name)


def test_scan_inputs_of_different_lengths_fail_in_both():
    m = two_input_scan_model()
    feeds = {"s0": np.zeros(2, f32), "X": np.ones((3, 2), f32), "Z": np.ones((5, 2), f32)}
    graph, loop, outer = top_loop(m, feeds)
    with pytest.raises(ig.ExecutionError, match="different sequence lengths"):
        reference_loop(loop, outer, opset_imports=graph.opset_imports)
    with pytest.raises(ig.ExecutionError, match="different sequence lengths"):
        run_ig(m, feeds)


def test_runaway_loop_stops_at_the_iteration_limit_in_both():
    m = runaway_model()
    feeds = {"cond": np.array(True), "x0": np.zeros((), f32)}
    graph, loop, outer = top_loop(m, feeds)
    with pytest.raises(ig.IterationLimitError):
        reference_loop(loop, outer, opset_imports=graph.opset_imports, max_iterations=100)
    with pytest.raises(ig.IterationLimitError):
        run_ig(m, feeds, max_iterations=100)


def test_scan_output_that_changes_shape_fails_in_both():
    m = growing_scan_output_model()
    feeds = {"M": np.array(3), "x0": np.array([1.0], f32)}
    graph, loop, outer = top_loop(m, feeds)
    with pytest.raises(ValueError):  # np.stack of entries of different shapes
        reference_loop(loop, outer, opset_imports=graph.opset_imports)
    with pytest.raises(ig.ExecutionError):
        run_ig(m, feeds)
