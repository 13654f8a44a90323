"""ir.clone: deep copies with fresh values that keep reading the same outer values."""

from __future__ import annotations

import numpy as np
from onnx import helper as h

from itergraph.ir import Graph, Node, Value, verify
from itergraph.ir.clone import clone_graph, clone_node
from onnx_builders import I64, F, body, const, model, vi
from passutil import assert_same_outputs, load, loops, rng


def _nested():
    """Outer Loop over rows; the inner Loop captures W (top level) and v (outer body)."""
    inner = body([h.make_node("MatMul", ["s_in", "W"], ["sw"]),
                  h.make_node("Add", ["sw", "v"], ["pre"]),
                  h.make_node("Tanh", ["pre"], ["s_out"]),
                  h.make_node("Identity", ["c_in"], ["c_out"])],
                 [vi("j", I64, []), vi("c_in", 9, []), vi("s_in", F, [4])],
                 [vi("c_out", 9, []), vi("s_out", F, [4])], name="inner")
    outer = body([h.make_node("Gather", ["X", "i"], ["v"], axis=0),
                  h.make_node("Loop", ["N", "", "h_in"], ["h_out"], body=inner),
                  h.make_node("Identity", ["c"], ["c2"]),
                  h.make_node("Identity", ["h_out"], ["y"])],
                 [vi("i", I64, []), vi("c", 9, []), vi("h_in", F, [4])],
                 [vi("c2", 9, []), vi("h_out", F, [4]), vi("y", F, [4])], name="outer")
    return model([h.make_node("Loop", ["M", "", "h0"], ["h", "Y"], body=outer)],
                 [vi("X", F, [5, 4]), vi("h0", F, [4])], [vi("h", F, [4]), vi("Y", F, [5, 4])],
                 [const("M", 5, np.int64), const("N", 3, np.int64),
                  const("W", rng(1).standard_normal((4, 4)).astype(np.float32) * 0.5)])


def test_clone_graph_gives_fresh_values_and_same_results():
    g = load(_nested())
    c = clone_graph(g)
    verify(c)
    old = {v.uid for _, n in g.walk() for v in n.outputs} | {v.uid for v in g.inputs}
    new = {v.uid for _, n in c.walk() for v in n.outputs} | {v.uid for v in c.inputs}
    assert not old & new
    assert [v.name for v in c.inputs] == [v.name for v in g.inputs]
    assert len(loops(c)) == 2 and all(a is not b for a, b in zip(loops(c), loops(g)))
    feeds = {"X": rng(2).standard_normal((5, 4)).astype(np.float32),
             "h0": np.zeros(4, np.float32)}
    assert_same_outputs(g, c, feeds, exact=True)


def test_clone_node_keeps_outer_values():
    g = load(_nested())
    loop = loops(g)[0]
    copy = clone_node(loop, {})
    assert copy.body is not loop.body
    assert [v for v in copy.inputs] == [v for v in loop.inputs]  # same outer objects
    inner_copy, inner = loops(copy.body)[0], loops(loop.body)[0]
    # the inner body's capture of W is the top-level W; its capture of v is the copy's own v
    caps_copy = {v.name: v for v in inner_copy.body.captures()}
    caps = {v.name: v for v in inner.body.captures()}
    assert caps_copy["W"] is caps["W"]
    assert caps_copy["v"] is not caps["v"]
    assert caps_copy["v"].producer in copy.body.nodes


def test_clone_plain_graph_with_initializers():
    x = Value("x")
    w = Value("w", const=np.ones(3, np.float32))
    n = Node("Add", [x, w], 1, version=14)
    g = Graph("g", [x], n.outputs, [n], [w])
    c = clone_graph(g)
    assert c.initializers[0] is not w and c.initializers[0].const is w.const
    assert c.nodes[0].inputs == [c.inputs[0], c.initializers[0]]
    assert c.outputs[0] is c.nodes[0].outputs[0]
