"""ir.verify: one test per rule, each naming the element at fault, and valid controls."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import itergraph as ig
from itergraph.errors import ModelError
from itergraph.ir import (
    Carried,
    Concat,
    Graph,
    Invariant,
    Last,
    Loop,
    Node,
    Sliced,
    Value,
    tensor,
    verify,
)

F = tensor("float32", (2,))
I64 = tensor("int64", ())
B = tensor("bool", ())


def loop_graph() -> SimpleNamespace:
    """A valid loop using every port kind; each test breaks one thing in it.

    for k < M while go: s = s + X[k] + w;  outputs: Last(s1), Concat(s1).
    """
    X = Value("X", tensor("float32", (4, 2)))
    s0, w = Value("s0", F), Value("w", F)
    M = Value("M", I64, np.array(3, np.int64))
    k, c = Value("k", I64), Value("c", B)
    s, xk, wp = Value("s", F), Value("xk", F), Value("wp", F)
    a, s1, go = Value("a", F), Value("s1", F), Value("go", B)
    body = Graph("body", inputs=[k, c, s, xk, wp], nodes=[
        Node("Add", [s, xk], [a], name="add_x"),
        Node("Add", [a, wp], [s1], name="add_w"),
        Node("Identity", [c], [go], name="keep_going"),
    ])
    loop = Loop(body, [Carried(s0, s, s1), Sliced(X, xk), Invariant(w, wp)],
                [Last(s1, Value("s_final")), Concat(s1, Value("s_all"))],
                trip_count=M, iteration_param=k, condition_param=c, condition_result=go,
                name="the_loop")
    g = Graph("main", inputs=[X, s0, w], initializers=[M], nodes=[loop], outputs=loop.outputs)
    return SimpleNamespace(**locals())


def rejects(graph: Graph, *fragments: str) -> str:
    """Assert that `verify` raises ModelError whose message holds every fragment."""
    with pytest.raises(ModelError) as info:
        verify(graph)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


# --- valid controls -------------------------------------------------------------------------


def test_the_valid_loop_passes_and_runs():
    t = loop_graph()
    verify(t.g)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    s0, w = np.zeros(2, np.float32), np.ones(2, np.float32)
    out = ig.load(t.g).run({"X": x, "s0": s0, "w": w})
    np.testing.assert_allclose(out["s_final"], x[:3].sum(0) + 3)
    assert out["s_all"].shape == (3, 2)


def test_outer_value_as_last_result_is_valid():
    t = loop_graph()
    t.loop.add_output(Last(t.w, Value("w_out")))
    t.g.outputs = t.loop.outputs
    verify(t.g)


def test_outer_value_as_condition_result_and_precondition_is_valid():
    t = loop_graph()
    flag = Value("flag", B)
    t.g.inputs.append(flag)
    t.loop.condition_result = flag
    t.loop.precondition = flag
    verify(t.g)


def test_captures_at_depth_two_are_valid():
    """An inner loop's body reads `a` (top level) and `s` (the outer body's parameter)."""
    a = Value("a", F)
    s, s1 = Value("s", F), Value("s1", F)
    t, t1, u = Value("t", F), Value("t1", F), Value("u", F)
    inner_body = Graph("inner", inputs=[t], nodes=[
        Node("Add", [t, a], [u], name="add_a"),       # depth 2 reads the top level
        Node("Add", [u, s], [t1], name="add_s"),      # and the enclosing body
    ])
    M = Value("M", I64, np.array(2, np.int64))
    inner = Loop(inner_body, [Carried(s, t, t1)], [Last(t1, s1)], trip_count=M, name="inner")
    outer_body = Graph("outer", inputs=[s], nodes=[inner])
    x = Value("x", F)
    outer = Loop(outer_body, [Carried(x, s, s1)], [Last(s1, Value("y"))], trip_count=M,
                 name="outer")
    g = Graph("main", inputs=[x, a], initializers=[M], nodes=[outer], outputs=outer.outputs)
    verify(g)


def test_concat_length_defined_outside_is_valid():
    t = loop_graph()
    n = Value("n", I64)
    t.g.inputs.append(n)
    t.loop.output_ports[1].length = n
    verify(t.g)


def test_omitted_optional_inputs_are_valid():
    x, y = Value("x", F), Value("y", F)
    g = Graph("g", inputs=[x], nodes=[Node("Clip", [x, None, None], [y], name="clip")],
              outputs=[y])
    verify(g)


# --- definitions ----------------------------------------------------------------------------


def test_graph_input_listed_twice():
    x = Value("x", F)
    rejects(Graph("g", inputs=[x, x], outputs=[x]),
            "graph 'g'", "value 'x' is defined twice", "graph input")


def test_initializer_that_is_also_an_input():
    x = Value("x", F, np.zeros(2, np.float32))
    rejects(Graph("g", inputs=[x], initializers=[x], outputs=[x]),
            "value 'x' is defined twice", "initializer")


def test_node_output_that_is_a_graph_input():
    x = Value("x", F)
    rejects(Graph("g", inputs=[x], nodes=[Node("Neg", [x], [x], name="neg")], outputs=[x]),
            "value 'x' is defined twice", "Neg node 'neg'")


def test_two_nodes_producing_the_same_value():
    x, y = Value("x", F), Value("y", F)
    n1 = Node("Neg", [x], [y], name="first")
    n2 = Node("Abs", [x], name="second")
    n2.outputs = [y]
    rejects(Graph("g", inputs=[x], nodes=[n1, n2], outputs=[y]),
            "value 'y' is defined twice", "Abs node 'second'")


def test_unnamed_value_is_named_by_its_uid():
    x = Value("", F)
    rejects(Graph("g", inputs=[x, x], outputs=[x]), f"<value {x.uid}>")


def test_initializer_without_data():
    x, w, y = Value("x", F), Value("w", F), Value("y", F)
    rejects(Graph("g", inputs=[x], initializers=[w],
                  nodes=[Node("Add", [x, w], [y], name="add")], outputs=[y]),
            "graph 'g'", "initializer 'w' has no data")


# --- uses -----------------------------------------------------------------------------------


def test_input_never_defined():
    x, ghost, y = Value("x", F), Value("ghost", F), Value("y", F)
    rejects(Graph("g", inputs=[x], nodes=[Node("Add", [x, ghost], [y], name="add")],
                  outputs=[y]),
            "Add node 'add'", "graph 'g'", "input 1 'ghost'", "not defined before use")


def test_input_defined_by_a_later_node():
    x, y, z = Value("x", F), Value("y", F), Value("z", F)
    late = Node("Neg", [x], [y], name="late")
    early = Node("Abs", [y], [z], name="early")
    rejects(Graph("g", inputs=[x], nodes=[early, late], outputs=[z]),
            "Abs node 'early'", "input 0 'y'", "not defined before use")


def test_outer_node_reading_a_body_value():
    t = loop_graph()
    leak = Node("Neg", [t.a], [Value("leaked", F)], name="leak")
    t.g.nodes.append(leak)
    rejects(t.g, "Neg node 'leak'", "graph 'main'", "input 0 'a'", "not defined before use")


def test_body_capturing_an_outer_value_defined_after_the_loop():
    t = loop_graph()
    later = Value("later", F)
    t.g.nodes.append(Node("Neg", [t.w], [later], name="after"))
    t.body.nodes.append(Node("Add", [t.s1, later], [Value("z", F)], name="reads_later"))
    rejects(t.g, "Add node 'reads_later'", "graph 'body'", "input 1 'later'",
            "not defined before use")


def test_undefined_value_in_a_nested_body():
    x, y, ghost = Value("x", F), Value("y", F), Value("ghost", F)
    then_g = Graph("then", nodes=[Node("Add", [x, ghost], [y], name="inner_add")], outputs=[y])
    else_g = Graph("else", outputs=[x])
    cond = Value("cond", B)
    node = Node("If", [cond], [Value("r", F)], {"then_branch": then_g, "else_branch": else_g},
                name="branch")
    rejects(Graph("g", inputs=[cond, x], nodes=[node], outputs=node.outputs),
            "Add node 'inner_add'", "graph 'then'", "input 1 'ghost'")


def test_graph_output_not_defined():
    x, ghost = Value("x", F), Value("ghost", F)
    rejects(Graph("g", inputs=[x], outputs=[x, ghost]),
            "graph 'g'", "output 1 'ghost' is not defined")


def test_subgraph_output_not_defined():
    t = loop_graph()
    t.body.outputs = [Value("nowhere", F)]
    rejects(t.g, "graph 'body'", "output 0 'nowhere' is not defined")


def test_loop_trip_count_not_defined():
    t = loop_graph()
    t.loop.trip_count = Value("M2", I64)
    rejects(t.g, "Loop node 'the_loop'", "input 0 'M2'", "not defined before use")


# --- loop ports -----------------------------------------------------------------------------


def test_iteration_parameter_not_a_body_parameter():
    t = loop_graph()
    t.loop.iteration_param = Value("stray_k", I64)
    rejects(t.g, "Loop node 'the_loop'", "iteration parameter 'stray_k'",
            "not a parameter of its body")


def test_iteration_parameter_that_is_a_body_value_but_not_a_parameter():
    t = loop_graph()
    t.loop.iteration_param = t.a
    rejects(t.g, "Loop node 'the_loop'", "iteration parameter 'a'", "not a parameter")


def test_condition_parameter_not_a_body_parameter():
    t = loop_graph()
    t.loop.condition_param = Value("stray_c", B)
    rejects(t.g, "Loop node 'the_loop'", "condition parameter 'stray_c'",
            "not a parameter of its body")


def test_condition_result_not_a_body_or_outer_value():
    t = loop_graph()
    t.loop.condition_result = Value("stray_go", B)
    rejects(t.g, "Loop node 'the_loop'", "condition result 'stray_go'",
            "is not a value of its body")


def test_precondition_not_a_body_or_outer_value():
    t = loop_graph()
    t.loop.precondition = Value("stray_pre", B)
    rejects(t.g, "Loop node 'the_loop'", "precondition 'stray_pre'", "is not a value of its body")


def test_precondition_defined_in_a_nested_body_is_not_a_body_value():
    """A value of the inner loop's body is not a value of the outer loop's body."""
    t = loop_graph()
    u, u1, deep = Value("u", F), Value("u1", F), Value("deep", B)
    inner_body = Graph("inner", inputs=[u], nodes=[
        Node("Neg", [u], [u1], name="neg"), Node("IsNaN", [u1], [deep], name="deep_flag")])
    inner = Loop(inner_body, [Carried(t.s1, u, u1)], [Last(u1, Value("u_final", F))],
                 trip_count=t.M, name="inner")
    t.body.nodes.append(inner)
    t.loop.precondition = deep
    rejects(t.g, "Loop node 'the_loop'", "precondition 'deep'")


def test_input_port_parameter_not_a_body_parameter():
    t = loop_graph()
    t.loop.input_ports[2].param = Value("stray_param", F)
    rejects(t.g, "Loop node 'the_loop'", "input port 2 parameter 'stray_param'",
            "not a parameter of its body")


def test_body_parameter_bound_twice():
    t = loop_graph()
    t.loop.input_ports[2].param = t.xk  # the sliced port's parameter
    rejects(t.g, "Loop node 'the_loop'", "body parameter 'xk' is bound twice")


def test_carried_result_not_a_body_or_outer_value():
    t = loop_graph()
    t.loop.input_ports[0].result = Value("stray_result", F)
    rejects(t.g, "Loop node 'the_loop'", "carried port 0 result 'stray_result'",
            "is not a value of its body")


@pytest.mark.parametrize("kind", ["last", "concat"])
def test_output_port_result_not_a_body_or_outer_value(kind):
    t = loop_graph()
    stray = Value("stray_out", F)
    port = (Last if kind == "last" else Concat)(stray, Value("o", F))
    t.loop.add_output(port)
    t.g.outputs = t.loop.outputs
    rejects(t.g, "Loop node 'the_loop'", "output port 2 result 'stray_out'",
            "is not a value of its body")


def test_sliced_stride_zero():
    t = loop_graph()
    t.loop.input_ports[1].stride = 0
    rejects(t.g, "Loop node 'the_loop'", "sliced input 1 has stride 0")


@pytest.mark.parametrize("part_size", [0, -1])
def test_sliced_part_size_below_one(part_size):
    t = loop_graph()
    t.loop.input_ports[1].keep_axis = True
    t.loop.input_ports[1].part_size = part_size
    rejects(t.g, "Loop node 'the_loop'", f"sliced input 1 has part_size {part_size}")


def test_sliced_dropping_its_axis_needs_part_size_one():
    t = loop_graph()
    t.loop.input_ports[1].part_size = 2  # keep_axis stays False
    rejects(t.g, "Loop node 'the_loop'", "sliced input 1 drops its axis but part_size != 1")


def test_sliced_keeping_its_axis_may_have_part_size_two():
    t = loop_graph()
    t.loop.input_ports[1].keep_axis = True
    t.loop.input_ports[1].part_size = 2
    verify(t.g)


def test_concat_length_defined_inside_the_loop():
    t = loop_graph()
    n = Value("n_inside", I64)
    t.body.nodes.append(Node("Size", [t.s1], [n], name="size"))
    t.loop.output_ports[1].length = n
    rejects(t.g, "Loop node 'the_loop'", "length of output 1 ('n_inside')",
            "must be defined outside the loop")


def test_errors_in_a_nested_loop_name_the_nested_loop():
    t = loop_graph()
    u, u1 = Value("u", F), Value("u1", F)
    inner_body = Graph("inner", inputs=[u], nodes=[Node("Neg", [u], [u1], name="neg")])
    inner = Loop(inner_body, [Sliced(t.s1, u, stride=0)], [Last(u1, Value("u_final", F))],
                 trip_count=t.M, name="inner")
    t.body.nodes.append(inner)
    rejects(t.g, "Loop node 'inner'", "sliced input 0 has stride 0")


def test_iteration_parameter_also_bound_by_a_port():
    t = loop_graph()
    t.loop.iteration_param = t.wp  # also the invariant port's parameter
    rejects(t.g, "Loop node 'the_loop'", "body parameter 'wp' is bound twice")


def test_iteration_and_condition_parameter_the_same():
    t = loop_graph()
    t.loop.condition_param = t.k
    rejects(t.g, "Loop node 'the_loop'", "body parameter 'k' is bound twice")


def test_body_parameter_bound_to_nothing():
    """Before this rule, such a loop loaded and failed at run time inside a kernel."""
    t = loop_graph()
    extra = Value("extra", F)
    t.body.inputs.append(extra)
    rejects(t.g, "Loop node 'the_loop'", "body parameter 'extra' is bound to nothing")


def test_body_value_that_redefines_an_outer_value():
    """A value has one definition in the whole model, not one per scope."""
    t = loop_graph()
    t.body.nodes.append(Node("Neg", [t.s1], [t.w], name="redefine"))
    rejects(t.g, "graph 'body'", "value 'w' is defined twice", "Neg node 'redefine'")


def test_body_parameter_that_is_an_outer_value():
    t = loop_graph()
    t.body.inputs[4] = t.w  # the invariant port's parameter is now the outer value itself
    t.loop.input_ports[2].param = t.w
    t.body.nodes[1].inputs = [t.a, t.w]
    rejects(t.g, "graph 'body'", "value 'w' is defined twice", "graph input")


@pytest.mark.parametrize("flag,value,fragment", [
    ("negative_trip_count", "never", "negative_trip_count must be"),
    ("strict_slices", np.array(True), "strict_slices must be a bool"),
    ("equal_slices", 1, "equal_slices must be a bool"),
])
def test_loop_flags_have_defined_values(flag, value, fragment):
    t = loop_graph()
    setattr(t.loop, flag, value)
    rejects(t.g, "the_loop", fragment)
