"""The canonical Loop on the JAX backend: scan, while and driven (buffer-doubling) forms,
against plain Python loops written here and against the NumPy backend."""

from __future__ import annotations

import numpy as np
import pytest
from jaxutil import assert_same, compare, op

import itergraph as ig
from itergraph.backends import jax as jb
from itergraph.backends.numpy import run_graph as numpy_run
from itergraph.ir import (
    Carried,
    Concat,
    Graph,
    Invariant,
    Last,
    Loop,
    Sliced,
    Value,
    tensor,
)


def _how(cg, name):
    return [r.reason for r in cg.explain() if r.element == f"Loop node '{name}'"]


# ----------------------------------------------------------------------------- scan form


def counter_graph(trip, with_iter=True):
    """x_{k+1} = x_k + 1 (+ k); outputs the final x, the stack of x_k and of k."""
    x0 = Value("x0", tensor("float32", ()))
    body = Graph("body")
    p = Value("p", tensor("float32", ()))
    i = Value("i", tensor("int64", ()))
    body.inputs = [i, p]
    one = Value("one", const=np.ones((), np.float32))
    nxt = op(body, "Add", p, one)
    if with_iter:
        nxt = op(body, "Add", nxt, op(body, "Cast", i, to=1))
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=trip, iteration_param=i, name="L")
    outs = [loop.add_output(Last(nxt, Value("final"))),
            loop.add_output(Concat(p, Value("seq", tensor("float32", ())))),
            loop.add_output(Concat(i, Value("its", tensor("int64", ()))))]
    inputs = [x0] + ([trip] if trip.const is None else [])
    return Graph("g", inputs, outs, [loop], opset_imports={"": 17})


def python_counter(x, n):
    seq, its = [], []
    for k in range(n):
        seq.append(x)
        its.append(k)
        x = x + 1 + k
    return x, np.array(seq, np.float32), np.array(its, np.int64)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_constant_trip_count_is_a_scan(n):
    g = counter_graph(Value("M", const=np.array(n, np.int64)))
    got, cg = compare(g, {"x0": np.float32(2)})
    final, seq, its = python_counter(np.float32(2), n)
    assert float(got["final"]) == final
    np.testing.assert_array_equal(got["seq"], seq)
    np.testing.assert_array_equal(got["its"], its)
    assert _how(cg, "L") == (["lax.scan over 7 iterations"] if n == 7 else
                             ["lax.scan over 1 iterations"] if n == 1 else
                             ["runs zero iterations (known at compile time)"])


@pytest.mark.parametrize("n", [0, 3, 100])
def test_run_time_trip_count_is_driven_with_an_exact_capacity(n):
    g = counter_graph(Value("M", tensor("int64", ())))
    got, cg = compare(g, {"x0": np.float32(0), "M": np.array(n, np.int64)})
    final, seq, its = python_counter(np.float32(0), n)
    np.testing.assert_array_equal(got["seq"], seq)
    np.testing.assert_array_equal(got["its"], its)
    driver = cg.root.last_plan.steps[-1].driver
    assert driver.capacities == [max(1, 1 << (max(n, 1) - 1).bit_length())]


def test_run_time_trip_count_without_concat_is_one_while_loop():
    x0 = Value("x0", tensor("float32", ()))
    trip = Value("M", tensor("int64", ()))
    body = Graph("body")
    p = Value("p", tensor("float32", ()))
    body.inputs = [p]
    nxt = op(body, "Mul", p, Value("h", const=np.float32(0.5)))
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=trip, name="W")
    g = Graph("g", [x0, trip], [loop.add_output(Last(nxt, Value("y")))], [loop])
    for n in (0, 1, 5, -1 + 0 * 5):
        feeds = {"x0": np.float32(3), "M": np.array(max(n, 0))}
        got, cg = compare(g, feeds)
        assert float(got["y"]) == 3 * 0.5 ** max(n, 0)
    assert _how(cg, "W") == ["lax.while_loop"]
    assert len(cg.root.last_plan.steps) == 1  # one jitted function for the whole graph


# ----------------------------------------------------------------------------- sliced inputs


