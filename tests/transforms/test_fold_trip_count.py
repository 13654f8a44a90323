"""`fold-trip-count`: a trip count known from shapes becomes a constant; a dynamic one equal
to a sliced input's length goes. Outputs stay the same in itergraph and the peers."""

from __future__ import annotations

import pytest
from xf_models import (
    FLAVOURS,
    as_file,
    assert_runs_the_same,
    loops_of,
    onnx_loop,
    onnx_loop_feeds,
    ov_loop,
    ov_loop_feeds,
)

import itergraph as ig
from itergraph.ir.clone import clone_graph
from itergraph.passes.fold_trip_count import fold_trip_count
from itergraph.transforms import optimize


def _trip(model: ig.Model):
    loop = next(lp for lp in loops_of(model) if lp.name != "dead_loop")
    return loop.trip_count


@pytest.mark.parametrize("flavour", ["onnx.Loop", "openvino.Loop"])
def test_static_count_from_shape_becomes_a_constant(flavour, tmp_path):
    build, feeds_of = FLAVOURS[flavour]
    model = ig.load(as_file(build(), tmp_path, "in"))
    assert _trip(model).producer is not None  # Gather(Shape(x), 0)
    out = optimize(model, ["fold-trip-count"])
    t = _trip(out)
    assert t.producer is None and t.const is not None
    assert int(t.const) == feeds_of()[list(feeds_of())[0]].shape[0] == 5
    assert_runs_the_same(model, out, feeds_of(), tmp_path)


@pytest.mark.parametrize("n", [3, 6])
def test_dynamic_count_equal_to_a_slice_count_is_dropped(n, tmp_path):
    model = ig.load(as_file(ov_loop(dynamic=True), tmp_path, "in"))
    out = optimize(model, ["fold-trip-count"])
    assert _trip(model) is not None and _trip(out) is None
    assert loops_of(out)[0].sliced
    assert_runs_the_same(model, out, ov_loop_feeds(n), tmp_path)


def test_dynamic_count_without_a_slice_stays(tmp_path):
    """An ONNX Loop reads x by Gather, not by a sliced input: nothing bounds it but M."""
    model = ig.load(onnx_loop(n="n"))
    g = clone_graph(model.graph)
    assert fold_trip_count(g) == 0
    assert_runs_the_same(model, optimize(model, ["fold-trip-count"]), onnx_loop_feeds(4),
                         tmp_path)


@pytest.mark.parametrize("flavour", ["onnx.Scan", "openvino.TensorIterator"])
def test_loops_without_a_trip_count_are_left_alone(flavour, tmp_path):
    build, feeds_of = FLAVOURS[flavour]
    model = ig.load(as_file(build(), tmp_path, "in"))
    assert fold_trip_count(clone_graph(model.graph)) == 0
    out = optimize(model, ["fold-trip-count"])
    assert loops_of(out)[0].trip_count is None
    assert_runs_the_same(model, out, feeds_of(), tmp_path, peers=False)


def test_then_dead_ports_removes_the_shape_expression(tmp_path):
    model = ig.load(onnx_loop())
    out = optimize(model, ["fold-trip-count", "dead-ports"])
    assert [n.op_type for n in out.graph.nodes] == ["Loop"]
    assert out.run(onnx_loop_feeds())["y"].shape == (5, 3)
