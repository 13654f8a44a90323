"""Writing hand-built canonical loops (OpenVINO- and TensorRT-style features) as ONNX.

Oracle: a plain NumPy loop written in each test. The written model must pass the ONNX
checker and give the oracle's outputs in ONNX Runtime.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnxfe_util import assert_same, numpy_backend, ort_run, written

from itergraph.frontends.onnx import write
from itergraph.frontends.onnx.loop_export import scan_form
from itergraph.ir import Carried, Concat, Graph, Invariant, Last, Loop, Node, Sliced, Value, tensor

V = 13


def op(g: Graph, op_type: str, inputs, type_=None, name="", **attrs) -> Value:
    out = Value(name, type_)
    g.add(Node(op_type, inputs, [out], attrs, version=V))
    return out


def const(g: Graph, name, array) -> Value:
    a = np.asarray(array)
    v = Value(name, tensor(str(a.dtype), a.shape), const=a)
    g.initializers.append(v)
    return v


def check(g: Graph, feeds_list, oracle):
    m = written(g)
    run_graph = numpy_backend()
    for f in feeds_list:
        want = oracle(**f)
        assert_same(ort_run(m, f), want)
        assert_same(list(run_graph(g, f).values()), want)
    return m


# OpenVINO style ----------------------------------------------------------------------------


def ov_graph(static: bool):
    """TensorIterator-like: X [2, T, 3] cut in parts of 2 along axis 1 (stride 2, from 1);
    Y [S, 3] walked backwards one row at a time, keeping the axis; carried h [2, 2, 3]."""
    t, s = (7, 5) if static else ("T", "S")
    X = Value("X", tensor("float32", (2, t, 3)))
    Y = Value("Y", tensor("float32", (s, 3)))
    H0 = Value("H0", tensor("float32", (2, 2, 3)))
    body = Graph("ov_body")
    px = Value("px", tensor("float32", (2, 2, 3)))
    py = Value("py", tensor("float32", (1, 3)))
    h = Value("h", tensor("float32", (2, 2, 3)))
    body.inputs = [h, px, py]
    half = const(body, "half", np.float32(0.5))
    h2 = op(body, "Mul", [h, half], tensor("float32", (2, 2, 3)))
    h3 = op(body, "Add", [h2, px], tensor("float32", (2, 2, 3)))
    hn = op(body, "Add", [h3, py], tensor("float32", (2, 2, 3)), name="h_next")
    body.outputs = [hn, py]
    outs = [Value("h_last"), Value("h_all"), Value("y_rev"), Value("y_last")]
    loop = Loop(
        body,
        [Carried(H0, h, hn),
         Sliced(X, px, axis=1, start=1, end=-1, stride=2, part_size=2, keep_axis=True),
         Sliced(Y, py, axis=0, start=0, end=-1, stride=-1, part_size=1, keep_axis=True)],
        [Last(hn, outs[0]), Concat(hn, outs[1], axis=1, new_axis=False),
         Concat(py, outs[2], axis=0, new_axis=False, reverse=True), Last(py, outs[3])],
        name="ti", origin="openvino.TensorIterator")
    g = Graph("main", [X, Y, H0], outs, [loop], opset_imports={"": V})
    return g, loop


def ov_oracle(X, Y, H0):
    t, s = X.shape[1], Y.shape[0]
    count = min((t - 1 - 2) // 2 + 1, s)
    h, hs, ys = H0, [], []
    for k in range(count):
        px = X[:, 1 + 2 * k: 3 + 2 * k]
        py = Y[s - 1 - k: s - k]
        h = h * np.float32(0.5) + px + py
        hs.append(h)
        ys.append(py)
    return [h, np.concatenate(hs, axis=1), np.concatenate(ys[::-1], axis=0), ys[-1]]


@pytest.mark.parametrize("static", [True, False])
def test_openvino_style_lowering(static):
    g, loop = ov_graph(static)
    assert not scan_form(loop)
    rng = np.random.default_rng(0)
    fs = [{"X": rng.standard_normal((2, 7, 3)).astype(np.float32),
           "Y": rng.standard_normal((5, 3)).astype(np.float32),
           "H0": rng.standard_normal((2, 2, 3)).astype(np.float32)}]
    if not static:  # the slice count limits the loop here, then the other input
        fs.append({**fs[0], "Y": rng.standard_normal((2, 3)).astype(np.float32)})
        fs.append({**fs[0], "X": rng.standard_normal((2, 4, 3)).astype(np.float32)})
    m = check(g, fs, ov_oracle)
    assert [n.op_type for n in m.graph.node].count("Loop") == 1


def test_negative_stride_parts_and_new_axis_concat():
    """part_size 2 walked backwards from the end, keep_axis; stacked on a new axis 1."""
    X = Value("X", tensor("float32", (None, 2)))
    body = Graph("b")
    p = Value("p", tensor("float32", (2, 2)))
    body.inputs = [p]
    q = op(body, "Neg", [p], tensor("float32", (2, 2)))
    body.outputs = [q]
    out = Value("Q")
    loop = Loop(body, [Sliced(X, p, axis=0, start=0, end=-1, stride=-3, part_size=2,
                              keep_axis=True)],
                [Concat(q, out, axis=1, new_axis=True)], name="rev")
    g = Graph("main", [X], [out], [loop], opset_imports={"": V})

    def oracle(X):
        n = X.shape[0]
        parts = [-X[n - 3 * k - 2: n - 3 * k] for k in range((n - 2) // 3 + 1)] if n >= 2 else []
        return [np.stack(parts, axis=1) if parts else np.zeros((2, 0, 2), np.float32)]

    check(g, [{"X": np.arange(2 * n, dtype=np.float32).reshape(n, 2)} for n in (8, 4, 2)],
          oracle)


# TensorRT style ----------------------------------------------------------------------------


def trt_graph(reverse: bool, with_trip: bool):
    """WHILE i < limit (precondition on the state at the start of each iteration), iterating
    X's rows; acc accumulates; a kCONCATENATE output padded to L."""
    X = Value("X", tensor("float32", ("N", 3)))
    limit = Value("limit", tensor("int64", ()))
    L = Value("L", tensor("int64", ()))
    trip = Value("trip", tensor("int32", ()))
    acc0 = Value("acc0", tensor("float32", (3,)))
    body = Graph("trt_body")
    i = Value("i", tensor("int64", ()))
    acc = Value("acc", tensor("float32", (3,)))
    x = Value("x", tensor("float32", (3,)))
    lim = Value("lim", tensor("int64", ()))
    body.inputs = [i, acc, x, lim]
    one = const(body, "one", np.int64(1))
    i1 = op(body, "Add", [i, one], tensor("int64", ()))
    acc1 = op(body, "Add", [acc, x], tensor("float32", (3,)))
    pre = op(body, "Less", [i, lim], tensor("bool", ()), name="keep_going")
    body.outputs = [i1, acc1]
    outs = [Value("acc_final"), Value("accs"), Value("count")]
    loop = Loop(
        body,
        [Carried(Value("i0", tensor("int64", ())), i, i1), Carried(acc0, acc, acc1),
         Sliced(X, x, axis=0), Invariant(limit, lim)],
        [Last(acc1, outs[0]), Concat(acc1, outs[1], axis=0, reverse=reverse, length=L),
         Last(i1, outs[2])],
        precondition=pre, trip_count=trip if with_trip else None, name="trt", origin="network")
    i0 = loop.input_ports[0].value
    zero = Node("Constant", [], [i0], {"value": np.array(0, np.int64)}, version=V)
    ins = [X, limit, L, acc0] + ([trip] if with_trip else [])
    return Graph("main", ins, outs, [zero, loop], opset_imports={"": V}), loop


