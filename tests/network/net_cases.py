"""Loop networks with their oracles (plain Python loops), shared by the NumPy and ORT tests.

Each case returns ``(network, feeds, expected outputs)``. The examples of the TensorRT loop
documentation (the [[2,3,5],[4,6,8]] iterator, concatenation on axis 0 and 1, REVERSE, the
``i = j; i += k`` recurrence, LAST_VALUE, padding) are all here.
"""

from __future__ import annotations

import numpy as np
from net_helpers import const, ew, i32, new_network, output

import itergraph.network as trt

E = trt.ElementWiseOperation
X23 = np.array([[2, 3, 5], [4, 6, 8]], np.float32)
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _stack(items, axis=0, dtype=np.float32, empty_shape=None):
    if not items:
        return np.zeros(empty_shape, dtype)
    return np.stack(items, axis=axis).astype(dtype)


def _iterate(axis: int, reverse: bool, count: int):
    """Iterator over X23 on `axis`; outputs every iteration's slice, concatenated on axis 0."""
    net = new_network()
    x = net.add_input("x", trt.float32, X23.shape)
    loop = net.add_loop()
    n = i32(net, count)
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    piece = loop.add_iterator(x, axis, reverse).get_output(0)
    lo = loop.add_loop_output(piece, trt.LoopOutput.CONCATENATE, 0)
    lo.set_input(1, n)
    output(net, lo.get_output(0), "pieces")
    # oracle: TensorRT reads X[i] (X[M-1-i] reversed) on `axis`
    pieces = []
    for i in range(count):
        j = count - 1 - i if reverse else i
        pieces.append(np.take(X23, j, axis=axis))
    return net, {"x": X23}, {"pieces": _stack(pieces)}


@case
def iterator_axis0():
    return _iterate(0, False, 2)  # {2,3,5} then {4,6,8}


@case
def iterator_axis1():
    return _iterate(1, False, 3)  # the columns


@case
def iterator_reversed():
    return _iterate(0, True, 2)


@case
def iterator_axis1_reversed():
    return _iterate(1, True, 3)


@case
def iterator_reversed_count_below_length():
    return _iterate(1, True, 2)  # M=2: columns 1 then 0 (TensorRT's X[M-1-i])


def _concat(kind, axis: int):
    """Rows {a,b,c}, {d,e,f} joined by a loop output of `kind` on `axis`."""
    net = new_network()
    x = net.add_input("x", trt.float32, X23.shape)
    loop = net.add_loop()
    n = i32(net, 2)
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    lo = loop.add_loop_output(row, kind, axis)
    lo.set_input(1, n)
    output(net, lo.get_output(0), "y")
    rows = [X23[i] for i in range(2)]
    if kind is trt.LoopOutput.REVERSE:
        rows = rows[::-1]
    return net, {"x": X23}, {"y": _stack(rows, axis)}


@case
def concatenate_axis0():
    return _concat(trt.LoopOutput.CONCATENATE, 0)  # [[a,b,c],[d,e,f]]


@case
def concatenate_axis1():
    return _concat(trt.LoopOutput.CONCATENATE, 1)  # [[a,d],[b,e],[c,f]]


@case
def reverse_axis0():
    return _concat(trt.LoopOutput.REVERSE, 0)


@case
def reverse_axis1():
    return _concat(trt.LoopOutput.REVERSE, 1)


@case
def recurrence_i_plus_k():
    """for (i = j; ...; i += k): the recurrence output is <j, j+k, j+2k, ...>."""
    net = new_network()
    j = net.add_input("j", trt.int32, ())
    k = net.add_input("k", trt.int32, ())
    loop = net.add_loop()
    n = i32(net, 4)
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    rec = loop.add_recurrence(j)
    i = rec.get_output(0)
    rec.set_input(1, ew(net, i, k, E.SUM))
    seq = loop.add_loop_output(i, trt.LoopOutput.CONCATENATE)
    seq.set_input(1, n)
    output(net, seq.get_output(0), "seq")
    output(net, loop.add_loop_output(i, trt.LoopOutput.LAST_VALUE).get_output(0), "last")
    jv, kv = np.array(7, np.int32), np.array(-3, np.int32)
    seen, iv = [], jv
    for _ in range(4):
        seen.append(iv)
        iv = iv + kv
    return net, {"j": jv, "k": kv}, {"seq": _stack(seen, dtype=np.int32), "last": iv}


