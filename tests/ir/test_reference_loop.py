"""Loops ONNX cannot express, built on the IR: both backends against `reference_loop` (the
literal transcription of the canonical Loop's docstring), and against hand-written results."""

from __future__ import annotations

import numpy as np
import pytest

import itergraph as ig
from itergraph.ir import (
    UNBOUNDED_TRIP_COUNT,
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
from reference_loop import reference_loop

f32 = np.float32
BACKENDS = ["numpy", "jax"]
I64 = tensor("int64", ())
B = tensor("bool", ())


def const(name: str, x, dtype=f32) -> Value:
    a = np.asarray(x, dtype)
    return Value(name, tensor(str(a.dtype), a.shape), a)


def single_loop_graph(loop: Loop, inputs: list[Value]) -> Graph:
    """The graph holding `loop` alone; its trip count, lengths, ... are initializers."""
    inits = [v for v in loop.reads() if v.const is not None and v not in inputs]
    g = Graph("g", inputs=inputs, outputs=loop.outputs, nodes=[loop], initializers=inits)
    verify(g)
    return g


def reference(g: Graph, feeds: dict) -> dict:
    (loop,) = g.nodes
    outer = {v: v.const for v in g.initializers}
    outer.update({v: feeds[v.name] for v in g.inputs})
    got = reference_loop(loop, outer, max_iterations=1000)
    return {v.name: got[v] for v in g.outputs}


def agree(g: Graph, feeds: dict, want: dict | None = None) -> dict:
    """Run `g` on the reference and both backends; assert they (and `want`) agree."""
    ref = reference(g, feeds)
    model = ig.load(g)
    for backend in BACKENDS:
        got = model.run(feeds, backend=backend, max_iterations=1000)
        assert list(got) == list(ref)
        for k in ref:
            a, b = np.asarray(got[k]), np.asarray(ref[k])
            assert a.shape == b.shape, f"{backend} {k}: {a.shape} != {b.shape}"
            assert a.dtype == b.dtype, f"{backend} {k}: {a.dtype} != {b.dtype}"
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"{backend} {k}")
    for k, w in (want or {}).items():
        np.testing.assert_allclose(np.asarray(ref[k]), w, err_msg=f"reference {k}")
    return ref


def all_raise(g: Graph, feeds: dict, error: type, match: str = "",
              backends=BACKENDS) -> None:
    with pytest.raises(error, match=match):
        reference(g, feeds)
    model = ig.load(g)
    for backend in backends:
        with pytest.raises(error, match=match):
            model.run(feeds, backend=backend, max_iterations=1000)


# --- sliced inputs --------------------------------------------------------------------------


def sliced_loop(port: dict, concat: dict | None = None, trip: int | None = None,
                negative: str = "unbounded", strict: bool = False, x_shape=(3, 8),
                last_piece: bool = True):
    """Over the pieces of X on axis 1 (the `port` options): s += sum of the piece over that
    axis; outputs Last(s), Concat(piece * 2) as `concat` says, Last(piece) if `last_piece`."""
    X = Value("X", tensor("float32", x_shape))
    s0 = Value("s0", tensor("float32", (3,)))
    piece, s = Value("piece", tensor("float32")), Value("s", tensor("float32", (3,)))
    two = const("two", 2.0)
    axes = const("axes", [1], np.int64)
    keep = port.get("keep_axis", False)
    folded, s1 = Value("folded"), Value("s1")
    piece_shape = (3, port.get("part_size", 1)) if keep else (3,)
    doubled = Value("doubled", tensor("float32", piece_shape))  # the shape after 0 iterations
    nodes = [Node("Mul", [piece, two], [doubled], name="double")]
    if keep:
        nodes.append(Node("ReduceSum", [piece, axes], [folded], {"keepdims": 0}, name="fold"))
    else:
        nodes.append(Node("Identity", [piece], [folded], name="fold"))
    nodes.append(Node("Add", [s, folded], [s1], name="accumulate"))
    body = Graph("body", inputs=[s, piece], initializers=[two, axes], nodes=nodes)
    M = None if trip is None else const("M", trip, np.int64)
    loop = Loop(body, [Carried(s0, s, s1), Sliced(X, piece, axis=1, **port)],
                [Last(s1, Value("s_final")), Concat(doubled, Value("ys"), **(concat or {})),
                 *([Last(piece, Value("last_piece"))] if last_piece else [])],
                trip_count=M, negative_trip_count=negative, strict_slices=strict, name="sliced")
    return single_loop_graph(loop, [X, s0])


