"""Every build-time rule of the network API is a ModelError naming the layers involved."""

from __future__ import annotations

import numpy as np
import pytest
from net_helpers import const, ew, i32, new_network, output

import itergraph as ig
import itergraph.network as trt

E = trt.ElementWiseOperation
LO = trt.LoopOutput


def _loop(net, x_shape=(3, 2), count=True):
    """A loop iterating over input x, with an optional COUNT of 3."""
    x = net.add_input("x", trt.float32, x_shape)
    loop = net.add_loop()
    loop.name = "L"
    if count:
        loop.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    it = loop.add_iterator(x)
    it.name = "iter"
    return loop, it.get_output(0)


def _concat_out(net, loop, t, name="y"):
    lo = loop.add_loop_output(t, LO.CONCATENATE)
    lo.set_input(1, i32(net, 3))
    lo.name = f"{name}_out"
    output(net, lo.get_output(0), name)
    return lo


def _raises(net, *patterns):
    with pytest.raises(ig.ModelError) as info:
        net.to_graph()
    for p in patterns:
        assert p in str(info.value), (p, str(info.value))
    return str(info.value)


def test_two_count_limits():
    net = new_network()
    loop, row = _loop(net)
    t = loop.add_trip_limit(i32(net, 2), trt.TripLimit.COUNT)
    t.name = "second"
    _concat_out(net, loop, row)
    _raises(net, "2 COUNT trip limits", "'second'", "loop 'L'")


def test_two_while_limits():
    net = new_network()
    loop, row = _loop(net)
    for name in ("w1", "w2"):
        loop.add_trip_limit(const(net, np.array(True)), trt.TripLimit.WHILE).name = name
    _concat_out(net, loop, row)
    _raises(net, "2 WHILE trip limits", "'w1'", "'w2'")


def test_no_trip_limit():
    net = new_network()
    loop, row = _loop(net, count=False)
    _concat_out(net, loop, row)
    _raises(net, "loop 'L' has no trip limit")


def test_recurrence_next_never_set():
    net = new_network()
    loop, row = _loop(net)
    rec = loop.add_recurrence(const(net, np.zeros(2, np.float32)))
    rec.name = "acc"
    loop.add_loop_output(rec.get_output(0), LO.LAST_VALUE)
    _concat_out(net, loop, row)
    _raises(net, "'acc'", "next value was never set")


def test_recurrence_next_shape_differs():
    net = new_network()
    loop, row = _loop(net)
    rec = loop.add_recurrence(const(net, np.zeros(1, np.float32)))
    rec.name = "acc"
    nxt = net.add_elementwise(rec.get_output(0), row, E.SUM)  # (1,) + (2,) -> (2,)
    nxt.name = "grow"
    rec.set_input(1, nxt.get_output(0))
    output(net, loop.add_loop_output(rec.get_output(0), LO.LAST_VALUE).get_output(0), "y")
    _raises(net, "'acc'", "'grow'", "shape (2,)", "shape (1,)")


def test_recurrence_next_type_differs():
    net = new_network()
    loop, row = _loop(net)
    rec = loop.add_recurrence(i32(net, 0))
    rec.name = "acc"
    rec.set_input(1, net.add_cast(rec.get_output(0), trt.float32).get_output(0))
    output(net, loop.add_loop_output(rec.get_output(0), LO.LAST_VALUE).get_output(0), "y")
    _raises(net, "'acc'", "FLOAT", "INT32")


def test_recurrence_initial_defined_inside():
    net = new_network()
    loop, row = _loop(net)
    rec = loop.add_recurrence(row)
    rec.name = "bad_rec"
    rec.set_input(1, rec.get_output(0))
    output(net, loop.add_loop_output(rec.get_output(0), LO.LAST_VALUE).get_output(0), "y")
    _raises(net, "'bad_rec'", "initial value", "defined inside loop 'L'")


def test_length_defined_inside():
    net = new_network()
    loop, row = _loop(net)
    n = net.add_reduce(net.add_cast(row, trt.int32).get_output(0), trt.ReduceOperation.SUM,
                       1, False)
    n.name = "inner_len"
    lo = _concat_out(net, loop, row)
    lo.set_input(1, n.get_output(0))
    _raises(net, "'y_out'", "length", "'inner_len'", "defined inside loop 'L'")


def test_last_value_of_non_recurrence():
    net = new_network()
    loop, row = _loop(net)
    lo = loop.add_loop_output(row, LO.LAST_VALUE)
    lo.name = "last"
    output(net, lo.get_output(0), "y")
    _raises(net, "'last'", "LAST_VALUE needs the output of a recurrence", "'iter'")