def sliced_graph(axis, stride, keep_axis=False, part_size=1, start=0, end=-1, new_axis=True,
                 out_axis=0, reverse_out=False):
    x = Value("x", tensor("float32", None))
    body = Graph("body")
    e = Value("e")
    body.inputs = [e]
    y = op(body, "Mul", e, Value("two", const=np.float32(2)))
    loop = Loop(body, [Sliced(x, e, axis, start, end, stride, part_size, keep_axis)], name="S")
    out = loop.add_output(Concat(y, Value("y"), out_axis, reverse_out, new_axis))
    return Graph("g", [x], [out], [loop], opset_imports={"": 17})


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("stride", [1, -1])
def test_sliced_input_round_trips_through_concat(axis, stride):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = sliced_graph(axis, stride, out_axis=axis, reverse_out=stride < 0)
    got, cg = compare(g, {"x": x})
    np.testing.assert_array_equal(got["y"], 2 * x)
    assert _how(cg, "S")[0].startswith("lax.scan")


def test_openvino_keep_axis_part_size_2_reverse():
    x = np.arange(2 * 6, dtype=np.float32).reshape(2, 6)
    g = sliced_graph(1, -2, keep_axis=True, part_size=2, new_axis=False, out_axis=1)
    got, _ = compare(g, {"x": x})
    want = np.concatenate([2 * x[:, k:k + 2] for k in (4, 2, 0)], axis=1)
    np.testing.assert_array_equal(got["y"], want)


@pytest.mark.parametrize("start, end, stride, part", [(1, -2, 2, 1), (-1, 0, -3, 1),
                                                      (0, -1, 3, 2), (2, 7, 1, 3)])
def test_sliced_offsets_strides_and_parts(start, end, stride, part):
    x = np.arange(3 * 10, dtype=np.float32).reshape(3, 10)
    keep = part > 1
    g = sliced_graph(1, stride, keep_axis=keep, part_size=part, start=start, end=end,
                     new_axis=not keep, out_axis=1)
    s = Sliced(Value(), Value(), 1, start, end, stride, part, keep)
    n = s.count(10)
    pieces = [x[:, s.piece_start(k, 10):s.piece_start(k, 10) + part] for k in range(n)]
    want = (np.concatenate(pieces, axis=1) if keep else np.stack([p[:, 0] for p in pieces], 1))
    got, _ = compare(g, {"x": x})
    np.testing.assert_array_equal(got["y"], 2 * want)


def test_scan_outputs_reverse_new_axis_and_existing_axis():
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    for out_axis, new_axis, rev in [(-1, True, True), (2, True, False), (1, False, True),
                                    (-1, False, False)]:
        g = sliced_graph(1, 1, out_axis=out_axis, new_axis=new_axis, reverse_out=rev)
        compare(g, {"x": x})


def test_strict_slices_trip_count_beyond_the_input_is_an_error():
    x = Value("x", tensor("float32", (3,)))
    trip = Value("M", tensor("int64", ()))
    body = Graph("body")
    e = Value("e")
    body.inputs = [e]
    loop = Loop(body, [Sliced(x, e)], trip_count=trip, name="T",
                strict_slices=True)
    g = Graph("g", [x, trip], [loop.add_output(Concat(e, Value("y")))], [loop])
    cg = jb.compile_graph(g)
    xv = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(cg.run({"x": xv, "M": np.array(2)})["y"], xv[:2])
    with pytest.raises(ig.ExecutionError, match="Loop node 'T'"):
        cg.run({"x": xv, "M": np.array(5)})
    with pytest.raises(ig.ExecutionError):
        numpy_run(g, {"x": xv, "M": np.array(5)})


# ----------------------------------------------------------------------------- while forms


def while_graph(precondition=False, concat=True, length=None):
    """x counts up from x0 while x < lim (ONNX condition at the end of an iteration, or a
    TensorRT precondition at its start); optional stacked values and padded length."""
    x0 = Value("x0", tensor("int64", ()))
    lim = Value("lim", tensor("int64", ()))
    body = Graph("body")
    p = Value("p", tensor("int64", ()))
    body.inputs = [p]
    nxt = op(body, "Add", p, Value("one", const=np.array(1)))
    if precondition:
        loop = Loop(body, [Carried(x0, p, nxt)], precondition=op(body, "Less", p, lim),
                    name="W")
    else:
        loop = Loop(body, [Carried(x0, p, nxt)], condition_result=op(body, "Less", nxt, lim),
                    name="W")
    outs = [loop.add_output(Last(nxt, Value("out")))]
    ins = [x0, lim]
    if concat:
        outs.append(loop.add_output(Concat(op(body, "Mul", p, p), Value("sq", tensor("int64", ())),
                                           length=length)))
        if length is not None:
            ins.append(length)
    return Graph("g", ins, outs, [loop], opset_imports={"": 17})