def x_and_s0(x_shape=(3, 8)):
    x = np.arange(np.prod(x_shape), dtype=f32).reshape(x_shape)
    return {"X": x, "s0": np.zeros(3, f32)}


@pytest.mark.parametrize("port,starts", [
    (dict(keep_axis=True, part_size=2, stride=2), [0, 2, 4, 6]),
    (dict(keep_axis=True, part_size=2, stride=-2), [6, 4, 2, 0]),
    (dict(keep_axis=True, part_size=2, stride=1, start=0, end=8), [0, 1, 2, 3, 4, 5, 6]),
    (dict(keep_axis=True, part_size=2, stride=3, start=1, end=-2), [1, 4]),       # posts 1, 7
    (dict(keep_axis=True, part_size=2, stride=-3, start=-2, end=1), [5, 2]),      # reversed
    (dict(keep_axis=True, part_size=3, stride=-2, start=0, end=8), [5, 3, 1]),
    (dict(keep_axis=True, part_size=1, stride=-1), [7, 6, 5, 4, 3, 2, 1, 0]),
    (dict(stride=2), [0, 2, 4, 6]),
    (dict(stride=-3), [7, 4, 1]),
    (dict(start=2, end=-3, stride=1), [2, 3, 4, 5]),                              # posts 2, 6
    (dict(start=-1, end=5, stride=-1), [7, 6, 5]),                                # posts 8, 5
])
def test_sliced_pieces(port, starts):
    g = sliced_loop(port, dict(axis=1, new_axis=not port.get("keep_axis", False)))
    feeds = x_and_s0()
    x = feeds["X"]
    size = port.get("part_size", 1)
    pieces = [x[:, a:a + size] for a in starts]
    last = pieces[-1] if port.get("keep_axis") else pieces[-1][:, 0]
    ys = (np.concatenate if port.get("keep_axis") else np.stack)(
        [p * 2 if port.get("keep_axis") else p[:, 0] * 2 for p in pieces], axis=1)
    agree(g, feeds, {"s_final": sum(p.sum(1) for p in pieces), "ys": ys, "last_piece": last})


def test_keep_axis_piece_is_concatenated_back_along_its_axis():
    g = sliced_loop(dict(keep_axis=True, part_size=2, stride=2), dict(axis=1, new_axis=False))
    feeds = x_and_s0()
    agree(g, feeds, {"ys": feeds["X"] * 2})


@pytest.mark.parametrize("concat", [dict(axis=0, new_axis=False), dict(axis=-1, new_axis=False),
                                    dict(axis=1, new_axis=False, reverse=True),
                                    dict(axis=0, new_axis=True, reverse=True),
                                    dict(axis=-1, new_axis=True)])
def test_concat_without_new_axis_and_reversed(concat):
    g = sliced_loop(dict(keep_axis=True, part_size=2, stride=2), concat)
    x = x_and_s0()["X"]
    pieces = [x[:, a:a + 2] * 2 for a in (0, 2, 4, 6)]
    if concat.get("reverse"):
        pieces = pieces[::-1]
    join = np.stack if concat["new_axis"] else np.concatenate
    agree(g, x_and_s0(), {"ys": join(pieces, axis=concat["axis"])})


@pytest.mark.parametrize("trip,negative,count", [
    (-1, "unbounded", 8), (-1, "zero", 0), (-5, "unbounded", 8), (3, "zero", 3),
    (UNBOUNDED_TRIP_COUNT, "zero", 8), (0, "unbounded", 0), (20, "unbounded", 8)])
def test_trip_count_meanings(trip, negative, count):
    g = sliced_loop({}, {}, trip=trip, negative=negative, last_piece=False)
    ref = agree(g, x_and_s0(), {"s_final": x_and_s0()["X"][:, :count].sum(1)})
    assert ref["ys"].shape == (count, 3)