def test_last_value_of_other_loops_recurrence():
    net = new_network()
    loop, row = _loop(net)
    other = net.add_loop()
    other.name = "M"
    other.add_trip_limit(i32(net, 2), trt.TripLimit.COUNT)
    rec = other.add_recurrence(const(net, np.zeros(2, np.float32)))
    rec.set_input(1, rec.get_output(0))
    output(net, other.add_loop_output(rec.get_output(0), LO.LAST_VALUE).get_output(0), "m")
    lo = loop.add_loop_output(rec.get_output(0), LO.LAST_VALUE)
    lo.name = "wrong_last"
    output(net, lo.get_output(0), "y")
    _concat_out(net, loop, row, "z")
    _raises(net, "'wrong_last'", "LAST_VALUE needs the output of a recurrence layer of loop 'L'")


def test_interior_value_used_outside():
    net = new_network()
    loop, row = _loop(net)
    _concat_out(net, loop, row)
    leak = net.add_activation(row, trt.ActivationType.RELU)
    leak.name = "leak"
    output(net, leak.get_output(0), "leaked")
    _raises(net, "'leaked'", "'leak'", "inside loop 'L'", "loop output")


def test_interiors_of_unrelated_loops_mixed():
    net = new_network()
    loop, row = _loop(net)
    _concat_out(net, loop, row)
    other = net.add_loop()
    other.name = "M"
    other.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    row2 = other.add_iterator(net.add_input("x2", trt.float32, (3, 2))).get_output(0)
    _concat_out(net, other, row2, "z")
    mix = net.add_elementwise(row, row2, E.SUM)
    mix.name = "mix"
    output(net, mix.get_output(0), "w")
    _raises(net, "'mix'", "loop 'L'", "loop 'M'", "not nested")


def test_while_from_iterator():
    net = new_network()
    loop, row = _loop(net)
    s = net.add_reduce(row, trt.ReduceOperation.SUM, 1, False).get_output(0)
    cond = net.add_elementwise(s, const(net, np.float32(0)), E.GREATER)
    cond.name = "cond"
    loop.add_trip_limit(cond.get_output(0), trt.TripLimit.WHILE).name = "while"
    _concat_out(net, loop, row)
    _raises(net, "'while'", "not on iterators", "'iter'")


def test_while_from_loop_output():
    net = new_network()
    x = net.add_input("x", trt.float32, (3, 2))
    outer = net.add_loop()
    outer.name = "outer"
    r = outer.add_recurrence(x)
    inner = net.add_loop()
    inner.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    row = inner.add_iterator(r.get_output(0)).get_output(0)
    lo = inner.add_loop_output(row, LO.CONCATENATE)
    lo.name = "inner_out"
    s = net.add_reduce(lo.get_output(0), trt.ReduceOperation.SUM, 3, False).get_output(0)
    cond = ew(net, s, const(net, np.float32(100)), E.LESS)
    outer.add_trip_limit(cond, trt.TripLimit.WHILE).name = "while"
    r.set_input(1, ew(net, r.get_output(0), r.get_output(0), E.SUM))
    output(net, outer.add_loop_output(r.get_output(0), LO.LAST_VALUE).get_output(0), "y")
    _raises(net, "'while'", "loop outputs", "'inner_out'")


def test_not_cleanly_nested():
    net = new_network()
    a_in = net.add_input("a", trt.float32, (3, 2))
    b_in = net.add_input("b", trt.float32, (3, 2))
    A, B = net.add_loop(), net.add_loop()
    A.name, B.name = "A", "B"
    for lp in (A, B):
        lp.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    ra = A.add_iterator(a_in).get_output(0)
    rb = B.add_iterator(b_in).get_output(0)
    A.add_loop_output(rb, LO.CONCATENATE).name = "A_reads_B"
    B.add_loop_output(ra, LO.CONCATENATE).name = "B_reads_A"
    output(net, A.outputs[0].get_output(0), "ya")
    _raises(net, "loop 'A'", "loop 'B'", "not cleanly nested", "'A_reads_B'", "'B_reads_A'")


def test_cycle_without_recurrence():
    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    a = net.add_elementwise(x, x, E.SUM)
    a.name = "a"
    b = net.add_elementwise(a.get_output(0), x, E.PROD)
    b.name = "b"
    a.set_input(1, b.get_output(0))
    output(net, b.get_output(0), "y")
    _raises(net, "cycle", "'a'", "'b'")


