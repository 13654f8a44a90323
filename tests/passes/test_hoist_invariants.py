"""passes.hoist_invariants: loop-invariant body nodes move out, results unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.errors import ExecutionError
from itergraph.ir import Graph, Invariant, Last, Loop, Node, Sliced, Value, tensor
from itergraph.passes.hoist_invariants import hoist_invariants
from onnx_builders import I64, F, body, const, model, vi
from passutil import assert_same_outputs, load, loops, ops, rng, run, transformed

BOOL = 9


def _loop_model(extra_body_inits=()):
    """h = tanh(h @ (W^T * 2) + b) for M steps; W^T * 2 and the bias are loop-invariant."""
    b = body([h.make_node("Transpose", ["W"], ["WT"]),
              h.make_node("Mul", ["WT", "two"], ["W2"]),
              h.make_node("MatMul", ["h_in", "W2"], ["hw"]),
              h.make_node("Add", ["hw", "bias"], ["pre"]),
              h.make_node("Tanh", ["pre"], ["h_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", BOOL, []), vi("h_in", F, [2, 3])],
             [vi("c_out", BOOL, []), vi("h_out", F, [2, 3])], inits=extra_body_inits)
    return model([h.make_node("Loop", ["M", "", "h0"], ["h"], body=b)],
                 [vi("M", I64, []), vi("h0", F, [2, 3]), vi("W", F, [3, 3])],
                 [vi("h", F, [2, 3])], [const("two", np.float32(2.0)),
                                        const("bias", np.float32([0.1, -0.2, 0.3]))])


def _feeds(m=4):
    r = rng(3)
    return {"M": np.array(m, np.int64), "h0": r.standard_normal((2, 3)).astype(np.float32),
            "W": r.standard_normal((3, 3)).astype(np.float32) * 0.5}


def test_invariant_nodes_move_before_the_loop():
    g = load(_loop_model())
    t, n = transformed(g, hoist_invariants)
    assert n == 2
    assert ops(t) == ["Transpose", "Mul", "Loop"]
    assert ops(loops(t)[0].body) == ["MatMul", "Add", "Tanh", "Identity"]
    assert ops(loops(g)[0].body)[:2] == ["Transpose", "Mul"]  # the original is untouched
    for m in (0, 1, 4):
        assert_same_outputs(g, t, _feeds(m), exact=True)


def test_body_initializers_move_out_with_their_readers():
    m = _loop_model(extra_body_inits=[const("two", np.float32(3.0))])  # shadows the outer one
    g = load(m)
    t, n = transformed(g, hoist_invariants)
    assert n == 2 and ops(t)[:2] == ["Transpose", "Mul"]
    loop = loops(t)[0]
    assert not loop.body.initializers
    assert any(v.name == "two" and float(v.const) == 3.0 for v in t.initializers)
    assert_same_outputs(g, t, _feeds(), exact=True)


def _nested_model():
    """Outer loop over rows i; the inner loop uses W*W (invariant in both loops) and X[i]*3
    (invariant in the inner loop only)."""
    inner = body([h.make_node("Mul", ["W", "W"], ["WW"]),
                  h.make_node("Mul", ["v", "three"], ["v3"]),
                  h.make_node("MatMul", ["s_in", "WW"], ["sw"]),
                  h.make_node("Add", ["sw", "v3"], ["pre"]),
                  h.make_node("Tanh", ["pre"], ["s_out"]),
                  h.make_node("Identity", ["c_in"], ["c_out"])],
                 [vi("j", I64, []), vi("c_in", BOOL, []), vi("s_in", F, [4])],
                 [vi("c_out", BOOL, []), vi("s_out", F, [4])], name="inner")
    outer = body([h.make_node("Gather", ["X", "i"], ["v"], axis=0),
                  h.make_node("Loop", ["N", "", "h_in"], ["h_out"], body=inner),
                  h.make_node("Identity", ["c"], ["c2"]),
                  h.make_node("Identity", ["h_out"], ["y"])],
                 [vi("i", I64, []), vi("c", BOOL, []), vi("h_in", F, [4])],
                 [vi("c2", BOOL, []), vi("h_out", F, [4]), vi("y", F, [4])], name="outer")
    return model([h.make_node("Loop", ["M", "", "h0"], ["h", "Y"], body=outer)],
                 [vi("X", F, [5, 4]), vi("h0", F, [4]), vi("W", F, [4, 4])],
                 [vi("h", F, [4]), vi("Y", F, [5, 4])],
                 [const("M", 5, np.int64), const("N", 3, np.int64),
                  const("three", np.float32(3.0))])


def test_nested_loops_hoist_as_far_as_possible():
    g = load(_nested_model())
    t, n = transformed(g, hoist_invariants)
    assert n == 3  # W*W out of the inner loop, then out of the outer one; v*3 out of the inner
    outer = loops(t)[0]
    inner = loops(outer.body)[0]
    assert ops(t) == ["Mul", "Loop"]
    assert ops(outer.body) == ["Gather", "Mul", "Loop", "Identity", "Identity"]
    assert "Mul" not in ops(inner.body)
    r = rng(4)
    feeds = {"X": r.standard_normal((5, 4)).astype(np.float32),
             "h0": r.standard_normal(4).astype(np.float32),
             "W": r.standard_normal((4, 4)).astype(np.float32) * 0.4}
    assert_same_outputs(g, t, feeds, exact=True)


def test_random_ops_and_state_dependent_nodes_stay():
    b = body([h.make_node("RandomUniform", [], ["u"], shape=[3], seed=1.0),
              h.make_node("Add", ["s_in", "u"], ["s_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", BOOL, []), vi("s_in", F, [3])],
             [vi("c_out", BOOL, []), vi("s_out", F, [3])])
    m = model([h.make_node("Loop", ["M", "", "s0"], ["s"], body=b)],
              [vi("s0", F, [3])], [vi("s", F, [3])], [const("M", 3, np.int64)])
    t, n = transformed(load(m), hoist_invariants)
    assert n == 0 and ops(t) == ["Loop"]


def _ti_like(result_is_invariant_last: bool):
    """A canonical loop with an Invariant port: y_k = x_k + (c * 2); also outputs c*2 as Last."""
    x, c, two = Value("X", tensor("float32", (3, 2))), Value("C", tensor("float32", (2,))), \
        Value("two", tensor("float32", ()), const=np.array(2.0, np.float32))
    px, pc = Value("x_t", tensor("float32", (2,))), Value("c_p", tensor("float32", (2,)))
    mul = Node("Mul", [pc, two], 1, version=14)
    add = Node("Add", [px, mul.outputs[0]], 1, version=14)
    bd = Graph("body", [px, pc], [add.outputs[0], mul.outputs[0]], [mul, add])
    outs = [Last(add.outputs[0], Value("last"))]
    if result_is_invariant_last:
        outs.append(Last(mul.outputs[0], Value("c2")))
    loop = Loop(bd, [Sliced(x, px, axis=0), Invariant(c, pc)], outs)
    return Graph("g", [x, c], loop.outputs, [loop], [two])


def test_invariant_port_and_results_read_through_identity():
    g = _ti_like(result_is_invariant_last=True)
    t, n = transformed(g, hoist_invariants)
    assert n == 1 and ops(t) == ["Mul", "Loop"]
    loop = loops(t)[0]
    assert loop.output_ports[1].result.producer.op_type == "Identity"
    assert loop.output_ports[1].result.producer in loop.body.nodes
    r = rng(5)
    feeds = {"X": r.standard_normal((3, 2)).astype(np.float32),
             "C": r.standard_normal(2).astype(np.float32)}
    assert_same_outputs(g, t, feeds, exact=True)
    # zero iterations: a Last output of a non-carried value still has no value
    empty = {"X": np.zeros((0, 2), np.float32), "C": feeds["C"]}
    for graph in (g, t):
        with pytest.raises(ExecutionError, match="zero iterations"):
            run(graph, empty)