def test_zero_iterations_give_the_carried_initial_value_and_an_empty_concat():
    g = sliced_loop({}, {}, trip=0, last_piece=False)
    feeds = {"X": np.ones((3, 8), f32), "s0": np.full(3, 7.0, f32)}
    ref = agree(g, feeds, {"s_final": feeds["s0"]})
    assert ref["ys"].shape == (0, 3)


def test_strict_slices_trip_count_beyond_the_slices_is_an_error():
    g = sliced_loop({}, {}, trip=9, strict=True)
    all_raise(g, x_and_s0(), ig.ExecutionError, "beyond sliced input 1")


@pytest.mark.parametrize("backend", [
    "numpy",
    pytest.param("jax", marks=pytest.mark.xfail(
        strict=True, reason="the JAX backend stops at the end of the slices without an error "
        "when the loop has neither a trip count nor a condition")),
])
def test_strict_slices_without_trip_count_is_an_error_when_the_slices_run_out(backend):
    g = sliced_loop({}, {}, strict=True)
    all_raise(g, x_and_s0(), ig.ExecutionError, "beyond sliced input 1", [backend])


def test_strict_slices_within_the_slices_is_fine():
    g = sliced_loop({}, {}, trip=8, strict=True)
    agree(g, x_and_s0(), {"s_final": x_and_s0()["X"].sum(1)})


# --- concat length --------------------------------------------------------------------------


def counting_loop(length: int | None, n: int, **concat):
    """k = 0..n-1: y_k = [k, 10k]; Concat(y) padded to `length`."""
    k, kf, y = Value("k", I64), Value("kf", tensor("float32", ())), Value("y")
    scale = const("scale", [1.0, 10.0])
    body = Graph("body", inputs=[k], initializers=[scale], nodes=[
        Node("Cast", [k], [kf], {"to": 1}, name="to_float"),
        Node("Mul", [kf, scale], [y], name="scale")])
    L = None if length is None else const("L", length, np.int64)
    loop = Loop(body, [], [Concat(y, Value("ys"), length=L, **concat)],
                trip_count=const("M", n, np.int64), iteration_param=k, name="counting")
    y.type = tensor("float32", (2,))
    return single_loop_graph(loop, [])


@pytest.mark.parametrize("concat", [{}, dict(reverse=True), dict(axis=1),
                                    dict(new_axis=False), dict(new_axis=False, reverse=True)])
def test_concat_padded_with_zeros_to_its_length(concat):
    g = counting_loop(5, 3, **concat)
    entries = [np.array([k, 10 * k], f32) for k in range(3)]
    if concat.get("reverse"):
        entries = entries[::-1]
    entries += [np.zeros(2, f32)] * 2
    join = np.concatenate if concat.get("new_axis") is False else np.stack
    agree(g, {}, {"ys": join(entries, axis=concat.get("axis", 0))})


def test_concat_padded_after_zero_iterations():
    ref = agree(counting_loop(4, 0), {}, {"ys": np.zeros((4, 2), f32)})
    assert ref["ys"].dtype == f32


def test_concat_length_below_the_iteration_count_is_an_error():
    all_raise(counting_loop(2, 3), {}, ig.ExecutionError, "length 2")


# --- precondition, condition, iteration and condition parameters ----------------------------


def doubling_loop(trip: int | None, with_condition: bool):
    """While the precondition s < limit holds: s = 2 s + k; the condition (if any) is k < 4."""
    s0, limit = Value("s0", tensor("float32", ())), Value("limit", tensor("float32", ()))
    k, c, s = Value("k", I64), Value("c", B), Value("s", tensor("float32", ()))
    pre, kf, s2, s1 = Value("pre"), Value("kf"), Value("s2"), Value("s1")
    go, four = Value("go"), const("four", 4, np.int64)
    two = const("two", 2.0)
    nodes = [Node("Less", [s, limit], [pre], name="pre"),
             Node("Cast", [k], [kf], {"to": 1}, name="kf"),
             Node("Mul", [s, two], [s2], name="double"),
             Node("Add", [s2, kf], [s1], name="plus_k"),
             Node("Less", [k, four], [go], name="go")]
    body = Graph("body", inputs=[k, c, s], initializers=[two, four], nodes=nodes)
    loop = Loop(body, [Carried(s0, s, s1)],
                [Last(s1, Value("s_final")), Concat(s1, Value("trace")),
                 Concat(c, Value("conds"))],
                trip_count=None if trip is None else const("M", trip, np.int64),
                iteration_param=k, condition_param=c, precondition=pre,
                condition_result=go if with_condition else None, name="doubling")
    return single_loop_graph(loop, [s0, limit])