def test_cycle_through_a_loop():
    net = new_network()
    x = net.add_input("x", trt.float32, (3, 2))
    loop = net.add_loop()
    loop.name = "L"
    loop.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    rec.set_input(1, rec.get_output(0))
    last = loop.add_loop_output(rec.get_output(0), LO.LAST_VALUE).get_output(0)
    feed_back = net.add_identity(last)
    feed_back.name = "back"
    rec.set_input(0, feed_back.get_output(0))
    output(net, last, "y")
    _raises(net, "cycle")


def test_count_must_be_0d_integer():
    net = new_network()
    loop, row = _loop(net, count=False)
    loop.add_trip_limit(const(net, np.float32(3)), trt.TripLimit.COUNT).name = "cnt"
    _concat_out(net, loop, row)
    _raises(net, "'cnt'", "0-D INT32 or INT64", "FLOAT")
    net = new_network()
    loop, row = _loop(net, count=False)
    loop.add_trip_limit(const(net, np.array([3], np.int32)), trt.TripLimit.COUNT).name = "cnt"
    _concat_out(net, loop, row)
    _raises(net, "'cnt'", "shape (1,)")


def test_while_must_be_0d_bool():
    net = new_network()
    loop, row = _loop(net)
    loop.add_trip_limit(i32(net, 1), trt.TripLimit.WHILE).name = "w"
    _concat_out(net, loop, row)
    _raises(net, "'w'", "0-D BOOL")


def test_count_defined_inside_loop():
    net = new_network()
    loop, row = _loop(net, count=False)
    n = net.add_cast(net.add_reduce(row, trt.ReduceOperation.SUM, 1, False).get_output(0),
                     trt.int32)
    loop.add_trip_limit(n.get_output(0), trt.TripLimit.COUNT).name = "cnt"
    _concat_out(net, loop, row)
    _raises(net, "'cnt'", "trip count", "defined inside loop 'L'")


def test_iterator_input_defined_inside_loop():
    net = new_network()
    loop, row = _loop(net)
    it2 = loop.add_iterator(row)
    it2.name = "it2"
    _concat_out(net, loop, it2.get_output(0))
    _raises(net, "'it2'", "defined inside loop 'L'")


def test_conditional_rules():
    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    c = net.add_if_conditional()
    c.name = "C"
    xin = c.add_input(x).get_output(0)
    output(net, c.add_output(xin, xin).get_output(0), "y")
    _raises(net, "conditional 'C' has no condition")

    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    c = net.add_if_conditional()
    c.set_condition(const(net, np.array([True])))
    output(net, c.add_output(x, x).get_output(0), "y")
    _raises(net, "condition must be a 0-D BOOL")

    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    c = net.add_if_conditional()
    c.set_condition(net.add_input("p", trt.bool, ()))
    shared = net.add_unary(c.add_input(x).get_output(0), trt.UnaryOperation.EXP)
    shared.name = "shared"
    output(net, c.add_output(shared.get_output(0), shared.get_output(0)).get_output(0), "y")
    _raises(net, "'shared'", "both the true and the false branch")


def test_network_needs_outputs_and_unique_output_names():
    net = new_network()
    net.add_input("x", trt.float32, (2,))
    _raises(net, "no outputs")
    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    output(net, net.add_identity(x).get_output(0), "y")
    output(net, net.add_identity(x).get_output(0), "y")
    _raises(net, "two network outputs are named 'y'")


def test_layer_errors_at_creation():
    net = new_network()
    a = net.add_input("a", trt.float32, (2, 3))
    b = net.add_input("b", trt.float32, (3,))
    with pytest.raises(ig.ModelError, match="same rank"):
        net.add_elementwise(a, b, E.SUM)
    c = net.add_input("c", trt.float32, (2, 4))
    with pytest.raises(ig.ModelError, match="cannot be broadcast"):
        net.add_elementwise(a, c, E.SUM)
    with pytest.raises(ig.ModelError, match="inner dimensions"):
        net.add_matrix_multiply(a, trt.MatrixOperation.NONE, c, trt.MatrixOperation.NONE)
    sl = net.add_slice(a, (0, 1), (2, 3), (1, 1))
    with pytest.raises(ig.ModelError, match="outside"):
        _ = sl.get_output(0).shape
    it = net.add_loop().add_iterator(a, 2)  # attributes may still change: checked on use
    with pytest.raises(ig.ModelError, match="axis 2 is out of range"):
        _ = it.get_output(0).shape
    it.axis = 1
    assert it.get_output(0).shape == (2,)
    cat = net.add_concatenation([a, c])  # default axis 0 does not fit ...
    cat.axis = 1  # ... axis 1 does
    assert cat.get_output(0).shape == (2, 7)