def trt_oracle(X, limit, L, acc0, trip=None, reverse=False):
    i, acc, accs = 0, acc0, []
    k = 0
    while k < X.shape[0] and (trip is None or trip < 0 or k < trip):
        if not i < limit:
            break
        i, acc = i + 1, acc + X[k]
        accs.append(acc)
        k += 1
    stack = np.stack(accs) if accs else np.zeros((0, 3), np.float32)
    if reverse:
        stack = stack[::-1]
    pad = np.zeros((int(L) - len(stack), 3), np.float32)
    return [acc, np.concatenate([stack, pad]), np.array(i, np.int64)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_trip", [False, True])
def test_tensorrt_style_lowering(reverse, with_trip):
    g, loop = trt_graph(reverse, with_trip)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 3)).astype(np.float32)
    fs = []
    for lim, L in [(3, 6), (0, 2), (9, 5)]:
        f = {"X": X, "limit": np.array(lim, np.int64), "L": np.array(L, np.int64),
             "acc0": np.ones(3, np.float32)}
        if with_trip:
            f["trip"] = np.array(4 if lim == 9 else -1, np.int32)
        fs.append(f)
    check(g, fs, lambda **f: trt_oracle(reverse=reverse, **f))


def test_concat_length_below_count_fails_at_run_time():
    g, _ = trt_graph(False, False)
    m = written(g)
    f = {"X": np.ones((5, 3), np.float32), "limit": np.array(4, np.int64),
         "L": np.array(2, np.int64), "acc0": np.zeros(3, np.float32)}
    with pytest.raises(Exception):  # noqa: B017 - ONNX Runtime's own error type
        ort_run(m, f)


