"""passes.precompute_sliced: work on sliced inputs is done once for the whole input."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.ir import Carried, Concat, Graph, Last, Loop, Node, Sliced, Value, tensor
from itergraph.passes.precompute_sliced import precompute_sliced
from onnx_builders import I64, F, body, const, model, vi
from passutil import assert_same_outputs, load, loops, ops, rng, transformed

T, B, IN, H = 6, 2, 3, 4


def _rnn(axis=0, reverse=0, x_shape=(T, B, IN), xt_shape=(B, IN)):
    """h = tanh(x_t W + h R + b) as a Scan over `axis` of X."""
    b = body([h.make_node("MatMul", ["x_t", "W"], ["xw"]),
              h.make_node("MatMul", ["h_in", "R"], ["hr"]),
              h.make_node("Add", ["xw", "hr"], ["s"]),
              h.make_node("Add", ["s", "b"], ["pre"]),
              h.make_node("Tanh", ["pre"], ["h_out"]),
              h.make_node("Identity", ["h_out"], ["y_t"])],
             [vi("h_in", F, [B, H]), vi("x_t", F, list(xt_shape))],
             [vi("h_out", F, [B, H]), vi("y_t", F, [B, H])])
    r = rng(1)
    scan = h.make_node("Scan", ["h0", "X"], ["h", "Y"], body=b, num_scan_inputs=1,
                       scan_input_axes=[axis], scan_input_directions=[reverse])
    return model([scan], [vi("X", F, list(x_shape)), vi("h0", F, [B, H])],
                 [vi("h", F, [B, H]), vi("Y", F, [x_shape[axis], B, H])],
                 [const("W", r.standard_normal((IN, H)).astype(np.float32)),
                  const("R", r.standard_normal((H, H)).astype(np.float32) * 0.5),
                  const("b", r.standard_normal(H).astype(np.float32))])


@pytest.mark.parametrize("axis,reverse", [(0, 0), (0, 1), (1, 0), (1, 1), (-3, 0)])
def test_input_projection_is_one_matmul_over_the_sequence(axis, reverse):
    shape = [T, B, IN] if axis in (0, -3) else [B, T, IN]
    g = load(_rnn(axis, reverse, shape))
    t, n = transformed(g, precompute_sliced)
    assert n == 1
    assert ops(t) == ["MatMul", "Loop"] and t.nodes[0].inputs[0].name == "X"
    loop = loops(t)[0]
    assert ops(loop.body).count("MatMul") == 1
    new = loop.input_ports[-1]
    assert isinstance(new, Sliced) and new.value is t.nodes[0].outputs[0]
    assert new.axis == (axis % 3) and new.stride == (-1 if reverse else 1)
    feeds = {"X": rng(2).standard_normal(shape).astype(np.float32),
             "h0": rng(3).standard_normal((B, H)).astype(np.float32)}
    assert_same_outputs(g, t, feeds)


def test_contracted_axis_is_not_precomputed():
    # slicing X [B, IN, T] on its last axis: x_t @ W contracts the axis X @ W would slice
    g = load(_rnn(axis=2, x_shape=(B, IN, T)))
    t, n = transformed(g, precompute_sliced)
    assert n == 0 and ops(t) == ["Loop"]


def _scan_one(nodes, out, x_shape, xt_shape, inits=(), out_shape=("d0", "d1"), axis=0,
              extra=()):
    """A Scan with one sliced input x_t and one scanned output `out` (no state)."""
    b = body(nodes, [vi("x_t", F, list(xt_shape)), *[vi(n, F, s) for n, s, _ in extra]],
             [vi(out, F, list(out_shape))])
    scan = h.make_node("Scan", ["X", *[n.upper() for n, _, _ in extra]], ["Y"], body=b,
                       num_scan_inputs=1 + len(extra), scan_input_axes=[axis] * (1 + len(extra)))
    return model([scan], [vi("X", F, list(x_shape)),
                          *[vi(n.upper(), F, full) for n, _, full in extra]],
                 [vi("Y", F, [x_shape[axis], *out_shape])], inits)


def test_elementwise_chain_moves_whole_and_is_exact():
    m = _scan_one([h.make_node("Identity", ["x_t"], ["xi"]),
                   h.make_node("Mul", ["xi", "c"], ["a"]),
                   h.make_node("Add", ["a", "b"], ["s"]),
                   h.make_node("Sigmoid", ["s"], ["g"]),
                   h.make_node("Cast", ["g"], ["gd"], to=11),
                   h.make_node("Cast", ["gd"], ["y"], to=1)],
                  "y", (T, B, IN), (B, IN),
                  [const("c", np.float32([1.5, -2.0, 0.5])), const("b", np.float32(0.25))])
    g = load(m)
    t, n = transformed(g, precompute_sliced)
    assert n == 6 and ops(t) == ["Identity", "Mul", "Add", "Sigmoid", "Cast", "Cast", "Loop"]
    loop = loops(t)[0]
    assert ops(loop.body) == [] and loop.output_ports[0].result is loop.body.inputs[-1]
    assert_same_outputs(g, t, {"X": rng(4).standard_normal((T, B, IN)).astype(np.float32)},
                        exact=True)


def test_invariant_that_spans_the_sliced_axis_or_expands_stays():
    # c has rank 2 = the rank of x_t: against X it would broadcast along the sliced axis
    m = _scan_one([h.make_node("Add", ["x_t", "c"], ["y"])], "y", (T, IN), (IN,),
                  [const("c", np.ones((B, IN), np.float32))])
    t, n = transformed(load(m), precompute_sliced)
    assert n == 0
    # x_t[:, None] * A makes every piece D times larger: not worth a whole-sequence tensor
    m = _scan_one([h.make_node("Unsqueeze", ["x_t", "ax"], ["col"]),
                   h.make_node("Mul", ["col", "A"], ["y"])], "y", (T, IN), (IN,),
                  [const("ax", [1], np.int64), const("A", np.ones((IN, 5), np.float32))])
    g = load(m)
    t, n = transformed(g, precompute_sliced)
    assert n == 1 and ops(t) == ["Unsqueeze", "Loop"] and ops(loops(t)[0].body) == ["Mul"]
    assert_same_outputs(g, t, {"X": rng(5).standard_normal((T, IN)).astype(np.float32)},
                        exact=True)


@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 3], [2, 0]])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_unsqueeze_axes_follow_the_sliced_axis(axes, axis):
    full = [T, B, IN]
    full[0], full[axis] = full[axis], full[0]
    xt = [d for i, d in enumerate(full) if i != axis]
    m = _scan_one([h.make_node("Unsqueeze", ["x_t", "ax"], ["u"]),
                   h.make_node("Neg", ["u"], ["y"])], "y", full, xt,
                  [const("ax", axes, np.int64)], axis=axis,
                  out_shape=[f"d{i}" for i in range(2 + len(axes))])
    g = load(m)
    t, n = transformed(g, precompute_sliced)
    assert n == 2 and ops(t) == ["Unsqueeze", "Neg", "Loop"]
    assert_same_outputs(g, t, {"X": rng(6).standard_normal(full).astype(np.float32)},
                        exact=True)


def test_two_sliced_operands_of_equal_length():
    m = _scan_one([h.make_node("Mul", ["x_t", "z_t"], ["p"]),
                   h.make_node("MatMul", ["p", "W"], ["y"])], "y", (T, B, IN), (B, IN),
                  [const("W", rng(7).standard_normal((IN, H)).astype(np.float32))],
                  extra=[("z_t", [B, IN], [T, B, IN])])
    g = load(m)
    t, n = transformed(g, precompute_sliced)
    assert n == 2 and ops(t) == ["Mul", "MatMul", "Loop"]
    r = rng(8)
    assert_same_outputs(g, t, {"X": r.standard_normal((T, B, IN)).astype(np.float32),
                               "Z_T": r.standard_normal((T, B, IN)).astype(np.float32)})


def test_matmul_with_invariant_left_operand_on_a_batch_axis():
    m = _scan_one([h.make_node("MatMul", ["A", "x_t"], ["y"])], "y", (T, B, IN, 2),
                  (B, IN, 2), [const("A", rng(9).standard_normal((H, IN)).astype(np.float32))],
                  out_shape=(B, H, 2))
    g = load(m)
    t, n = transformed(g, precompute_sliced)
    assert n == 1 and ops(t) == ["MatMul", "Loop"]
    assert_same_outputs(g, t, {"X": rng(10).standard_normal((T, B, IN, 2)).astype(np.float32)})


def test_loops_with_a_condition_are_left_alone():
    b = body([h.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
              h.make_node("MatMul", ["x_t", "W"], ["xw"]),
              h.make_node("ReduceSum", ["xw"], ["tot"], keepdims=0),
              h.make_node("Less", ["tot", "lim"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", 9, [])], [vi("c_out", 9, []), vi("xw", F, [H])])
    m = model([h.make_node("Loop", ["M", ""], ["Y"], body=b)], [vi("X", F, [T, IN])],
              [vi("Y", F, ["n", H])], [const("M", T, np.int64), const("lim", np.float32(1.0)),
                                   const("W", np.ones((IN, H), np.float32))])
    from itergraph.passes.iteration_gather import iteration_gather

    g = load(m)
    t, _ = transformed(g, iteration_gather)
    assert isinstance(loops(t)[0].input_ports[-1], Sliced)
    t2, n = transformed(t, precompute_sliced)
    assert n == 0


def _ov_ti(part=2, stride=2, start=1, end=-1):
    """A canonical loop keeping the sliced axis (OpenVINO style): pieces X[:, s:s+part] on axis
    1, y_k = Unsqueeze(tanh(x_k @ W), [0]) concatenated on axis 2; a state sums the pieces."""
    x = Value("X", tensor("float32", (B, 9, IN)))
    w = Value("W", tensor("float32", (IN, H)), const=rng(11).standard_normal((IN, H))
              .astype(np.float32))
    s0 = Value("S0", tensor("float32", (B, part, H)))
    ax = Value("ax", tensor("int64", (1,)), const=np.array([0], np.int64))
    px = Value("x_k", tensor("float32", (B, part, IN)))
    ps = Value("s_in", tensor("float32", (B, part, H)))
    mm = Node("MatMul", [px, w], 1, version=14)
    th = Node("Tanh", mm.outputs, 1, version=14)
    un = Node("Unsqueeze", [th.outputs[0], ax], 1, version=14)
    acc = Node("Add", [ps, th.outputs[0]], 1, version=14)
    bd = Graph("body", [px, ps], [un.outputs[0], acc.outputs[0]], [mm, th, un, acc])
    loop = Loop(bd, [Sliced(x, px, axis=1, start=start, end=end, stride=stride, part_size=part,
                            keep_axis=True), Carried(s0, ps, acc.outputs[0])],
                [Concat(un.outputs[0], Value("Y"), axis=2, new_axis=False),
                 Last(acc.outputs[0], Value("S"))])
    return Graph("g", [x, s0], loop.outputs, [loop], [w, ax])


@pytest.mark.parametrize("part,stride,start,end", [(1, 1, 0, -1), (2, 2, 1, -1), (2, -3, 0, 8),
                                                   (3, 3, -10, -1)])
def test_pieces_that_keep_their_axis(part, stride, start, end):
    g = _ov_ti(part, stride, start, end)
    t, n = transformed(g, precompute_sliced)
    assert n == 3 and ops(t) == ["MatMul", "Tanh", "Unsqueeze", "Loop"]
    loop = loops(t)[0]
    assert ops(loop.body) == ["Add"]
    new = [p for p in loop.input_ports if isinstance(p, Sliced)][1:]
    assert [(p.axis, p.part_size, p.stride, p.start, p.end, p.keep_axis) for p in new] == [
        (1, part, stride, start, end, True), (2, part, stride, start, end, True)]
    r = rng(12)
    feeds = {"X": r.standard_normal((B, 9, IN)).astype(np.float32),
             "S0": r.standard_normal((B, part, H)).astype(np.float32)}
    assert_same_outputs(g, t, feeds)
