"""What XLA cannot express runs on NumPy, node by node, and `explain` says why."""

from __future__ import annotations

import numpy as np
from jaxutil import compare, onnx_graph, vi
from onnx import TensorProto as T
from onnx import helper as h

from itergraph import Model
from itergraph.backends import jax as jb
from itergraph.backends.jax.driver import DriverStep
from itergraph.backends.jax.jit_step import JitStep
from itergraph.backends.jax.numpy_step import NumpyStep
from itergraph.ir import Carried, Graph, Last, Loop, Node, Value, tensor


def _steps(cg):
    out, plan = [], cg.root.last_plan
    while plan is not None:
        out.extend(type(s).__name__ for s in plan.steps)
        plan = plan.tail.last_plan if plan.tail is not None else None
    return out


def _by_element(recs):
    return {r.element: r for r in recs}


def test_an_op_without_lowering_splits_the_graph_into_segments():
    nodes = [h.make_node("Exp", ["x"], ["e"], name="exp"),
             h.make_node("NonZero", ["e_gt"], ["nz"], name="nonzero"),
             h.make_node("Greater", ["e", "one"], ["e_gt"], name="gt"),
             h.make_node("Cast", ["nz"], ["nzf"], to=T.FLOAT, name="cast"),
             h.make_node("ReduceSum", ["nzf"], ["s"], keepdims=0, name="sum"),
             h.make_node("Mul", ["s", "e"], ["y"], name="mul")]
    nodes = [nodes[0], nodes[2], nodes[1], *nodes[3:]]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, None)],
                   {"one": np.float32(1.5)})
    x = np.array([[0.1, 0.9, -1], [2, 0.2, 0.5]], np.float32)
    _, cg = compare(g, {"x": x}, compiled=False)
    assert _steps(cg) == ["JitStep", "NumpyStep", "JitStep"]
    recs = _by_element(cg.explain())
    assert not recs["NonZero node 'nonzero'"].compiles
    assert "no JAX lowering for op 'NonZero'" in recs["NonZero node 'nonzero'"].reason
    assert recs["Exp node 'exp'"].compiles and recs["Mul node 'mul'"].compiles
    # a different number of nonzeros: the rest of the graph is planned again for its shape
    compare(g, {"x": -x}, compiled=False)
    static = _by_element(jb.explain(g))
    assert not static["NonZero node 'nonzero'"].compiles and static["Exp node 'exp'"].compiles
    assert not jb.compile_graph(g).fully_compiled


def test_sequences_run_on_numpy_and_the_text_explains():
    # a position fed at run time: the list's order is not known before it (a list of known
    # values is not a sequence for XLA: passes.static_sequences)
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"),
             h.make_node("SequenceConstruct", ["r", "x"], ["seq0"], name="mkseq"),
             h.make_node("SequenceInsert", ["seq0", "x", "k"], ["seq"], name="put"),
             h.make_node("ConcatFromSequence", ["seq"], ["c"], axis=0, name="cat"),
             h.make_node("Tanh", ["c"], ["y"], name="tanh")]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, [2]), vi("k", T.INT64, [])],
                   [vi("y", T.FLOAT, None)])
    _, cg = compare(g, {"x": np.array([-1, 2], np.float32), "k": np.array(1, np.int64)},
                    compiled=False)
    assert _steps(cg) == ["JitStep", "NumpyStep", "JitStep"]
    text = Model(g).explain("jax")
    assert "[numpy] SequenceConstruct node 'mkseq'" in text
    assert "[xla] Tanh node 'tanh'" in text
    data = Model(g).explanation("jax")
    assert {"element": "Tanh node 'tanh'", "engine": "xla"}.items() <= next(
        e for e in data["elements"] if e["element"] == "Tanh node 'tanh'").items()
    on_numpy = [e["element"] for e in data["elements"] if e["engine"] == "numpy"]
    assert on_numpy == ["SequenceConstruct node 'mkseq'", "SequenceInsert node 'put'",
                        "ConcatFromSequence node 'cat'"]
    assert data["summary"] == "3 element(s) fall back to NumPy"


def test_a_shape_computed_from_data_sends_the_reshape_to_numpy_and_stays_known_after():
    # k = number of positive entries (run-time data) decides the reshape target
    nodes = [h.make_node("Greater", ["x", "zero"], ["pos"]),
             h.make_node("Cast", ["pos"], ["posi"], to=T.INT64),
             h.make_node("ReduceSum", ["posi", "ax"], ["k"], keepdims=1),
             h.make_node("Concat", ["k", "m1"], ["shape"], axis=0),
             h.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             h.make_node("Shape", ["r"], ["rs"]),
             h.make_node("Expand", ["one", "rs"], ["y"], name="expand")]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, None)],
                   {"zero": np.float32(0), "ax": np.array([0]), "m1": np.array([-1]),
                    "one": np.float32(1)})
    x = np.array([1, -2, -3, 4], np.float32)
    _, cg = compare(g, {"x": x}, compiled=False)
    recs = _by_element(cg.explain())
    assert "known at compile time" in recs["Reshape node 'reshape'"].reason
    assert recs["Expand node 'expand'"].compiles