def python_while(x, lim, precondition):
    sq = []
    while True:
        if precondition and not x < lim:
            break
        sq.append(x * x)
        x = x + 1
        if not precondition and not x < lim:
            break
    return x, np.array(sq, np.int64)


@pytest.mark.parametrize("precondition", [False, True])
@pytest.mark.parametrize("lim", [0, 1, 2, 5, 13])
def test_while_with_concat_resumes_in_doubled_buffers(precondition, lim):
    g = while_graph(precondition)
    got, cg = compare(g, {"x0": np.array(0), "lim": np.array(lim)}, initial_capacity=2)
    out, sq = python_while(0, lim, precondition)
    np.testing.assert_array_equal(got["sq"], sq)  # no iteration ran twice or went missing
    n = len(sq)
    caps = cg.root.last_plan.steps[-1].driver.capacities
    assert caps == [2 << i for i in range(len(caps))]  # doubling from the initial capacity
    assert sum(caps[:-1]) <= n <= sum(caps)  # each full buffer resumed once, no extra step
    if n == 0:
        assert got["out"] == (1 if not precondition else 0)


def test_while_without_concat_is_compiled_in_place():
    g = while_graph(concat=False)
    for lim in (0, 4):
        got, cg = compare(g, {"x0": np.array(0), "lim": np.array(lim)})
    assert _how(cg, "W") == ["lax.while_loop"]
    assert len(cg.root.last_plan.steps) == 1


def test_precondition_with_padded_length():
    L = Value("L", tensor("int64", ()))
    g = while_graph(precondition=True, length=L)
    got, _ = compare(g, {"x0": np.array(1), "lim": np.array(4), "L": np.array(6)},
                     initial_capacity=2)
    np.testing.assert_array_equal(got["sq"], [1, 4, 9, 0, 0, 0])
    with pytest.raises(ig.ExecutionError, match="below the 3 iterations"):
        jb.compile_graph(g).run({"x0": np.array(1), "lim": np.array(4), "L": np.array(2)})


def test_reverse_concat_with_length_in_a_scan():
    x = Value("x", tensor("float32", (4,)))
    body = Graph("body")
    e = Value("e", tensor("float32", ()))
    body.inputs = [e]
    loop = Loop(body, [Sliced(x, e)], name="R")
    y = loop.add_output(Concat(e, Value("y"), reverse=True, length=Value("L", const=np.array(6))))
    g = Graph("g", [x], [y], [loop])
    got, _ = compare(g, {"x": np.arange(1, 5, dtype=np.float32)})
    np.testing.assert_array_equal(got["y"], [4, 3, 2, 1, 0, 0])


# ----------------------------------------------------------------------------- zero iterations


def test_zero_iterations_from_a_false_initial_condition():
    x0 = Value("x0", tensor("float32", (2,)))
    c0 = Value("c0", tensor("bool", ()))
    body = Graph("body")
    p = Value("p", tensor("float32", (2,)))
    body.inputs = [p]
    nxt = op(body, "Add", p, p)
    nxt.type = tensor("float32", ("n", 2))  # the declared shape gives the empty stack's shape
    loop = Loop(body, [Carried(x0, p, nxt)], initial_condition=c0,
                condition_result=op(body, "Less", op(body, "ReduceSum", nxt, keepdims=0),
                                    Value("c", const=np.float32(100))), name="Z")
    outs = [loop.add_output(Last(nxt, Value("last"))),
            loop.add_output(Concat(nxt, Value("st")))]
    g = Graph("g", [x0, c0], outs, [loop], opset_imports={"": 17})
    got, _ = compare(g, {"x0": np.ones(2, np.float32), "c0": np.array(False)})
    assert got["st"].shape == (0, 0, 2)
    got, _ = compare(g, {"x0": np.ones(2, np.float32), "c0": np.array(True)})
    np.testing.assert_array_equal(got["last"], [64, 64])