@case
def last_value_running_sum():
    """LAST_VALUE of a running sum of rows; CONCATENATE of the partial sums."""
    net = new_network()
    x = net.add_input("x", trt.float32, (4, 3))
    loop = net.add_loop()
    n = i32(net, 4)
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    rec = loop.add_recurrence(const(net, np.zeros(3, np.float32)))
    nxt = ew(net, rec.get_output(0), row, E.SUM)
    rec.set_input(1, nxt)
    output(net, loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "total")
    partial = loop.add_loop_output(nxt, trt.LoopOutput.CONCATENATE)
    partial.set_input(1, n)
    output(net, partial.get_output(0), "partial")
    xv = np.arange(12, dtype=np.float32).reshape(4, 3)
    acc, parts = np.zeros(3, np.float32), []
    for r in xv:
        acc = acc + r
        parts.append(acc)
    return net, {"x": xv}, {"total": acc, "partial": _stack(parts)}


@case
def padding():
    """CONCATENATE with a length beyond the iteration count: padded (with zeros here)."""
    net = new_network()
    x = net.add_input("x", trt.float32, X23.shape)
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 2), trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    lo = loop.add_loop_output(row, trt.LoopOutput.CONCATENATE, 1)
    lo.set_input(1, i32(net, 5))
    out = output(net, lo.get_output(0), "y")
    assert out.shape == (3, 5)
    want = np.zeros((3, 5), np.float32)
    for i in range(2):
        want[:, i] = X23[i]
    return net, {"x": X23}, {"y": want}


def _while(limit: int, count: int | None):
    """i = 0; while i < limit (and fewer than `count` iterations): i += 1; acc += 10 * i."""
    net = new_network()
    lim = net.add_input("limit", trt.int32, ())
    loop = net.add_loop()
    ri = loop.add_recurrence(i32(net, 0))
    racc = loop.add_recurrence(i32(net, 1))
    i = ri.get_output(0)
    loop.add_trip_limit(ew(net, i, lim, E.LESS), trt.TripLimit.WHILE)
    if count is not None:
        loop.add_trip_limit(i32(net, count), trt.TripLimit.COUNT)
    i1 = ew(net, i, i32(net, 1), E.SUM)
    ri.set_input(1, i1)
    racc.set_input(1, ew(net, racc.get_output(0), ew(net, i1, i32(net, 10), E.PROD), E.SUM))
    output(net, loop.add_loop_output(racc.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "acc")
    output(net, loop.add_loop_output(i, trt.LoopOutput.LAST_VALUE).get_output(0), "i")
    seq = loop.add_loop_output(i, trt.LoopOutput.CONCATENATE)
    seq.set_input(1, i32(net, 6))
    output(net, seq.get_output(0), "seq")
    iv, acc, seen = 0, 1, []
    while iv < limit and (count is None or len(seen) < count):
        seen.append(iv)
        iv += 1
        acc += 10 * iv
    padded = np.zeros(6, np.int32)
    padded[: len(seen)] = seen
    return net, {"limit": np.array(limit, np.int32)}, {
        "acc": np.array(acc, np.int32), "i": np.array(iv, np.int32), "seq": padded}


@case
def while_three_iterations():
    return _while(3, None)


@case
def while_zero_iterations():
    return _while(0, None)  # the condition is false at the start: no iteration at all


@case
def while_and_count_count_stops_first():
    return _while(5, 2)


@case
def while_and_count_while_stops_first():
    return _while(3, 5)


@case
def nested_inferred():
    """The inner loop iterates over the outer iterator's row, so it is nested in the outer."""
    net = new_network()
    x = net.add_input("x", trt.float32, (3, 4))
    outer = net.add_loop()
    n_out = i32(net, 3)
    outer.add_trip_limit(n_out, trt.TripLimit.COUNT)
    row = outer.add_iterator(x).get_output(0)
    inner = net.add_loop()
    n_in = i32(net, 4)
    inner.add_trip_limit(n_in, trt.TripLimit.COUNT)
    elem = inner.add_iterator(row).get_output(0)
    acc = inner.add_recurrence(const(net, np.float32(0)))
    nxt = ew(net, acc.get_output(0), elem, E.SUM)
    acc.set_input(1, nxt)
    row_sum = inner.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0)
    cums = inner.add_loop_output(nxt, trt.LoopOutput.CONCATENATE)
    cums.set_input(1, n_in)
    sums = outer.add_loop_output(row_sum, trt.LoopOutput.CONCATENATE)
    sums.set_input(1, n_out)
    cum_all = outer.add_loop_output(cums.get_output(0), trt.LoopOutput.CONCATENATE)
    cum_all.set_input(1, n_out)
    output(net, sums.get_output(0), "sums")
    output(net, cum_all.get_output(0), "cumsum")
    xv = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    sums_v, cum_v = [], []
    for r in xv:
        a, c = np.float32(0), []
        for e in r:
            a = np.float32(a + e)
            c.append(a)
        sums_v.append(a)
        cum_v.append(c)
    return net, {"x": xv}, {"sums": np.array(sums_v, np.float32),
                            "cumsum": np.array(cum_v, np.float32)}


