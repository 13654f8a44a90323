"""`dead-ports`: unused carried values, scan and last outputs, sliced and invariant inputs and
whole loops go; outputs stay the same in itergraph, ONNX Runtime and OpenVINO."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from xf_models import (
    FLAVOURS,
    I64,
    F,
    as_file,
    assert_runs_the_same,
    loops_of,
    onnx_scan,
    onnx_scan_feeds,
    vi,
)

import itergraph as ig
from itergraph import cli
from itergraph.ir import Carried, Concat, Invariant, Last, Sliced
from itergraph.transforms import optimize

#: flavour -> what the one remaining loop keeps: (carried, sliced, invariant, last, concat)
KEPT = {
    "onnx.Loop": (1, 0, 0, 1, 1),
    "onnx.Scan": (1, 1, 0, 1, 1),
    "openvino.TensorIterator": (1, 1, 1, 1, 1),
    "openvino.Loop": (1, 1, 1, 1, 1),
}


def _census(loop) -> tuple[int, ...]:
    return (len(loop.ports_of(Carried)), len(loop.ports_of(Sliced)),
            len(loop.ports_of(Invariant)),
            sum(isinstance(p, Last) for p in loop.output_ports),
            sum(isinstance(p, Concat) for p in loop.output_ports))


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_dead_ports_per_flavour(flavour, tmp_path):
    build, feeds_of = FLAVOURS[flavour]
    model = ig.load(as_file(build(), tmp_path, "in"))
    before = _census(loops_of(model)[-1])
    out = optimize(model, ["dead-ports"])
    loops = loops_of(out)
    assert len(loops) == 1  # onnx.Loop: the loop nobody reads is gone
    assert loops[0].origin == flavour
    assert _census(loops[0]) == KEPT[flavour] != before
    assert len(loops[0].body.inputs) < len(loops_of(model)[0].body.inputs)
    assert_runs_the_same(model, out, feeds_of(), tmp_path)


def test_body_nodes_of_dropped_ports_go(tmp_path):
    model = ig.load(as_file(FLAVOURS["onnx.Loop"][0](), tmp_path, "in"))
    body = loops_of(optimize(model, ["dead-ports"]))[0].body
    names = {n.name for n in body.nodes}
    assert {"take_row", "accumulate", "squash"} <= names
    assert not names & {"dead_mul", "count"}


def test_sliced_input_stays_when_it_may_bound_the_count(tmp_path):
    """x and z have the symbolic length 'n': without z the count could differ, so z stays
    (its body parameter unread); its unused output and state still go."""
    model = ig.load(onnx_scan(n="n"))
    loop = loops_of(optimize(model, ["dead-ports"]))[0]
    assert _census(loop) == (1, 2, 0, 1, 1)
    assert_runs_the_same(model, optimize(model, ["dead-ports"]), onnx_scan_feeds(4), tmp_path,
                         peers=False)
    static = loops_of(optimize(ig.load(onnx_scan(n=4)), ["dead-ports"]))[0]
    assert _census(static) == (1, 1, 0, 1, 1)  # same static length as x: z goes


def _nested() -> onnx.ModelProto:
    """An outer Loop (3 steps) whose body runs an inner Loop (2 steps) with a dead counter."""
    inner = helper.make_graph(
        [helper.make_node("Add", ["a", "x"], ["a_out"]),
         helper.make_node("Add", ["k", "k"], ["k_out"], name="dead_double"),
         helper.make_node("Identity", ["c"], ["c_out"])], "inner",
        [vi("j", I64, []), vi("c", onnx.TensorProto.BOOL, []), vi("a", F, [2]),
         vi("k", F, [2])],
        [vi("c_out", onnx.TensorProto.BOOL, []), vi("a_out", F, [2]), vi("k_out", F, [2])])
    outer = helper.make_graph(
        [helper.make_node("Loop", ["two", "", "s", "s"], ["s_next", "k_final"], body=inner,
                          name="inner_loop"),
         helper.make_node("Identity", ["oc"], ["oc_out"])], "outer",
        [vi("i", I64, []), vi("oc", onnx.TensorProto.BOOL, []), vi("s", F, [2])],
        [vi("oc_out", onnx.TensorProto.BOOL, []), vi("s_next", F, [2])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["three", "", "s0"], ["s_final"], body=outer,
                          name="outer_loop")], "g",
        [vi("x", F, [2]), vi("s0", F, [2])], [vi("s_final", F, [2])],
        [onnx.numpy_helper.from_array(np.int64(2), "two"),
         onnx.numpy_helper.from_array(np.int64(3), "three")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_inner_loops_at_any_depth(tmp_path):
    model = ig.load(_nested())
    out = optimize(model, ["dead-ports"])
    inner = next(lp for lp in loops_of(out) if lp.name == "inner_loop")
    assert len(inner.carried) == 1 and len(inner.output_ports) == 1
    assert all(n.name != "dead_double" for n in inner.body.nodes)
    feeds = {"x": np.float32([1, 2]), "s0": np.float32([0.5, -1])}
    assert_runs_the_same(model, out, feeds, tmp_path)


def test_nothing_to_remove_counts_zero():
    from itergraph.ir.clone import clone_graph
    from itergraph.transforms import TRANSFORMS

    once = optimize(ig.load(_nested()), ["dead-ports"])
    assert TRANSFORMS["dead-ports"].build(None)(clone_graph(once.graph)) == 0


def test_cli(tmp_path):
    src = as_file(onnx_scan(), tmp_path, "in")
    dst = tmp_path / "out.onnx"
    assert cli.main(["optimize", str(src), str(dst), "--passes", "dead-ports"]) == 0
    assert len(ig.load(dst).graph.nodes[-1].sliced) == 1
    feeds = onnx_scan_feeds()
    np.testing.assert_allclose(ig.load(dst).run(feeds)["out"], ig.load(src).run(feeds)["out"])