def python_doubling(s, limit, trip, with_condition):
    trace, conds, k, cond = [], [], 0, True
    while (trip is None or k < trip) and cond:
        if not s < limit:
            break
        conds.append(cond)
        s = 2 * s + k
        trace.append(s)
        if with_condition:
            cond = k < 4
        k += 1
    return s, trace, conds


@pytest.mark.parametrize("trip", [None, 3, 0])
@pytest.mark.parametrize("with_condition", [False, True])
@pytest.mark.parametrize("s0,limit", [(1.0, 100.0), (1.0, 1e6), (200.0, 100.0)])
def test_precondition(trip, with_condition, s0, limit):
    g = doubling_loop(trip, with_condition)
    feeds = {"s0": np.array(s0, f32), "limit": np.array(limit, f32)}
    s, trace, conds = python_doubling(s0, limit, trip, with_condition)
    ref = agree(g, feeds, {"s_final": s, "trace": np.array(trace, f32)})
    assert ref["trace"].shape == (len(trace),)
    assert ref["conds"].tolist() == conds


def test_iteration_parameter_of_declared_type_int32_rank_1():
    k, kf, y = Value("k", tensor("int32", (1,))), Value("kf"), Value("y")
    body = Graph("body", inputs=[k], nodes=[
        Node("Cast", [k], [kf], {"to": 1}, name="to_float"),
        Node("Identity", [kf], [y], name="y")])
    y.type = tensor("float32", (1,))
    loop = Loop(body, [], [Concat(y, Value("ys"), new_axis=False)],
                trip_count=const("M", 4, np.int64), iteration_param=k)
    agree(single_loop_graph(loop, []), {}, {"ys": np.arange(4, dtype=f32)})


# --- results read from outside the body, and captures ---------------------------------------


def test_last_of_an_outer_value_and_of_an_invariant():
    x, w = Value("x", tensor("float32", (2,))), Value("w", tensor("float32", (2,)))
    s, p, s1, m = (Value(n, tensor("float32", (2,))) for n in ("s", "p", "s1", "m"))
    body = Graph("body", inputs=[s, p], nodes=[Node("Add", [s, p], [s1], name="add"),
                                              Node("Max", [s1, p], [m], name="max")])
    loop = Loop(body, [Carried(x, s, s1), Invariant(w, p)],
                [Last(s1, Value("s_final")), Last(w, Value("w_final")),
                 Last(p, Value("p_final")), Concat(m, Value("ms"))],
                trip_count=const("M", 3, np.int64), name="outer_last")
    g = single_loop_graph(loop, [x, w])
    feeds = {"x": np.array([1.0, -5.0], f32), "w": np.array([0.5, 2.0], f32)}
    agree(g, feeds, {"s_final": feeds["x"] + 3 * feeds["w"], "w_final": feeds["w"],
                     "p_final": feeds["w"]})


def test_zero_iteration_last_of_an_outer_value():
    x, w = Value("x", tensor("float32", (2,))), Value("w", tensor("float32", (2,)))
    s, s1 = Value("s", tensor("float32", (2,))), Value("s1", tensor("float32", (2,)))
    body = Graph("body", inputs=[s], nodes=[Node("Neg", [s], [s1], name="neg")])
    loop = Loop(body, [Carried(x, s, s1)], [Last(s1, Value("s_final")), Last(w, Value("w_f"))],
                trip_count=const("M", 0, np.int64))
    feeds = {"x": np.array([1.0, 2.0], f32), "w": np.array([3.0, 4.0], f32)}
    agree(single_loop_graph(loop, [x, w]), feeds, {"s_final": feeds["x"], "w_f": feeds["w"]})


