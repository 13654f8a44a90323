"""The canonical Loop on the NumPy backend, built by hand, against plain Python loops.

The bodies use two tiny kernels registered here in a private domain, so these tests exercise
the loop machinery alone (ports, counts, conditions, accumulation), independent of op kernels.
"""

import numpy as np
import pytest

import itergraph as ig
from itergraph.backends.numpy import run_graph
from itergraph.backends.numpy.kernels import kernel
from itergraph.ir import Carried, Concat, Graph, Invariant, Last, Loop, Node, Sliced, Value, tensor

D = "itergraph.test"


@kernel("add", domain=D)
def _add(node, ctx):
    return lambda a, b: np.asarray(a + b)


@kernel("lt", domain=D)
def _lt(node, ctx):
    return lambda a, b: np.asarray(a < b)


@kernel("tile2", domain=D)
def _tile2(node, ctx):  # grows its input: a carried value that changes shape
    return lambda a: np.concatenate([a, a])


def op(g, name, *ins):
    n = g.add(Node(name, ins, 1, domain=D))
    return n.outputs[0]



def test_carried_sum_with_trip_count_and_stacked_scalars():
    x0 = Value("x0", tensor("float32", ()))
    trip = Value("n", tensor("int64", ()))
    body = Graph("body")
    p = Value("p", tensor("float32", ()))
    i = Value("i", tensor("int64", ()))
    body.inputs = [i, p]
    one = Value("one", const=np.float32(1.0) * np.ones((), np.float32))
    body.initializers = [one]
    nxt = op(body, "add", p, one)
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=trip, iteration_param=i, name="L")
    out_last = loop.add_output(Last(nxt, Value("final")))
    out_seq = loop.add_output(Concat(p, Value("seq")))
    g = Graph("g", [x0, trip], [out_last, out_seq], [loop])
    for n in (0, 1, 5):
        res = run_graph(g, {"x0": np.float32(2.0) * np.ones((), np.float32), "n": np.array(n)})
        acc, seq = 2.0, []
        for _ in range(n):
            seq.append(acc)
            acc += 1
        assert float(res["final"]) == acc
        assert res["seq"].shape == (n,) and res["seq"].dtype == np.float32
        np.testing.assert_array_equal(res["seq"], np.array(seq, np.float32))


def _sliced_graph(axis, stride, keep_axis=False, part_size=1, start=0, end=-1, new_axis=True,
                  out_axis=0, reverse_out=False):
    x = Value("x", tensor("float32", None))
    body = Graph("body")
    e = Value("e")
    body.inputs = [e]
    loop = Loop(body, [Sliced(x, e, axis, start, end, stride, part_size, keep_axis)])
    y = loop.add_output(Concat(e, Value("y"), out_axis, reverse_out, new_axis))
    return Graph("g", [x], [y], [loop])


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("stride", [1, -1])
def test_sliced_input_round_trips_through_concat(axis, stride):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = _sliced_graph(axis, stride, out_axis=axis, reverse_out=stride < 0)
    y = run_graph(g, {"x": x})["y"]
    np.testing.assert_array_equal(y, x)


def test_openvino_style_part_size_and_reverse():
    x = np.arange(2 * 6, dtype=np.float32).reshape(2, 6)
    g = _sliced_graph(1, -2, keep_axis=True, part_size=2, new_axis=False, out_axis=1)
    y = run_graph(g, {"x": x})["y"]
    pieces = [x[:, k:k + 2] for k in (4, 2, 0)]
    np.testing.assert_array_equal(y, np.concatenate(pieces, axis=1))