@case
def nested_through_capture():
    """The inner loop's body reads the outer iterator directly (no boundary layer)."""
    net = new_network()
    x = net.add_input("x", trt.float32, (3, 2))
    y = net.add_input("y", trt.float32, (4, 2))
    outer = net.add_loop()
    outer.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    row = outer.add_iterator(x).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(i32(net, 4), trt.TripLimit.COUNT)
    yrow = inner.add_iterator(y).get_output(0)  # y is outside both loops
    acc = inner.add_recurrence(const(net, np.zeros(2, np.float32)))
    acc.set_input(1, ew(net, acc.get_output(0), ew(net, yrow, row, E.PROD), E.SUM))
    dots = inner.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0)
    out = outer.add_loop_output(dots, trt.LoopOutput.CONCATENATE)
    out.set_input(1, i32(net, 3))
    output(net, out.get_output(0), "z")
    xv = np.arange(6, dtype=np.float32).reshape(3, 2)
    yv = np.arange(8, dtype=np.float32).reshape(4, 2) / 4
    want = []
    for r in xv:
        a = np.zeros(2, np.float32)
        for yr in yv:
            a = a + yr * r
        want.append(a)
    return net, {"x": xv, "y": yv}, {"z": np.array(want, np.float32)}


@case
def invariant_layers_stay_outside():
    """A layer that uses only outside values is loop-invariant, whatever the call order."""
    net = new_network()
    x = net.add_input("x", trt.float32, (3, 2))
    w = net.add_input("w", trt.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    w2 = ew(net, w, w, E.SUM)  # added "inside" the loop, but invariant
    out = loop.add_loop_output(ew(net, row, w2, E.PROD), trt.LoopOutput.CONCATENATE)
    out.set_input(1, i32(net, 3))
    output(net, out.get_output(0), "y")
    xv = np.arange(6, dtype=np.float32).reshape(3, 2)
    wv = np.array([0.5, -1], np.float32)
    return net, {"x": xv, "w": wv}, {"y": np.stack([r * (wv + wv) for r in xv])}


@case
def dynamic_count_from_shape():
    """COUNT and length computed from the input's run-time shape (add_shape + add_gather)."""
    net = new_network()
    x = net.add_input("x", trt.float32, (-1, 3))
    shape = net.add_shape(x).get_output(0)
    n64 = net.add_gather(shape, const(net, np.int32(0)), 0).get_output(0)
    n = net.add_cast(n64, trt.int32).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    row = loop.add_iterator(x, 0, True).get_output(0)
    rec = loop.add_recurrence(const(net, np.zeros(3, np.float32)))
    nxt = ew(net, ew(net, rec.get_output(0), const(net, np.full(3, 0.5, np.float32)),
                     E.PROD), row, E.SUM)
    rec.set_input(1, nxt)
    seq = loop.add_loop_output(nxt, trt.LoopOutput.CONCATENATE)
    seq.set_input(1, n)
    out = output(net, seq.get_output(0), "y")
    assert out.shape == (-1, 3)
    xv = np.arange(15, dtype=np.float32).reshape(5, 3)
    a, want = np.zeros(3, np.float32), []
    for r in xv[::-1]:
        a = a * 0.5 + r
        want.append(a)
    return net, {"x": xv}, {"y": np.array(want, np.float32)}


@case
def negative_count_runs_zero_times():
    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    c = net.add_input("c", trt.int32, ())
    loop = net.add_loop()
    loop.add_trip_limit(c, trt.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    rec.set_input(1, ew(net, rec.get_output(0), rec.get_output(0), E.SUM))
    output(net, loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "y")
    xv = np.array([1, 2], np.float32)
    return net, {"x": xv, "c": np.array(-2, np.int32)}, {"y": xv}


@case
def shared_next_value_zero_iterations():
    """Two recurrences with one next value keep their own initial values after 0 trips."""
    net = new_network()
    a = net.add_input("a", trt.float32, (2,))
    b = net.add_input("b", trt.float32, (2,))
    c = net.add_input("c", trt.int32, ())
    loop = net.add_loop()
    loop.add_trip_limit(c, trt.TripLimit.COUNT)
    ra, rb = loop.add_recurrence(a), loop.add_recurrence(b)
    nxt = ew(net, ra.get_output(0), rb.get_output(0), E.SUM)
    ra.set_input(1, nxt)
    rb.set_input(1, nxt)
    output(net, loop.add_loop_output(ra.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "ya")
    output(net, loop.add_loop_output(rb.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "yb")
    av, bv = np.array([1, 2], np.float32), np.array([10, 20], np.float32)
    return net, {"a": av, "b": bv, "c": np.array(0, np.int32)}, {"ya": av, "yb": bv}


@case
def recurrence_with_invariant_next():
    """A recurrence whose next value comes from outside the loop."""
    net = new_network()
    a = net.add_input("a", trt.float32, (2,))
    b = net.add_input("b", trt.float32, (2,))
    loop = net.add_loop()
    n = i32(net, 3)
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    r = loop.add_recurrence(a)
    r.set_input(1, b)
    seq = loop.add_loop_output(r.get_output(0), trt.LoopOutput.CONCATENATE)
    seq.set_input(1, n)
    output(net, seq.get_output(0), "seq")
    output(net, loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "last")
    av, bv = np.array([1, 2], np.float32), np.array([10, 20], np.float32)
    return net, {"a": av, "b": bv}, {"seq": np.stack([av, bv, bv]), "last": bv}


@case
def conditional_inside_loop():
    """Per row: if sum(row) > 0 then 2*row else -row (an If in the loop body)."""
    net = new_network()
    x = net.add_input("x", trt.float32, (4, 3))
    loop = net.add_loop()
    n = i32(net, 4)
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    s = net.add_reduce(row, trt.ReduceOperation.SUM, 1, False).get_output(0)
    cond = ew(net, s, const(net, np.float32(0)), E.GREATER)
    ifc = net.add_if_conditional()
    ifc.set_condition(cond)
    r = ifc.add_input(row).get_output(0)
    t = ew(net, r, const(net, np.full(3, 2, np.float32)), E.PROD)
    f = net.add_unary(r, trt.UnaryOperation.NEG).get_output(0)
    picked = ifc.add_output(t, f).get_output(0)
    seq = loop.add_loop_output(picked, trt.LoopOutput.CONCATENATE)
    seq.set_input(1, n)
    output(net, seq.get_output(0), "y")
    xv = np.array([[1, 2, 3], [-1, -2, 0], [5, -6, 2], [0, 0, 0]], np.float32)
    want = [r * 2 if r.sum() > 0 else -r for r in xv]
    return net, {"x": xv}, {"y": np.array(want, np.float32)}


@case
def loop_inside_conditional():
    """A loop whose iterator reads a conditional input runs in the true branch only."""
    net = new_network()
    x = net.add_input("x", trt.float32, (3, 2))
    flag = net.add_input("flag", trt.bool, ())
    ifc = net.add_if_conditional()
    ifc.set_condition(flag)
    xin = ifc.add_input(x).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)
    row = loop.add_iterator(xin).get_output(0)
    acc = loop.add_recurrence(const(net, np.zeros(2, np.float32)))
    acc.set_input(1, ew(net, acc.get_output(0), row, E.SUM))
    total = loop.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE).get_output(0)
    other = net.add_reduce(xin, trt.ReduceOperation.MAX, 1, False).get_output(0)
    output(net, ifc.add_output(total, other).get_output(0), "y")
    xv = np.array([[1, 7], [2, -3], [4, 0]], np.float32)
    return net, {"x": xv, "flag": np.array(True)}, {"y": xv.sum(axis=0)}


@case
def loop_without_outputs_is_dropped():
    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()  # no trip limit, no output: dropped
    loop.add_iterator(const(net, np.ones((3, 2), np.float32)))
    output(net, net.add_activation(x, trt.ActivationType.RELU).get_output(0), "y")
    xv = np.array([-1, 2], np.float32)
    return net, {"x": xv}, {"y": np.maximum(xv, 0)}


def _while_iterating(limit: int, count: int | None):
    """An iterator in a WHILE loop that stops before (or at) the iterator's end."""
    net = new_network()
    x = net.add_input("x", trt.float32, X23.shape)
    loop = net.add_loop()
    r = loop.add_recurrence(i32(net, 0))
    loop.add_trip_limit(ew(net, r.get_output(0), i32(net, limit), E.LESS), trt.TripLimit.WHILE)
    if count is not None:
        loop.add_trip_limit(i32(net, count), trt.TripLimit.COUNT)
    r.set_input(1, ew(net, r.get_output(0), i32(net, 1), E.SUM))
    row = loop.add_iterator(x).get_output(0)
    n = min(limit, count if count is not None else limit)
    lo = loop.add_loop_output(row, trt.LoopOutput.CONCATENATE)
    lo.set_input(1, i32(net, n))
    output(net, lo.get_output(0), "y")
    return net, {"x": X23}, {"y": X23[:n]}


@case
def while_iterating_to_the_end():
    return _while_iterating(2, None)


@case
def while_stops_before_a_count_beyond_the_iterator():
    return _while_iterating(1, 5)  # COUNT 5 > 2 rows is fine: WHILE stops after 1