def test_condition_loop_with_cast_iteration_and_invariant():
    """OpenVINO Loop style: trip count -1 (unbounded), execution condition from the body,
    an int32 current-iteration parameter, and an invariant input."""
    M = Value("M", tensor("int64", ()))
    c0 = Value("c0", tensor("bool", ()))
    s0 = Value("s0", tensor("float32", (2,)))
    step = Value("step", tensor("float32", (2,)))
    body = Graph("b")
    it = Value("it", tensor("int32", ()))
    s = Value("s", tensor("float32", (2,)))
    st = Value("st", tensor("float32", (2,)))
    body.inputs = [it, s, st]
    fit = op(body, "Cast", [it], tensor("float32", ()), to=1)
    s1 = op(body, "Add", [s, op(body, "Mul", [st, fit], tensor("float32", (2,)))],
            tensor("float32", (2,)))
    lim = const(body, "lim", np.int32(4))
    cond = op(body, "Less", [it, lim], tensor("bool", ()))
    body.outputs = [cond, s1]
    outs = [Value("s_final"), Value("s_all")]
    loop = Loop(body, [Carried(s0, s, s1), Invariant(step, st)],
                [Last(s1, outs[0]), Concat(s1, outs[1], axis=0, new_axis=True)],
                trip_count=M, initial_condition=c0, condition_result=cond, iteration_param=it,
                name="ovloop", origin="openvino.Loop")
    g = Graph("main", [M, c0, s0, step], outs, [loop], opset_imports={"": V})

    def oracle(M, c0, s0, step):
        s, all_, k, cond = s0, [], 0, bool(c0)
        while (M < 0 or k < M) and cond:
            s = s + step * np.float32(k)
            all_.append(s)
            cond = k < 4
            k += 1
        return [s, np.stack(all_) if all_ else np.zeros((0, 2), np.float32)]

    base = {"s0": np.zeros(2, np.float32), "step": np.array([1, -1], np.float32)}
    fs = [{"M": np.array(m, np.int64), "c0": np.array(c), **base}
          for m, c in [(-1, True), (3, True), (10, True), (-1, False), (0, True)]]
    check(g, fs, oracle)