def test_a_loop_holding_a_sequence_op_falls_back_whole_and_names_the_inner_node():
    x0 = Value("x0", tensor("float32", (2,)))
    k = Value("k", tensor("int64", ()))  # a position fed at run time: a list XLA cannot hold
    body = Graph("body")
    p = Value("p", tensor("float32", (2,)))
    body.inputs = [p]
    seq = body.add(Node("SequenceConstruct", [p, p], 1, version=17, name="mk")).outputs[0]
    seq = body.add(Node("SequenceInsert", [seq, p, k], 1, version=17, name="put")).outputs[0]
    cat = body.add(Node("ConcatFromSequence", [seq], 1, {"axis": 0, "new_axis": 1},
                        version=17, name="cat")).outputs[0]
    nxt = body.add(Node("ReduceSum", [cat, Value("a", const=np.array([0]))], 1, {"keepdims": 0},
                        version=17)).outputs[0]
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=Value("M", const=np.array(3)),
                name="L")
    g = Graph("g", [x0, k], [loop.add_output(Last(nxt, Value("y")))], [loop],
              opset_imports={"": 17})
    got, cg = compare(g, {"x0": np.ones(2, np.float32), "k": np.array(1)}, compiled=False)
    np.testing.assert_array_equal(got["y"], [27, 27])
    (rec,) = cg.explain()
    assert rec.element == "Loop node 'L'" and not rec.compiles
    assert "SequenceConstruct node 'mk'" in rec.reason
    (srec,) = jb.explain(g)
    assert not srec.compiles and "sequence" in srec.reason


def test_plans_are_cached_per_signature_and_fast_paths_are_one_jit():
    g = onnx_graph([h.make_node("Add", ["x", "x"], ["y"])], [vi("x", T.FLOAT, None)],
                   [vi("y", T.FLOAT, None)])
    cg = jb.compile_graph(g)
    for shape in [(2,), (3, 4), (2,)]:
        x = np.ones(shape, np.float32)
        np.testing.assert_array_equal(cg.run({"x": x})["y"], 2 * x)
    assert len(cg.root.plans) == 2
    assert all(len(p.steps) == 1 and isinstance(p.steps[0], JitStep)
               for p in cg.root.plans.values())
    assert cg.fully_compiled
    assert NumpyStep and DriverStep  # the other kinds of step, exercised elsewhere


def test_a_driven_loop_whose_body_cannot_compile_runs_on_numpy():
    """A loop that can stop early, with a concatenated output, and a NonZero in its body."""
    x0 = Value("x0", tensor("float32", (3,)))
    lim = Value("lim", tensor("float32", ()))
    body = Graph("body")
    p = Value("p", tensor("float32", (3,)))
    body.inputs = [p]
    one = Value("one", const=np.ones((), np.float32))
    nxt = body.add(Node("Add", [p, one], 1, version=17)).outputs[0]
    nz = body.add(Node("NonZero", [nxt], 1, version=17, name="nz")).outputs[0]
    cnt = body.add(Node("Size", [nz], 1, version=17)).outputs[0]
    s = body.add(Node("ReduceSum", [nxt], 1, {"keepdims": 0}, version=17)).outputs[0]
    cond = body.add(Node("Less", [s, lim], 1, version=17)).outputs[0]
    loop = Loop(body, [Carried(x0, p, nxt)], condition_result=cond, name="W")
    from itergraph.ir import Concat

    outs = [loop.add_output(Last(nxt, Value("y"))), loop.add_output(Concat(cnt, Value("ns")))]
    g = Graph("g", [x0, lim], outs, [loop], opset_imports={"": 17})
    got, cg = compare(g, {"x0": np.array([-2, 0, 1], np.float32), "lim": np.float32(12)},
                      compiled=False)
    (rec,) = cg.explain()
    assert not rec.compiles and "NonZero node 'nz'" in rec.reason


def test_maxpool_with_indices_is_explained_as_numpy_before_the_run():
    """A MaxPool with its indices output (OpenVINO's MaxPool-8 always has one) runs on NumPy;
    the static `explain` says so too, as the run's records do (it said XLA before)."""
    nodes = [h.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], name="pool"),
             h.make_node("Relu", ["y"], ["r"], name="relu")]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, [1, 2, 4, 4])],
                   [vi("r", T.FLOAT, None), vi("i", T.INT64, None)])
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    _, cg = compare(g, {"x": x}, compiled=False)
    static = _by_element(jb.explain(Model(g).graph))
    ran = _by_element(cg.explain())
    assert not static["MaxPool node 'pool'"].compiles
    assert "indices output" in static["MaxPool node 'pool'"].reason
    assert not ran["MaxPool node 'pool'"].compiles