def test_zero_iterations_last_of_a_body_value_is_an_error_like_numpy():
    x = Value("x", tensor("float32", (0,)))
    body = Graph("body")
    e = Value("e", tensor("float32", ()))
    body.inputs = [e]
    loop = Loop(body, [Sliced(x, e)], name="E")
    y = loop.add_output(Last(op(body, "Neg", e), Value("y")))
    g = Graph("g", [x], [y], [loop])
    with pytest.raises(ig.ExecutionError, match="zero iterations") as a:
        jb.compile_graph(g).run({"x": np.zeros(0, np.float32)})
    with pytest.raises(ig.ExecutionError, match="zero iterations") as b:
        numpy_run(g, {"x": np.zeros(0, np.float32)})
    assert str(a.value) == str(b.value)


# ----------------------------------------------------------------------------- nesting, If


def nested_graph(inner_kind):
    """Outer scan over rows of X; inner loop over the row's elements (scan), or counting
    while the value stays below a bound (while, no concat / with concat)."""
    X = Value("X", tensor("float32", (3, 4)))
    ob = Graph("outer")
    row = Value("row", tensor("float32", (4,)))
    acc = Value("acc", tensor("float32", ()))
    ob.inputs = [row, acc]
    ib = Graph("inner")
    if inner_kind == "scan":
        e = Value("e", tensor("float32", ()))
        s = Value("s", tensor("float32", ()))
        ib.inputs = [e, s]
        ns = op(ib, "Add", s, op(ib, "Mul", e, e))
        inner = Loop(ib, [Sliced(row, e), Carried(acc, s, ns)], name="I")
        inner_out = inner.add_output(Last(ns, Value("io")))
        ob.add(inner)
        extra = inner.add_output(Concat(ns, Value("partial")))
    else:
        s = Value("s", tensor("float32", ()))
        ib.inputs = [s]
        ns = op(ib, "Add", s, op(ib, "ReduceMax", row, keepdims=0))  # captures `row`
        inner = Loop(ib, [Carried(acc, s, ns)], name="I",
                     condition_result=op(ib, "Less", ns, Value("b", const=np.float32(40))),
                     trip_count=Value("T", const=np.array(50)))
        inner_out = inner.add_output(Last(ns, Value("io")))
        ob.add(inner)
        extra = inner.add_output(Concat(ns, Value("partial"))) if inner_kind == "while+concat" \
            else None
    outer = Loop(ob, [Sliced(X, row), Carried(Value("z", const=np.float32(0)), acc, inner_out)],
                 name="O")
    outs = [outer.add_output(Last(inner_out, Value("total"))),
            outer.add_output(Concat(inner_out, Value("per_row")))]
    if extra is not None and inner_kind == "scan":
        outs.append(outer.add_output(Concat(extra, Value("parts"))))
    return Graph("g", [X], outs, [outer], opset_imports={"": 17})


def test_nested_scan_in_scan():
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    got, cg = compare(nested_graph("scan"), {"X": X})
    acc, per_row = 0.0, []
    for row in X:
        for e in row:
            acc += e * e
        per_row.append(acc)
    np.testing.assert_allclose(got["per_row"], per_row)
    assert _how(cg, "I") == ["lax.scan over 4 iterations"]
    assert _how(cg, "O") == ["lax.scan over 3 iterations"]


def test_nested_while_in_scan():
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    got, cg = compare(nested_graph("while"), {"X": X})
    acc, per_row = 0.0, []
    for row in X:
        for _ in range(50):
            acc += row.max()
            if not acc < 40:
                break
        per_row.append(acc)
    np.testing.assert_allclose(got["per_row"], per_row)
    assert _how(cg, "I") == ["lax.while_loop"]


def test_nested_while_with_concat_falls_back_with_a_reason():
    g = nested_graph("while+concat")
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    got, cg = compare(g, {"X": X}, compiled=False)
    (rec,) = [r for r in cg.explain() if r.element == "Loop node 'O'"]
    assert not rec.compiles and "Loop node 'I'" in rec.reason and "data-dependent" in rec.reason
    static = [r for r in jb.explain(g) if r.element == "Loop node 'O'"]
    assert static and not static[0].compiles