def test_scan_form_chosen_when_possible():
    X = Value("X", tensor("float32", ("T", 2)))
    s0 = Value("s0", tensor("float32", (2,)))
    body = Graph("b")
    x = Value("x", tensor("float32", (2,)))
    s = Value("s", tensor("float32", (2,)))
    body.inputs = [s, x]
    s1 = op(body, "Add", [s, x], tensor("float32", (2,)))
    body.outputs = [s1]
    outs = [Value("sf"), Value("all")]
    loop = Loop(body, [Carried(s0, s, s1), Sliced(X, x, axis=0, stride=-1)],
                [Last(s1, outs[0]), Concat(s1, outs[1], axis=1, reverse=True)])
    g = Graph("main", [X, s0], outs, [loop], opset_imports={"": V})
    m = write(g)
    assert [n.op_type for n in m.graph.node] == ["Scan"]

    def oracle(X, s0):
        s, all_ = s0, []
        for row in X[::-1]:
            s = s + row
            all_.append(s)
        return [s, np.stack(all_[::-1], axis=1)]

    check(g, [{"X": np.arange(8, dtype=np.float32).reshape(4, 2),
               "s0": np.ones(2, np.float32)}], oracle)


def test_precondition_on_int32_iteration_number():
    """WHILE it < n with an int32 iteration parameter: the clone before the loop sees 0."""
    n = Value("n", tensor("int32", ()))
    a0 = Value("a0", tensor("float32", (2,)))
    body = Graph("b")
    it = Value("it", tensor("int32", ()))
    a = Value("a", tensor("float32", (2,)))
    nn = Value("nn", tensor("int32", ()))
    body.inputs = [it, a, nn]
    pre = op(body, "Less", [it, nn], tensor("bool", ()))
    two = const(body, "two", np.float32(2))
    a1 = op(body, "Mul", [a, two], tensor("float32", (2,)))
    body.outputs = [a1]
    out = Value("a_final")
    loop = Loop(body, [Carried(a0, a, a1), Invariant(n, nn)], [Last(a1, out)],
                iteration_param=it, precondition=pre, name="while_it")
    g = Graph("main", [n, a0], [out], [loop], opset_imports={"": V})

    def oracle(n, a0):
        return [a0 * np.float32(2) ** max(int(n), 0)]

    check(g, [{"n": np.array(k, np.int32), "a0": np.array([1, -3], np.float32)}
              for k in (0, 1, 4)], oracle)


def test_precondition_reads_a_body_constant_through_an_inner_loop_result():
    """WHILE i < k where k is the Last of an inner loop whose port result is a body constant
    the inner body does not otherwise use: the clone before the loop must define it too."""
    a0 = Value("a0", tensor("float32", (2,)))
    body = Graph("b")
    i = Value("i", tensor("int64", ()))
    a = Value("a", tensor("float32", (2,)))
    body.inputs = [i, a]
    limit = const(body, "limit", np.int64(3))
    once = const(body, "once", np.int64(1))
    k = Value("k", tensor("int64", ()))
    inner = Loop(Graph("inner"), [], [Last(limit, k)], trip_count=once, name="inner")
    body.add(inner)
    pre = op(body, "Less", [i, k], tensor("bool", ()))
    one = const(body, "one", np.int64(1))
    i1 = op(body, "Add", [i, one], tensor("int64", ()))
    two = const(body, "two", np.float32(2))
    a1 = op(body, "Mul", [a, two], tensor("float32", (2,)))
    body.outputs = [i1, a1]
    out = Value("a_final")
    i0 = Value("i0", tensor("int64", ()))
    zero = Node("Constant", [], [i0], {"value": np.array(0, np.int64)}, version=V)
    loop = Loop(body, [Carried(i0, i, i1), Carried(a0, a, a1)], [Last(a1, out)],
                precondition=pre, name="while_k")
    g = Graph("main", [a0], [out], [zero, loop], opset_imports={"": V})
    check(g, [{"a0": np.array([1, -3], np.float32)}],
          lambda a0: [a0 * np.float32(8)])