def test_while_condition_and_precondition_and_zero_iterations():
    # cond loop: x < limit checked at the end of each iteration (ONNX style)
    x0 = Value("x0", tensor("int64", ()))
    lim = Value("lim", tensor("int64", ()))
    body = Graph("body")
    p = Value("p", tensor("int64", ()))
    body.inputs = [p]
    one = Value("one", const=np.array(1))
    body.initializers = [one]
    nxt = op(body, "add", p, one)
    c = op(body, "lt", nxt, lim)  # outer capture of `lim`
    loop = Loop(body, [Carried(x0, p, nxt)], condition_result=c, name="W")
    out = loop.add_output(Last(nxt, Value("out")))
    seq = loop.add_output(Concat(nxt, Value("seq")))
    g = Graph("g", [x0, lim], [out, seq], [loop])
    res = run_graph(g, {"x0": np.array(0), "lim": np.array(5)})
    assert int(res["out"]) == 5 and list(res["seq"]) == [1, 2, 3, 4, 5]

    # TensorRT-style precondition: evaluated on the state at the start; zero iterations possible
    body2 = Graph("body2")
    p2 = Value("p2", tensor("int64", ()))
    body2.inputs = [p2]
    body2.initializers = [one2 := Value("one2", const=np.array(1))]
    nxt2 = op(body2, "add", p2, one2)
    pre = op(body2, "lt", p2, lim)
    loop2 = Loop(body2, [Carried(x0, p2, nxt2)], precondition=pre, name="P")
    out2 = loop2.add_output(Last(nxt2, Value("out2")))
    seq2 = loop2.add_output(Concat(p2, Value("seq2", tensor("int64", ())),
                                   length=Value("L", tensor("int64", ()))))
    L = seq2.producer.output_ports[-1].length
    g2 = Graph("g2", [x0, lim, L], [out2, seq2], [loop2])
    for start, limit in ((0, 3), (7, 3)):
        res = run_graph(g2, {"x0": np.array(start), "lim": np.array(limit), "L": np.array(6)})
        k, vals = start, []
        while k < limit:
            vals.append(k)
            k += 1
        assert int(res["out2"]) == k
        np.testing.assert_array_equal(res["seq2"], np.array(vals + [0] * (6 - len(vals))))
    with pytest.raises(ig.ExecutionError, match="length 2"):
        run_graph(g2, {"x0": np.array(0), "lim": np.array(5), "L": np.array(2)})


def test_scan_output_changing_shape_is_an_error_but_carried_may_grow():
    x0 = Value("x0", tensor("float32", (1,)))
    n = Value("n", tensor("int64", ()))
    body = Graph("body")
    p = Value("p")
    body.inputs = [p]
    nxt = op(body, "tile2", p)
    loop = Loop(body, [Carried(x0, p, nxt)], trip_count=n, name="grow")
    last = loop.add_output(Last(nxt, Value("last")))
    g = Graph("g", [x0, n], [last], [loop])
    assert run_graph(g, {"x0": np.ones(1, np.float32), "n": np.array(3)})["last"].shape == (8,)
    seq = loop.add_output(Concat(nxt, Value("seq")))
    g.outputs.append(seq)
    with pytest.raises(ig.ExecutionError, match=r"'grow'.*output 1.*iteration 1"):
        run_graph(g, {"x0": np.ones(1, np.float32), "n": np.array(3)})


def test_unbounded_loop_stopped_by_max_iterations():
    x0 = Value("x0", tensor("int64", ()))
    body = Graph("body")
    p = Value("p", tensor("int64", ()))
    body.inputs = [p]
    loop = Loop(body, [Carried(x0, p, p)], name="forever")
    out = loop.add_output(Last(p, Value("out")))
    g = Graph("g", [x0], [out], [loop])
    with pytest.raises(ig.IterationLimitError, match="forever"):
        run_graph(g, {"x0": np.array(0)}, max_iterations=100)


def test_invariant_input_and_nested_capture():
    # outer loop over rows of X; inner loop adds the captured outer-body value `row` n times
    X = Value("X", tensor("float32", (3, 2)))
    n = Value("n", tensor("int64", ()))
    ob = Graph("outer_body")
    row = Value("row")
    acc0 = Value("acc0")
    ob.inputs = [row, acc0]
    ib = Graph("inner_body")
    a = Value("a")
    ib.inputs = [a]
    a2 = op(ib, "add", a, row)  # captured from the enclosing body
    inner = Loop(ib, [Carried(acc0, a, a2)], trip_count=n, name="inner")
    r = inner.add_output(Last(a2, Value("r")))
    ob.add(inner)
    outer = Loop(ob, [Sliced(X, row), Invariant(Value("z"), acc0)], name="outer")
    outer.input_ports[1].value = zval = Value("zero", tensor("float32", (2,)))
    y = outer.add_output(Concat(r, Value("y")))
    g = Graph("g", [X, n, zval], [y], [outer])
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    res = run_graph(g, {"X": x, "n": np.array(4), "zero": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(res["y"], 4 * x)