def if_graph(mismatch=False, data_condition=False):
    """``y = x * 3 if c else -x`` (with `mismatch`: ``concat(x, x)``); with `data_condition`
    the condition is ``sum(x) > 0`` instead of the input ``c``."""
    x = Value("x", tensor("float32", (3,)))
    c = Value("c", tensor("bool", ()))
    tb, eb = Graph("then"), Graph("else")
    tb.outputs = [op(tb, "Mul", x, Value("k", const=np.float32(3)))]
    if mismatch:
        eb.outputs = [op(eb, "Concat", x, x, axis=0)]
    else:
        eb.outputs = [op(eb, "Neg", x)]
    g = Graph("g", [x] if data_condition else [x, c], [], [], opset_imports={"": 17})
    if data_condition:
        c = op(g, "Greater", op(g, "ReduceSum", x, keepdims=0), Value("z", const=np.float32(0)))
    y = op(g, "If", c, version=16, then_branch=tb, else_branch=eb)
    y.name = "y"
    g.nodes[-1].name = "branch"
    g.outputs = [y]
    return g


def test_if_with_a_run_time_condition_is_lax_cond():
    g = if_graph()
    x = np.array([1, -2, 3], np.float32)
    for c in (True, False):
        got, cg = compare(g, {"x": x, "c": np.array(c)})
    assert [r.reason for r in cg.explain()] == ["lax.cond"]


def test_if_with_branches_of_different_shapes_compiles_per_condition_value():
    # silero VAD's 16 kHz / 8 kHz branches: the condition comes from a small input, so
    # plans are made per value of it and only the taken branch is traced
    g = if_graph(mismatch=True)
    x = np.array([1, -2, 3], np.float32)
    for c in (True, False):
        got, cg = compare(g, {"x": x, "c": np.array(c)})
        assert [r.reason for r in cg.explain() if r.element == "If node 'branch'"] == [
            "condition known at compile time: branch inlined"]


def test_if_with_branches_of_different_shapes_and_a_data_condition_falls_back():
    g = if_graph(mismatch=True, data_condition=True)
    for x in (np.array([1, -2, 3], np.float32), np.array([-1, -2, 3], np.float32)):
        got, cg = compare(g, {"x": x}, compiled=False)
    (rec,) = [r for r in cg.explain() if r.element == "If node 'branch'"]
    assert not rec.compiles and "different shapes" in rec.reason


def test_if_inside_a_loop_body_and_constant_condition_inlined():
    x0 = Value("x0", tensor("float32", ()))
    body = Graph("body")
    i = Value("i", tensor("int64", ()))
    p = Value("p", tensor("float32", ()))
    body.inputs = [i, p]
    even = op(body, "Equal", op(body, "Mod", i, Value("two", const=np.array(2))),
              Value("zero", const=np.array(0)))
    tb, eb = Graph("t"), Graph("e")
    tb.outputs = [op(tb, "Add", p, Value("one", const=np.float32(1)))]
    eb.outputs = [op(eb, "Mul", p, Value("three", const=np.float32(3)))]
    nxt = op(body, "If", even, then_branch=tb, else_branch=eb)
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=Value("M", const=np.array(6)),
                iteration_param=i, name="L")
    g = Graph("g", [x0], [loop.add_output(Concat(nxt, Value("ys")))], [loop])
    got, cg = compare(g, {"x0": np.float32(1)})
    x, ys = 1.0, []
    for k in range(6):
        x = x + 1 if k % 2 == 0 else x * 3
        ys.append(x)
    np.testing.assert_array_equal(got["ys"], ys)


# ----------------------------------------------------------------------------- limits, shapes


def runaway_graph(concat):
    x0 = Value("x0", tensor("int64", ()))
    body = Graph("body")
    p = Value("p", tensor("int64", ()))
    body.inputs = [p]
    nxt = op(body, "Add", p, Value("one", const=np.array(1)))
    loop = Loop(body, [Carried(x0, p, nxt)], name="Runaway",
                condition_result=op(body, "GreaterOrEqual", nxt, x0))
    outs = [loop.add_output(Last(nxt, Value("y")))]
    if concat:
        outs.append(loop.add_output(Concat(nxt, Value("ys"))))
    return Graph("g", [x0], outs, [loop], opset_imports={"": 17})


@pytest.mark.parametrize("concat", [False, True])
def test_max_iterations_stops_a_runaway_loop(concat):
    cg = jb.compile_graph(runaway_graph(concat), initial_capacity=4)
    with pytest.raises(ig.IterationLimitError,
                       match=r"Loop node 'Runaway': stopped after max_iterations=20 iterations"):
        cg.run({"x0": np.array(0)}, max_iterations=20)


