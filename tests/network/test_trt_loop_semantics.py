"""TensorRT's loop semantics that plain eager loops miss, on numpy, jax and the ONNX export.

- lazy recurrences: the next value a recurrence computes on the last trip is evaluated only
  when a LAST_VALUE output or the WHILE condition demands it (the guide: sequence elements
  "are evaluated lazily, meaning as needed");
- zero-trip CONCATENATE / REVERSE outputs have the entry shape shape propagation gives;
- iterating past an iterator's end is an error, in the ONNX export too;
- CONCATENATE / REVERSE need their length input ("a second input must be provided").
Oracles: plain Python loops written here.
"""

from __future__ import annotations

import numpy as np
import pytest
from net_helpers import const, ew, i32, new_network, output, run_ort

import itergraph as ig
import itergraph.network as trt
from itergraph.ir import loops

E = trt.ElementWiseOperation
LO = trt.LoopOutput
ENGINES = ["numpy", "jax", "onnxruntime"]


def _run(net, feeds, engine):
    if engine == "onnxruntime":
        return run_ort(net, feeds)
    return ig.load(net).run(feeds, backend=engine)


def _raises_at_run(net, feeds, engine):
    if engine == "onnxruntime":
        from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument

        with pytest.raises((Fail, InvalidArgument), match="out of|bounds"):
            run_ort(net, feeds)
    else:
        with pytest.raises(ig.ExecutionError, match="beyond|out of"):
            ig.load(net).run(feeds, backend=engine)


def _gather_next(count: int = 3, last_value: bool = False, kind=LO.CONCATENATE):
    """The issue's minimal form: COUNT n, ``i`` 0 -> i + 1, ``v`` d[0] -> gather(d, i + 1),
    CONCATENATE(v) of length n. On the last trip gather(d, n) is out of range, but no output
    demands it (unless `last_value` adds LAST_VALUE(v))."""
    net = new_network()
    d = net.add_input("d", trt.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, count), trt.TripLimit.COUNT)
    i = loop.add_recurrence(i32(net, 0))
    i1 = ew(net, i.get_output(0), i32(net, 1), E.SUM)
    i.set_input(1, i1)
    v = loop.add_recurrence(net.add_gather(d, i32(net, 0), 0).get_output(0))
    v.set_input(1, net.add_gather(d, i1, 0).get_output(0))
    seq = loop.add_loop_output(v.get_output(0), kind, 0)
    seq.set_input(1, i32(net, count))
    output(net, seq.get_output(0), "y")
    if last_value:
        output(net, loop.add_loop_output(v.get_output(0), LO.LAST_VALUE).get_output(0), "last")
    return net


D = np.array([1.5, -2.0, 4.0], np.float32)


@pytest.mark.parametrize("engine", ENGINES)
def test_lazy_recurrence_last_trip_value_is_not_evaluated(engine):
    out = _run(_gather_next(), {"d": D}, engine)
    np.testing.assert_array_equal(out["y"], D)  # TensorRT gives d


@pytest.mark.parametrize("engine", ENGINES)
def test_lazy_recurrence_reverse_output(engine):
    out = _run(_gather_next(kind=LO.REVERSE), {"d": D}, engine)
    np.testing.assert_array_equal(out["y"], D[::-1])


@pytest.mark.parametrize("engine", ["numpy", "jax"])
def test_a_demanded_last_trip_value_is_evaluated(engine):
    with pytest.raises(ig.ExecutionError, match="out of|index 3"):
        ig.load(_gather_next(last_value=True)).run({"d": D}, backend=engine)


def test_only_lazy_recurrences_get_a_guard():
    """The next value of `v` is computed in an If of the body; `i` (read by the guard's
    condition and by v's next value) and LAST_VALUE recurrences stay unconditional."""
    (loop, _), = loops(_gather_next().to_graph())
    ifs = [n for n in loop.body.nodes if n.op_type == "If"]
    assert len(ifs) == 1 and loop.iteration_param is not None
    gathers = [n for n in ifs[0].attrs["then_branch"].nodes if n.op_type == "Gather"]
    assert len(gathers) == 1
    from test_trt_lstm_example import trt_lstm

    (lstm, _), = loops(trt_lstm.lstm_network(trt_lstm.weights(3, 4), 2).to_graph())
    assert not [n for n in lstm.body.nodes if n.op_type == "If"]