def test_captures_at_depth_two_and_a_nested_loop():
    """acc += a + i + j over i < 3, j < i + 1: the inner body reads the top level (a), the
    outer body (i as float) and its own iteration (j)."""
    a, acc0 = Value("a", tensor("float32", ())), Value("acc0", tensor("float32", ()))
    i, acc, fi, n_in = Value("i", I64), Value("acc", tensor("float32", ())), Value("fi"), Value()
    j, t, fj = Value("j", I64), Value("t", tensor("float32", ())), Value("fj")
    u1, u2, t1 = Value("u1"), Value("u2"), Value("t1", tensor("float32", ()))
    inner_body = Graph("inner", inputs=[j, t], nodes=[
        Node("Cast", [j], [fj], {"to": 1}, name="fj"),
        Node("Add", [a, fi], [u1], name="a_plus_i"),
        Node("Add", [u1, fj], [u2], name="plus_j"),
        Node("Add", [t, u2], [t1], name="accumulate")])
    acc1 = Value("acc1", tensor("float32", ()))
    one = const("one", 1, np.int64)
    inner = Loop(inner_body, [Carried(acc, t, t1)], [Last(t1, acc1), Concat(u2, Value("us"))],
                 trip_count=n_in, iteration_param=j, name="inner")
    outer_body = Graph("outer", inputs=[i, acc], initializers=[one], nodes=[
        Node("Cast", [i], [fi], {"to": 1}, name="fi"),
        Node("Add", [i, one], [n_in], name="n_inner"), inner])
    outer = Loop(outer_body, [Carried(acc0, acc, acc1)],
                 [Last(acc1, Value("acc_final")), Concat(acc1, Value("trace"))],
                 trip_count=const("M", 3, np.int64), iteration_param=i, name="outer")
    g = single_loop_graph(outer, [a, acc0])
    feeds = {"a": np.array(0.5, f32), "acc0": np.zeros((), f32)}
    want, trace = 0.0, []
    for ii in range(3):
        for jj in range(ii + 1):
            want += 0.5 + ii + jj
        trace.append(want)
    agree(g, feeds, {"acc_final": want, "trace": np.array(trace, f32)})


def test_zero_iteration_last_of_a_body_value_has_no_value():
    g = sliced_loop({}, {}, trip=0)
    all_raise(g, x_and_s0(), ig.ExecutionError, "output 2")


# --- where the backends and ir/loop.py's docstring part ways --------------------------------


def test_keep_axis_whole_axis_not_divisible_by_part_size_is_an_error():
    g = sliced_loop(dict(keep_axis=True, part_size=2, stride=2), dict(axis=1, new_axis=False),
                    x_shape=(3, 7))
    x = np.arange(21, dtype=f32).reshape(3, 7)
    all_raise(g, {"X": x, "s0": np.zeros(3, f32)}, ig.ExecutionError, "not divisible")


def test_keep_axis_remainder_outside_explicit_posts_is_dropped():
    g = sliced_loop(dict(keep_axis=True, part_size=2, stride=2, end=6),
                    dict(axis=1, new_axis=False), x_shape=(3, 7))
    x = np.arange(21, dtype=f32).reshape(3, 7)
    agree(g, {"X": x, "s0": np.zeros(3, f32)}, {"ys": x[:, :6] * 2})


def strict_loop_with_precondition():
    """Over X (3 pieces), trip count 10, strict slices, precondition k < 3: the precondition
    ends the loop exactly when the slices run out."""
    X, s0 = Value("X", tensor("float32", (3,))), Value("s0", tensor("float32", ()))
    s, p, k = Value("s", tensor("float32", ())), Value("p", tensor("float32", ())), Value("k", I64)
    s1, pre, three = Value("s1"), Value("pre"), const("three", 3, np.int64)
    body = Graph("body", inputs=[k, s, p], initializers=[three], nodes=[
        Node("Add", [s, p], [s1], name="add"), Node("Less", [k, three], [pre], name="pre")])
    loop = Loop(body, [Carried(s0, s, s1), Sliced(X, p)], [Last(s1, Value("out"))],
                trip_count=const("M", 10, np.int64), iteration_param=k, precondition=pre,
                strict_slices=True, name="strict_pre")
    return single_loop_graph(loop, [X, s0])


def test_precondition_ending_the_loop_as_strict_slices_run_out():
    feeds = {"X": np.ones(3, f32), "s0": np.zeros((), f32)}
    agree(strict_loop_with_precondition(), feeds, {"out": 3.0})
