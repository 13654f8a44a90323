"""`ir.builder.Builder`, the one node builder: the nodes it makes run as the ops they name
(the NumPy backend against NumPy), names stay unique both ways, shared constants are one."""

from __future__ import annotations

import itertools

import numpy as np

from itergraph.backends.numpy import run_graph
from itergraph.ir import Graph, Value, tensor
from itergraph.ir.builder import Builder, unique_name


def test_nodes_run_as_the_ops_they_name():
    g = Graph(name="g")
    x = Value("x", tensor("float32", (2, 3)))
    g.inputs = [x]
    b = Builder(g, "t", opset=17, nodes=g.nodes)
    y = b.node("Add", [x, b.const(np.float32(1.5))])
    z = b.unsqueeze(y, 0)
    first = b.node("Identity", [x], at=0, name="first")
    g.outputs = [z, first]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run_graph(g, {"x": a})
    np.testing.assert_array_equal(got[z.name], (a + 1.5)[None])
    np.testing.assert_array_equal(got["first"], a)
    assert g.nodes[0].name == "first" and g.nodes[1].version == 17
    names = [v.name for v in g.initializers] + [o.name for n in g.nodes for o in n.outputs]
    assert len(set(names)) == len(names)


def test_names_unique_against_a_taken_set():
    taken = {"a", "a_1"}
    b = Builder(Graph(name="g"), "", sep="", taken=taken)
    assert [b.fresh("a"), b.fresh("a"), b.fresh("b")] == ["a_2", "a_3", "b"]
    assert unique_name("t", {"t", "t~2"}, "{}~{}", 2) == "t~3"


def test_a_shared_counter_numbers_across_builders():
    count = itertools.count()
    b1, b2 = (Builder(Graph(name="g"), p, sep="", counter=count) for p in ("", "body/"))
    assert [b1.fresh("Add"), b2.fresh("Add"), b1.fresh("Add")] == [
        "Add_0", "body/Add_1", "Add_2"]


def test_shared_constants_are_one_initializer():
    g = Graph(name="g")
    b = Builder(g, "c")
    one = b.const(np.float32(1), shared=True)
    assert b.const(np.float32(1), shared=True) is one
    assert b.const(np.float64(1), shared=True) is not one  # another dtype, another constant
    assert b.const(np.float32(1)) is not one
    assert len(g.initializers) == 3
