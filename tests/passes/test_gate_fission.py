"""passes.gate_fission: a Split of a sum of products becomes one sum per gate block."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.passes.gate_fission import gate_fission
from onnx_builders import F, body, const, model, vi
from passutil import assert_same_outputs, load, loops, rng, transformed

T, B, IN, H = 5, 3, 4, 6


def _lstm(split_input: bool = True, b_shape=(4 * H,), extra_use: bool = False, axis: int = -1):
    """LSTM cell as Scan: gates = x_t W + h R + b split into i, f, g, o."""
    split = h.make_node("Split", ["gates"] + (["sizes"] if split_input else []),
                        ["gi", "gf", "gg", "go"], axis=axis,
                        **({} if split_input else {"num_outputs": 4}))
    nodes = [h.make_node("MatMul", ["x_t", "W"], ["xw"]),
             h.make_node("MatMul", ["h_in", "R"], ["hr"]),
             h.make_node("Add", ["xw", "hr"], ["s"]),
             h.make_node("Add", ["s", "b"], ["gates"]),
             split,
             h.make_node("Sigmoid", ["gi"], ["si"]),
             h.make_node("Sigmoid", ["gf"], ["sf"]),
             h.make_node("Tanh", ["gg"], ["tg"]),
             h.make_node("Sigmoid", ["go"], ["so"]),
             h.make_node("Mul", ["sf", "c_in"], ["fc"]),
             h.make_node("Mul", ["si", "tg"], ["ig"]),
             h.make_node("Add", ["fc", "ig"], ["c_out"]),
             h.make_node("Tanh", ["c_out"], ["tc"]),
             h.make_node("Mul", ["so", "tc"], ["h_out"]),
             h.make_node("Identity", ["gi" if extra_use else "h_out"], ["y_t"])]
    if extra_use:
        nodes[-1] = h.make_node("Identity", ["s"], ["y_t"])
    st = [B, H]
    yshape = [B, 4 * H] if extra_use else st
    b = body(nodes, [vi("h_in", F, st), vi("c_in", F, st), vi("x_t", F, [B, IN])],
             [vi("h_out", F, st), vi("c_out", F, st), vi("y_t", F, yshape)])
    r = rng(3)
    scan = h.make_node("Scan", ["h0", "c0", "X"], ["h", "c", "Y"], body=b, num_scan_inputs=1)
    return model([scan], [vi("X", F, [T, B, IN]), vi("h0", F, st), vi("c0", F, st)],
                 [vi("h", F, st), vi("c", F, st), vi("Y", F, [T] + yshape)],
                 [const("W", r.standard_normal((IN, 4 * H)).astype(np.float32)),
                  const("R", r.standard_normal((H, 4 * H)).astype(np.float32) * 0.5),
                  const("b", r.standard_normal(b_shape).astype(np.float32)),
                  const("sizes", np.array([H] * 4, np.int64))])


def _feeds():
    r = rng(4)
    return {"X": r.standard_normal((T, B, IN)).astype(np.float32),
            "h0": r.standard_normal((B, H)).astype(np.float32),
            "c0": r.standard_normal((B, H)).astype(np.float32)}


@pytest.mark.parametrize("split_input,b_shape", [(True, (4 * H,)), (False, (4 * H,)),
                                                  (True, (1,)), (False, (B, 4 * H))])
def test_split_of_products_becomes_one_product_per_block(split_input, b_shape):
    g = load(_lstm(split_input, b_shape))
    assert gate_fission.applicable(g)
    g2, count = transformed(g, gate_fission)
    assert count == 1
    body_ops = [n.op_type for n in loops(g2)[0].body.nodes]
    assert body_ops.count("MatMul") == 2 + 2 * 4  # the old ones stay, unread
    # no node reads the split outputs any more
    split = next(n for n in loops(g2)[0].body.nodes if n.op_type == "Split")
    read = {v.uid for n in loops(g2)[0].body.nodes for v in n.inputs if v is not None}
    assert not read & {v.uid for v in split.outputs}
    assert_same_outputs(g, g2, _feeds())


def test_tree_value_read_elsewhere_is_left_alone():
    g = load(_lstm(extra_use=True))
    assert not gate_fission.applicable(g)
    assert transformed(g, gate_fission)[1] == 0


def test_split_over_another_axis_is_left_alone():
    g = load(_lstm(axis=0))
    assert transformed(g, gate_fission)[1] == 0


@pytest.mark.parametrize("backend", ["jax"])
def test_backend_runs_the_rewritten_copy_and_leaves_the_graph(backend):
    pytest.importorskip("jax")
    import itergraph as ig
    from itergraph.backends.numpy import run_graph

    m = ig.load(_lstm())
    before = [n.op_type for n in loops(m.graph)[0].body.nodes]
    got = m.run(_feeds(), backend=backend)
    want = run_graph(m.graph, _feeds())
    assert [n.op_type for n in loops(m.graph)[0].body.nodes] == before
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-5, atol=1e-5)