def _while_gather(limit: int):
    """WHILE i < limit over d: ``v`` d[0] -> gather(d, i + 1), CONCATENATE(v) of length 3.
    The last trip (i + 1 == limit) would read d[limit]: lazy, since the condition is false."""
    net = new_network()
    d = net.add_input("d", trt.float32, (3,))
    loop = net.add_loop()
    i = loop.add_recurrence(i32(net, 0))
    i1 = ew(net, i.get_output(0), i32(net, 1), E.SUM)
    i.set_input(1, i1)
    loop.add_trip_limit(ew(net, i.get_output(0), i32(net, limit), E.LESS), trt.TripLimit.WHILE)
    v = loop.add_recurrence(net.add_gather(d, i32(net, 0), 0).get_output(0))
    v.set_input(1, net.add_gather(d, i1, 0).get_output(0))
    seq = loop.add_loop_output(v.get_output(0), LO.CONCATENATE, 0)
    seq.set_input(1, i32(net, 3))
    output(net, seq.get_output(0), "y")
    output(net, loop.add_loop_output(i.get_output(0), LO.LAST_VALUE).get_output(0), "n")
    return net


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("limit", [0, 2, 3])
def test_lazy_recurrence_in_a_while_loop(engine, limit):
    out = _run(_while_gather(limit), {"d": D}, engine)
    want = np.zeros(3, np.float32)
    want[:limit] = D[:limit]
    np.testing.assert_array_equal(out["y"], want)
    assert int(out["n"]) == limit


def _zero_trip(count: int, source: str):
    """CONCATENATE of length 2 over a recurrence whose initial value is ``(-1, 5)``."""
    net = new_network()
    x = net.add_input("x", trt.float32, (-1, 5))
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, count), trt.TripLimit.COUNT)
    r = loop.add_recurrence(x)
    nxt = ew(net, r.get_output(0), r.get_output(0), E.SUM)
    r.set_input(1, nxt)
    if source == "recurrence":
        t = r.get_output(0)
    elif source == "next":
        t = net.add_activation(nxt, trt.ActivationType.RELU).get_output(0)
    else:  # a matrix product: the shape comes from evaluating it on the initial value
        w = const(net, np.arange(15, dtype=np.float32).reshape(5, 3))
        t = net.add_matrix_multiply(r.get_output(0), trt.MatrixOperation.NONE, w,
                                    trt.MatrixOperation.NONE).get_output(0)
    seq = loop.add_loop_output(t, LO.CONCATENATE, 1)
    seq.set_input(1, i32(net, 2))
    output(net, seq.get_output(0), "y")
    return net


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("source", ["recurrence", "next", "evaluated"])
def test_zero_trip_output_keeps_run_time_dimensions(engine, source):
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = _run(_zero_trip(0, source), {"x": x}, engine)
    width = 3 if source == "evaluated" else 5
    assert out["y"].shape == (3, 2, width)  # TensorRT: (2, 3, 5) on axis 0; here axis 1
    np.testing.assert_array_equal(out["y"], 0)  # TensorRT leaves the padding undefined
    out = _run(_zero_trip(1, "recurrence"), {"x": x}, engine)
    np.testing.assert_array_equal(out["y"][:, 0], x)
    np.testing.assert_array_equal(out["y"][:, 1], 0)


@pytest.mark.parametrize("engine", ENGINES)
def test_zero_trip_while_loop_output_shape(engine):
    net = new_network()
    x = net.add_input("x", trt.float32, (-1, 2))
    loop = net.add_loop()
    r = loop.add_recurrence(i32(net, 0))
    r.set_input(1, ew(net, r.get_output(0), i32(net, 1), E.SUM))
    loop.add_trip_limit(ew(net, r.get_output(0), i32(net, 0), E.LESS), trt.TripLimit.WHILE)
    acc = loop.add_recurrence(x)
    acc.set_input(1, ew(net, acc.get_output(0), acc.get_output(0), E.SUM))
    seq = loop.add_loop_output(acc.get_output(0), LO.REVERSE, 0)
    seq.set_input(1, i32(net, 3))
    output(net, seq.get_output(0), "y")
    out = _run(net, {"x": np.ones((4, 2), np.float32)}, engine)
    assert out["y"].shape == (3, 4, 2)


def _count_beyond_iterator(reverse: bool):
    net = new_network()
    x = net.add_input("x", trt.float32, (5, 2))
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 7), trt.TripLimit.COUNT)
    row = loop.add_iterator(x, 0, reverse).get_output(0)
    seq = loop.add_loop_output(row, LO.CONCATENATE, 0)
    seq.set_input(1, i32(net, 7))
    output(net, seq.get_output(0), "y")
    return net


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("reverse", [False, True])
def test_count_beyond_the_iterator_is_an_error_everywhere(engine, reverse):
    _raises_at_run(_count_beyond_iterator(reverse), {"x": np.ones((5, 2), np.float32)}, engine)


@pytest.mark.parametrize("kind", [LO.CONCATENATE, LO.REVERSE])
def test_concatenate_and_reverse_need_their_length(kind):
    net = new_network()
    x = net.add_input("x", trt.float32, (2, 3))
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 2), trt.TripLimit.COUNT)
    seq = loop.add_loop_output(loop.add_iterator(x).get_output(0), kind, 0)
    seq.name = "all_rows"
    output(net, seq.get_output(0), "y")
    with pytest.raises(ig.ModelError, match="'all_rows'.*second input must be provided"):
        net.to_graph()