def test_max_iterations_applies_to_counted_loops_like_numpy():
    g = counter_graph(Value("M", const=np.array(5, np.int64)))
    cg = jb.compile_graph(g)
    assert cg.run({"x0": np.float32(0)}, max_iterations=5)["its"].shape == (5,)
    with pytest.raises(ig.IterationLimitError):
        cg.run({"x0": np.float32(0)}, max_iterations=4)
    from itergraph.backends.numpy import CompileContext, run_plan

    with pytest.raises(ig.IterationLimitError):
        run_plan(CompileContext(4).compile(g), {"x0": np.float32(0)})


def test_carried_value_that_changes_shape_falls_back():
    x0 = Value("x0", tensor("float32", (1,)))
    body = Graph("body")
    p = Value("p", tensor("float32", None))
    body.inputs = [p]
    nxt = op(body, "Concat", p, p, axis=0)
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=Value("M", const=np.array(3)),
                name="Grow")
    g = Graph("g", [x0], [loop.add_output(Last(nxt, Value("y")))], [loop])
    got, cg = compare(g, {"x0": np.ones(1, np.float32)}, compiled=False)
    assert got["y"].shape == (8,)
    (rec,) = cg.explain()
    assert not rec.compiles and "changes from float32[1] to float32[2]" in rec.reason


def test_invariant_ports_captures_and_last_of_invariant():
    x = Value("x", tensor("float32", (5,)))
    w = Value("w", tensor("float32", ()))
    b = Value("b", tensor("float32", ()))
    body = Graph("body")
    e = Value("e", tensor("float32", ()))
    wp = Value("wp", tensor("float32", ()))
    body.inputs = [e, wp]
    y = op(body, "Add", op(body, "Mul", e, wp), b)  # `b` captured from the outer graph
    loop = Loop(body, [Sliced(x, e), Invariant(w, wp)], name="A")
    outs = [loop.add_output(Concat(y, Value("y"))), loop.add_output(Last(wp, Value("w_out"))),
            loop.add_output(Last(y, Value("y_last")))]
    g = Graph("g", [x, w, b], outs, [loop])
    xv = np.arange(5, dtype=np.float32)
    got, _ = compare(g, {"x": xv, "w": np.float32(2), "b": np.float32(1)})
    np.testing.assert_array_equal(got["y"], 2 * xv + 1)
    assert float(got["y_last"]) == 9 and float(got["w_out"]) == 2


# ----------------------------------------------------------------------------- ONNX models


def test_onnx_loop_and_scan_models_through_the_reader():
    from onnx import TensorProto as T
    from onnx import helper as h

    from itergraph.frontends.onnx import read

    # ONNX Loop: M from the input, cond passed through, one carried value, one scan output
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Add", ["a_in", "x"], ["a_out"]),
         h.make_node("Mul", ["a_out", "a_out"], ["sq"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("a_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("a_out", T.FLOAT, [2]),
         h.make_tensor_value_info("sq", T.FLOAT, [2])])
    loop = h.make_node("Loop", ["M", "", "a0"], ["a_final", "sqs"], body=body)
    g = h.make_graph([loop], "g", [h.make_tensor_value_info("M", T.INT64, []),
                                   h.make_tensor_value_info("a0", T.FLOAT, [2]),
                                   h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("a_final", T.FLOAT, [2]),
                      h.make_tensor_value_info("sqs", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 16)], ir_version=8)
    feeds = {"M": np.array(4), "a0": np.zeros(2, np.float32),
             "x": np.array([1, 2], np.float32)}
    from onnx_builders import run_ort

    got, _ = compare(read(m), feeds)
    assert_same(got, run_ort(m, feeds))

    # ONNX Scan (opset 9+): reverse direction, axis 1
    sbody = h.make_graph(
        [h.make_node("Add", ["s_in", "e"], ["s_out"])], "sb",
        [h.make_tensor_value_info("s_in", T.FLOAT, [2]), h.make_tensor_value_info("e", T.FLOAT,
                                                                                  [2])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [2])])
    scan = h.make_node("Scan", ["s0", "X"], ["s_final"], body=sbody, num_scan_inputs=1,
                       scan_input_axes=[1], scan_input_directions=[1])
    g2 = h.make_graph([scan], "g2", [h.make_tensor_value_info("s0", T.FLOAT, [2]),
                                     h.make_tensor_value_info("X", T.FLOAT, [2, 5])],
                      [h.make_tensor_value_info("s_final", T.FLOAT, [2])])
    m2 = h.make_model(g2, opset_imports=[h.make_opsetid("", 16)], ir_version=8)
    feeds2 = {"s0": np.zeros(2, np.float32), "X": np.arange(10, dtype=np.float32).reshape(2, 5)}
    got2, _ = compare(read(m2), feeds2)
    assert_same(got2, run_ort(m2, feeds2))


