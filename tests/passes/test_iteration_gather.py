"""passes.iteration_gather and passes.passthrough_condition."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.errors import ExecutionError
from itergraph.ir import Carried, Concat, Graph, Loop, Node, Sliced, Value, tensor
from itergraph.passes.iteration_gather import iteration_gather
from itergraph.passes.passthrough_condition import passthrough_condition
from onnx_builders import I64, F, body, const, model, vi
from passutil import assert_same_outputs, load, loops, ops, rng, run, transformed

BOOL = 9


def _gather_loop(axis=0, x_shape=(5, 3), cond_node=None, inits=()):
    """acc += X[i] (Gather along `axis`) for M iterations; also scans the row out."""
    nodes = [h.make_node("Gather", ["X", "i"], ["row"], axis=axis),
             h.make_node("Add", ["acc_in", "row"], ["acc_out"]),
             h.make_node("Identity", ["row"], ["y"]),
             cond_node or h.make_node("Identity", ["c_in"], ["c_out"])]
    row = [d for k, d in enumerate(x_shape) if k != axis % len(x_shape)]
    b = body(nodes, [vi("i", I64, []), vi("c_in", BOOL, []), vi("acc_in", F, row)],
             [vi("c_out", BOOL, []), vi("acc_out", F, row), vi("y", F, row)])
    return model([h.make_node("Loop", ["M", "", "acc0"], ["acc", "Y"], body=b)],
                 [vi("M", I64, []), vi("X", F, list(x_shape)), vi("acc0", F, row)],
                 [vi("acc", F, row), vi("Y", F, ["n", *row])], inits)


def _feeds(m, x_shape=(5, 3), axis=0):
    row = [d for k, d in enumerate(x_shape) if k != axis % len(x_shape)]
    return {"M": np.array(m, np.int64), "X": rng(1).standard_normal(x_shape).astype(np.float32),
            "acc0": np.zeros(row, np.float32)}


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_by_iteration_becomes_a_sliced_input(axis):
    shape = (5, 4) if axis == 0 else (3, 5)
    g = load(_gather_loop(axis, shape))
    t, n = transformed(g, iteration_gather)
    assert n == 1
    loop = loops(t)[0]
    assert "Gather" not in ops(loop.body)
    port = loop.input_ports[-1]
    assert isinstance(port, Sliced) and port.value.name == "X" and port.axis == axis
    assert loop.strict_slices and not loops(g)[0].strict_slices
    for m in (0, 3, 5):
        assert_same_outputs(g, t, _feeds(m, shape, axis), exact=True)


def test_iterating_past_the_data_stays_an_error():
    g = load(_gather_loop())
    t, _ = transformed(g, iteration_gather)
    for graph in (g, t):
        with pytest.raises(ExecutionError):
            run(graph, _feeds(6))


def test_rank_one_iteration_number_keeps_the_axis():
    """OpenVINO's current_iteration is [1]: Gather keeps the axis (size 1)."""
    x = Value("X", tensor("float32", (4, 3)))
    it = Value("k", tensor("int64", (1,)))
    s0 = Value("s0", tensor("float32", (1, 3)))
    ps = Value("s_in", tensor("float32", (1, 3)))
    ga = Node("Gather", [x, it], 1, {"axis": 0}, version=13)
    add = Node("Add", [ps, ga.outputs[0]], 1, version=14)
    bd = Graph("body", [it, ps], [add.outputs[0]], [ga, add])
    trip = Value("M", tensor("int64", ()), const=np.array(4, np.int64))
    loop = Loop(bd, [Carried(s0, ps, add.outputs[0])],
                [Concat(ga.outputs[0], Value("Y"), axis=0, new_axis=False)],
                trip_count=trip, iteration_param=it)
    g = Graph("g", [x, s0], loop.outputs, [loop], [trip])
    t, n = transformed(g, iteration_gather)
    assert n == 1
    port = loops(t)[0].input_ports[-1]
    assert port.keep_axis and port.part_size == 1
    feeds = {"X": rng(2).standard_normal((4, 3)).astype(np.float32),
             "s0": np.zeros((1, 3), np.float32)}
    assert_same_outputs(g, t, feeds, exact=True)


def test_loops_that_already_slice_without_strictness_are_left_alone():
    x = Value("X", tensor("float32", (4, 3)))
    z = Value("Z", tensor("float32", (4, 3)))
    it = Value("k", tensor("int64", ()))
    pz = Value("z_k", tensor("float32", (3,)))
    ga = Node("Gather", [x, it], 1, {"axis": 0}, version=13)
    add = Node("Add", [ga.outputs[0], pz], 1, version=14)
    bd = Graph("body", [it, pz], [add.outputs[0]], [ga, add])
    loop = Loop(bd, [Sliced(z, pz)], [Concat(add.outputs[0], Value("Y"))], iteration_param=it)
    g = Graph("g", [x, z], loop.outputs, [loop])
    _, n = transformed(g, iteration_gather)
    assert n == 0


def test_passthrough_condition_is_dropped():
    g = load(_gather_loop())
    t, n = transformed(g, passthrough_condition)
    assert n == 1 and loops(t)[0].condition_result is None
    assert loops(g)[0].condition_result is not None
    for m in (0, 2, 5):
        assert_same_outputs(g, t, _feeds(m), exact=True)


def test_computed_condition_is_kept():
    g = load(_gather_loop(cond_node=h.make_node("Less", ["i", "two"], ["c_out"]),
                          inits=[const("two", 2, np.int64)]))
    t, n = transformed(g, passthrough_condition)
    assert n == 0 and loops(t)[0].condition_result is not None
