"""ir.reads: the one answer to "what does a node read?", and its consumers agree on it."""

from __future__ import annotations

import numpy as np
import pytest

import itergraph as ig
from itergraph.ir import Carried, Graph, Invariant, Last, Loop, Node, Value, reads, tensor, verify

F32 = tensor("float32", (2,))


def _loop_whose_last_is_outer():
    """for k in range(3): s = s + 1;  outputs: s, and `w` (an outer value the body never reads)."""
    x = Value("x", F32)
    w_in = Value("w_in", F32)
    w = Value("w", F32)
    double = Node("Add", [w_in, w_in], [w], name="double")
    s_param, one, s_next = Value("s", F32), Value("one", F32, np.ones(2, np.float32)), Value("s1")
    body = Graph("body", inputs=[s_param], initializers=[one],
                 nodes=[Node("Add", [s_param, one], [s_next], name="inc")])
    trip = Value("M", tensor("int64", ()), np.array(3, np.int64))
    loop = Loop(body, [Carried(x, s_param, s_next)],
                [Last(s_next, Value("s_final")), Last(w, Value("w_final"))],
                trip_count=trip, name="loop")
    g = Graph("g", inputs=[x, w_in], outputs=loop.outputs, nodes=[double, loop],
              initializers=[trip])
    return g, loop, w


def test_reads_includes_outer_port_results():
    g, loop, w = _loop_whose_last_is_outer()
    got = reads(loop)
    assert w in got
    assert loop.body.inputs[0] not in got  # a body parameter is not read from outside
    assert w in loop.captured()


def test_graph_captures_include_port_results_of_nested_loops():
    g, loop, w = _loop_whose_last_is_outer()
    # Wrap the whole loop into an outer body: `w` is then a capture of that body.
    outer_body = Graph("outer", nodes=[loop], outputs=[loop.outputs[0]])
    assert w in outer_body.captures()


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_last_of_an_outer_value_runs_on_every_backend(backend):
    g, _, _ = _loop_whose_last_is_outer()
    verify(g)
    x = np.array([1.0, 2.0], np.float32)
    w_in = np.array([5.0, 7.0], np.float32)
    out = ig.load(g).run({"x": x, "w_in": w_in}, backend=backend)
    np.testing.assert_allclose(out["s_final"], x + 3)
    np.testing.assert_allclose(out["w_final"], 2 * w_in)


def test_invariant_port_value_is_read_not_its_param():
    x, p = Value("x", F32), Value("p", F32)
    y = Value("y")
    body = Graph("b", inputs=[p], nodes=[Node("Neg", [p], [y])])
    loop = Loop(body, [Invariant(x, p)], [Last(y, Value("out"))],
                trip_count=Value("M", tensor("int64", ()), np.array(2, np.int64)))
    assert reads(loop)[1:] == [x]  # trip count first, then the port value; nothing else