def test_matrix_products_of_sliced_inputs_are_hoisted_out_of_the_scan():
    """An RNN as a scan: x_t W reads no carried value, so it is computed for all steps at
    once; h R stays in the loop. Same results as the NumPy backend and a Python loop."""
    rng = np.random.default_rng(3)
    X = Value("X", tensor("float32", (6, 2, 3)))
    h0 = Value("h0", tensor("float32", (2, 4)))
    W = Value("W", const=rng.standard_normal((3, 4)).astype(np.float32))
    R = Value("R", const=(rng.standard_normal((4, 4)) * 0.5).astype(np.float32))
    body = Graph("body")
    xt = Value("xt", tensor("float32", (2, 3)))
    hp = Value("hp", tensor("float32", (2, 4)))
    i = Value("i", tensor("int64", ()))
    body.inputs = [i, xt, hp]
    xw = op(body, "Add", op(body, "MatMul", xt, W), op(body, "Cast", i, to=1))
    hn = op(body, "Tanh", op(body, "Add", xw, op(body, "MatMul", hp, R)))
    loop = Loop(body, [Sliced(X, xt), Carried(h0, hp, hn)], iteration_param=i, name="RNN")
    outs = [loop.add_output(Last(hn, Value("h"))), loop.add_output(Concat(hn, Value("Y"))),
            loop.add_output(Concat(xw, Value("XW")))]
    g = Graph("g", [X, h0], outs, [loop], opset_imports={"": 17})
    xv = rng.standard_normal((6, 2, 3)).astype(np.float32)
    got, cg = compare(g, {"X": xv, "h0": np.zeros((2, 4), np.float32)}, rtol=1e-5)
    hv, ys = np.zeros((2, 4), np.float32), []
    for t in range(6):
        hv = np.tanh(xv[t] @ W.const + t + hv @ R.const)
        ys.append(hv)
    np.testing.assert_allclose(got["Y"], ys, rtol=1e-5, atol=1e-6)
    (how,) = _how(cg, "RNN")
    assert how.startswith("lax.scan over 6 iterations; 1 matrix product(s)")


def test_later_runs_start_from_the_capacity_an_earlier_run_needed():
    g = while_graph()
    cg = jb.compile_graph(g, initial_capacity=2)
    feeds = {"x0": np.array(0), "lim": np.array(20)}
    first = cg.run(feeds)
    driver = cg.root.last_plan.steps[-1].driver
    assert driver.capacities == [2, 4, 8, 16]
    assert_same(cg.run(feeds), first)
    assert driver.capacities == [32]  # one step now


# ----------------------------------------------------------------------------- memory bounds


def test_driver_buffers_never_exceed_what_max_iterations_allows(monkeypatch):
    # a run-time trip count of 10**9 with a stacked output: the first buffer must not be sized
    # for 10**9 iterations (8 GiB) when max_iterations stops the loop after 1000
    _small_memory(monkeypatch, 64 << 20)
    g = counter_graph(Value("M", tensor("int64", ())))
    cg = jb.compile_graph(g)
    feeds = {"x0": np.float32(0), "M": np.array(10**9, np.int64)}
    with pytest.raises(ig.IterationLimitError, match=r"'L'.*max_iterations=1000"):
        cg.run(feeds, max_iterations=1000)
    out = cg.run({**feeds, "M": np.array(1000, np.int64)}, max_iterations=1000)
    assert out["seq"].shape == (1000,)
    assert max(cg.root.last_plan.steps[-1].driver.capacities) <= 1001


def test_driver_capacity_growth_stops_at_max_iterations_plus_one():
    cg = jb.compile_graph(while_graph(), initial_capacity=2)
    out = cg.run({"x0": np.array(0), "lim": np.array(10)}, max_iterations=10)
    assert out["sq"].shape == (10,)
    assert cg.root.last_plan.steps[-1].driver.capacities == [2, 4, 5]


def _small_memory(monkeypatch, nbytes):
    import itergraph.backends.common.memory as memory

    monkeypatch.setattr(memory, "memory_limit", lambda: nbytes)


