"""Loop semantics of the network-definition API on the NumPy backend (oracle: Python loops)."""

from __future__ import annotations

import numpy as np
import pytest
from net_cases import CASES, X23
from net_helpers import assert_outputs, const, ew, i32, new_network, output, run

import itergraph as ig
import itergraph.network as trt
from itergraph.ir import Loop, loops

E = trt.ElementWiseOperation


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_numpy(name):
    net, feeds, want = CASES[name]()
    assert_outputs(run(net, feeds), want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_jax(name):
    net, feeds, want = CASES[name]()
    assert_outputs(ig.load(net).run(feeds, backend="jax"), want, rtol=1e-5, atol=1e-5)


def test_load_and_run_through_public_api():
    net, feeds, want = CASES["recurrence_i_plus_k"]()
    assert_outputs(ig.load(net).run(feeds), want)


def _loops(graph):
    return loops(graph)


def test_canonical_loop_ports():
    net, _, _ = CASES["recurrence_i_plus_k"]()
    (loop, depth), = _loops(net.to_graph())
    assert depth == 0 and loop.origin == "network"
    assert loop.trip_count is not None and loop.precondition is None
    assert len(loop.carried) == 1 and not loop.sliced
    kinds = [type(p).__name__ for p in loop.output_ports]
    assert kinds == ["Concat", "Last"]
    concat = loop.output_ports[0]
    assert concat.new_axis and not concat.reverse and concat.length is not None


def test_iterator_ports_and_strictness_flag():
    net, _, _ = CASES["iterator_axis1_reversed"]()
    (loop, _), = _loops(net.to_graph())
    (s,) = loop.sliced
    assert s.axis == 1 and s.stride == -1 and not s.keep_axis
    assert loop.strict_slices is True


def test_while_becomes_precondition():
    net, _, _ = CASES["while_three_iterations"]()
    (loop, _), = _loops(net.to_graph())
    assert loop.precondition is not None and loop.trip_count is None
    assert loop.condition_result is None


def test_inferred_nesting_structure():
    net, _, _ = CASES["nested_inferred"]()
    found = _loops(net.to_graph())
    assert [d for _, d in found] == [0, 1]
    net, _, _ = CASES["nested_through_capture"]()
    assert [d for _, d in _loops(net.to_graph())] == [0, 1]


def test_invariant_layer_hoisted():
    net, _, _ = CASES["invariant_layers_stay_outside"]()
    g = net.to_graph()
    top_ops = [n.op_type for n in g.nodes]
    assert top_ops.count("Add") == 1  # w + w runs once, outside the loop
    (loop, _), = _loops(g)
    assert [n.op_type for n in loop.body.nodes] == ["Mul"]


def test_loop_without_outputs_dropped():
    net, _, _ = CASES["loop_without_outputs_is_dropped"]()
    assert not any(isinstance(n, Loop) for _, n in net.to_graph().walk())


def test_count_beyond_iterator_is_an_error():
    net, feeds, _ = _count_beyond()
    with pytest.raises(ig.ExecutionError, match="beyond"):
        run(net, feeds)


@pytest.mark.parametrize("count", [None, 5])
def test_while_still_true_when_the_iterator_runs_out_is_an_error(count):
    from net_cases import _while_iterating

    net, feeds, _ = _while_iterating(3, count)  # WHILE i < 3 over an iterator of 2 rows
    with pytest.raises(ig.ExecutionError, match="beyond sliced input"):
        run(net, feeds)


def _count_beyond():
    net = new_network()
    x = net.add_input("x", trt.float32, X23.shape)
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 3), trt.TripLimit.COUNT)  # X23 has 2 rows
    row = loop.add_iterator(x).get_output(0)
    lo = loop.add_loop_output(row, trt.LoopOutput.CONCATENATE)
    lo.set_input(1, i32(net, 3))
    output(net, lo.get_output(0), "y")
    return net, {"x": X23}, None


def test_length_below_iteration_count_is_an_error():
    net = new_network()
    x = net.add_input("x", trt.float32, X23.shape)
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 2), trt.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    lo = loop.add_loop_output(row, trt.LoopOutput.CONCATENATE)
    lo.set_input(1, i32(net, 1))
    output(net, lo.get_output(0), "y")
    with pytest.raises(ig.ExecutionError, match="length"):
        run(net, {"x": X23})


def test_infinite_while_stopped_by_max_iterations():
    net = new_network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, np.array(True)), trt.TripLimit.WHILE)
    r = loop.add_recurrence(i32(net, 0))
    r.set_input(1, ew(net, r.get_output(0), i32(net, 1), E.SUM))
    output(net, loop.add_loop_output(r.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "y")
    with pytest.raises(ig.IterationLimitError):
        run(net, {}, max_iterations=50)


def test_tensor_shapes_inside_and_outside_loops():
    net = new_network()
    x = net.add_input("x", trt.float32, (5, 4, 3))
    loop = net.add_loop()
    loop.add_trip_limit(i32(net, 4), trt.TripLimit.COUNT)
    it = loop.add_iterator(x, 1)
    assert it.get_output(0).shape == (5, 3) and it.loop is loop and it.get_loop() is loop
    lo = loop.add_loop_output(it.get_output(0), trt.LoopOutput.CONCATENATE, 2)
    assert lo.get_output(0).shape == (5, 3, 4)  # length unset: the static COUNT
    lo.set_input(1, i32(net, 7))
    assert lo.get_output(0).shape == (5, 3, 7)
    assert lo.kind is trt.LoopOutput.CONCATENATE and lo.get_output(0).dtype == trt.float32