def test_a_driver_buffer_larger_than_memory_is_refused_before_allocating(monkeypatch):
    _small_memory(monkeypatch, 1 << 20)
    g = counter_graph(Value("M", tensor("int64", ())))
    feeds = {"x0": np.float32(0), "M": np.array(10**6, np.int64)}
    with pytest.raises(ig.ExecutionError, match=r"Loop node 'L': outputs 1 \('seq'\), 2 "
                                                r"\('its'\) would need 12\.00 MiB \(buffers "
                                                r"for 1048576 iterations\), more than this "
                                                r"process can allocate \(1\.00 MiB\)"):
        jb.compile_graph(g).run(feeds)


def test_a_scan_output_larger_than_memory_is_refused_unless_the_limit_comes_first(monkeypatch):
    _small_memory(monkeypatch, 1 << 20)
    g = counter_graph(Value("M", const=np.array(10**6, np.int64)))
    with pytest.raises(ig.ExecutionError, match=r"Loop node 'L': output 1 \('seq'\) would need "
                                                r"3\.81 MiB \(1000000 iterations\)") as e:
        jb.compile_graph(g).run({"x0": np.float32(0)})
    assert not isinstance(e.value, ig.IterationLimitError)
    with pytest.raises(ig.IterationLimitError, match=r"'L'.*max_iterations=10"):
        jb.compile_graph(g).run({"x0": np.float32(0)}, max_iterations=10)


def test_a_padded_length_larger_than_memory_is_refused(monkeypatch):
    _small_memory(monkeypatch, 1 << 20)
    g = while_graph(length=Value("n", tensor("int64", ())))
    cg = jb.compile_graph(g)
    with pytest.raises(ig.ExecutionError, match=r"Loop node 'W': output 1 \('sq'\) would need "
                                                r"7\.63 MiB \(length 1000000\)"):
        cg.run({"x0": np.array(0), "lim": np.array(5), "n": np.array(10**6)})


def test_an_allocation_xla_refuses_is_an_execution_error_naming_the_loop(monkeypatch):
    from itergraph.backends.jax import driver as drv

    g = counter_graph(Value("M", tensor("int64", ())))
    cg = jb.compile_graph(g)

    class JaxRuntimeError(RuntimeError):
        pass

    def exhausted(*a, **k):
        raise JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8589934592 bytes.")

    monkeypatch.setattr(drv.LoopDriver, "_compiled", lambda self, env: exhausted)
    with pytest.raises(ig.ExecutionError, match=r"Loop node 'L': out of memory allocating "
                                                r"buffers for \d+ iterations for outputs 1 "
                                                r"\('seq'\), 2 \('its'\): RESOURCE_EXHAUSTED"):
        cg.run({"x0": np.float32(0), "M": np.array(5, np.int64)})


def test_memory_limit_and_sizes_in_words():
    from itergraph.backends.common.memory import human_bytes, memory_limit, over_limit

    limit = memory_limit()
    assert limit is None or limit > 0
    assert over_limit(1) is None
    assert human_bytes(512) == "512 bytes"
    assert human_bytes(8 << 30) == "8.00 GiB"
    assert human_bytes(int(7.45 * (1 << 30))) == "7.45 GiB"


@pytest.mark.parametrize("trip", [2**62, 2**63 - 1])
def test_an_unbounded_loop_stops_at_max_iterations_in_one_step(trip):
    # hostile input, round two: a run-time trip count that bounds nothing and a stacked
    # output: the driver doubled its buffer from 64 up to max_iterations, compiling a step
    # per capacity (seconds at 10**5, where NumPy stops in a fraction of one), and a failed
    # run kept no plan, so every call traced and compiled it all again. Now one step sized
    # for max_iterations + 1 stops it, and the plan is kept for the next call.
    g = counter_graph(Value("M", tensor("int64", ())))
    cg = jb.compile_graph(g)
    feeds = {"x0": np.float32(0), "M": np.array(trip, np.int64)}
    for _ in range(2):
        with pytest.raises(ig.IterationLimitError, match=r"'L'.*max_iterations=1000"):
            cg.run(feeds, max_iterations=1000)
    (plan,) = cg.root.plans.values()
    assert plan.steps[-1].driver.capacities == [1001]
    with pytest.raises(ig.IterationLimitError):
        numpy_run(g, feeds, max_iterations=1000)
