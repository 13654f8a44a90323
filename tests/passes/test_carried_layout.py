"""passes.carried_layout: a tall, thin carried state is carried transposed (long axis last)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.ir import Carried
from itergraph.passes.carried_layout import carried_layout
from onnx_builders import I64, B, F, body, const, model, vi
from passutil import assert_same_outputs, load, loops, rng, transformed

L, D, S = 6, 32, 4  # steps, long axis, short axis


def _ssm(extra: list | None = None, extra_out: str | None = None, d: int = D,
         extra_shape=(D, S)):
    """Selective scan as ONNX Loop: h = exp(Δ_t[:,None] A) h + (Δ_t x_t)[:,None] B_t[None,:],
    y_t = sum_s h C_t. `extra` nodes may read h and define `extra_out`, scanned out too."""
    nodes = [h.make_node("Gather", ["x", "t"], ["x_t"], axis=0),
             h.make_node("Gather", ["delta", "t"], ["d_t"], axis=0),
             h.make_node("Gather", ["B", "t"], ["b_t"], axis=0),
             h.make_node("Gather", ["C", "t"], ["c_t"], axis=0),
             h.make_node("Unsqueeze", ["d_t", "ax1"], ["d_col"]),
             h.make_node("Mul", ["d_col", "A"], ["dA"]),
             h.make_node("Exp", ["dA"], ["decay"]),
             h.make_node("Mul", ["d_t", "x_t"], ["dx"]),
             h.make_node("Unsqueeze", ["dx", "ax1"], ["dx_col"]),
             h.make_node("Unsqueeze", ["b_t", "ax0"], ["b_row"]),
             h.make_node("Mul", ["dx_col", "b_row"], ["inject"]),
             h.make_node("Mul", ["decay", "h_in"], ["kept"]),
             h.make_node("Add", ["kept", "inject"], ["h_out"]),
             h.make_node("Unsqueeze", ["c_t", "ax0"], ["c_row"]),
             h.make_node("Mul", ["h_out", "c_row"], ["hc"]),
             h.make_node("ReduceSum", ["hc", "ax1"], ["y_t"], keepdims=0),
             h.make_node("Identity", ["cond_in"], ["cond_out"])] + list(extra or [])
    outs = [vi("cond_out", B, []), vi("h_out", F, [d, S]), vi("y_t", F, [d])]
    louts = ["h", "y"]
    gouts = [vi("h", F, [d, S]), vi("y", F, [L, d])]
    if extra_out is not None:
        outs.append(vi(extra_out, F, list(extra_shape)))
        louts.append("e")
        gouts.append(vi("e", F, [L, *extra_shape]))
    bd = body(nodes, [vi("t", I64, []), vi("cond_in", B, []), vi("h_in", F, [d, S])], outs)
    loop = h.make_node("Loop", ["L", "", "h0"], louts, body=bd, name="ssm")
    return model([loop],
                 [vi("x", F, [L, d]), vi("delta", F, [L, d]), vi("A", F, [d, S]),
                  vi("B", F, [L, S]), vi("C", F, [L, S]), vi("h0", F, [d, S])],
                 gouts,
                 [const("L", L, np.int64), const("ax0", [0], np.int64),
                  const("ax1", [1], np.int64), const("W", rng(7).standard_normal((S, S)) * 0.3,
                                                     np.float32)])


def _feeds(d: int = D, seed: int = 1):
    r = rng(seed)
    return {"x": r.standard_normal((L, d)).astype(np.float32),
            "delta": r.uniform(0.01, 0.1, (L, d)).astype(np.float32),
            "A": (-np.exp(r.standard_normal((d, S)) * 0.5)).astype(np.float32),
            "B": r.standard_normal((L, S)).astype(np.float32),
            "C": r.standard_normal((L, S)).astype(np.float32),
            "h0": r.standard_normal((d, S)).astype(np.float32)}


# more body uses of the state, each rewritable: MatMul, ReduceMean (kept dims), Transpose
_MORE = [h.make_node("MatMul", ["h_out", "W"], ["hw"]),
         h.make_node("ReduceMean", ["h_in", "ax0"], ["mean"], keepdims=1),
         h.make_node("Sub", ["hw", "mean"], ["centred"]),
         h.make_node("Tanh", ["centred"], ["e_t"])]


def _assert_backends_agree(g, g2, feeds):
    assert_same_outputs(g, g2, feeds)
    pytest.importorskip("jax")
    from itergraph.backends.jax import compile_graph

    want = compile_graph(g).run(feeds)
    got = compile_graph(g2).run(feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_selective_scan_state_is_carried_transposed():
    g = load(_ssm())
    assert carried_layout.applicable(g)
    g2, count = transformed(g, carried_layout)
    assert count == 1
    assert [n.op_type for n in g2.nodes] == ["Transpose", "Loop", "Transpose"]
    lp = loops(g2)[0]
    (port,) = [p for p in lp.input_ports if isinstance(p, Carried)]
    assert port.value is g2.nodes[0].outputs[0] and port.param.type.shape == (S, D)
    assert g2.nodes[2].outputs[0] is g2.outputs[0]  # h: the inverse transpose
    # the body transposes only the loop-invariant A, never the state or a per-step value
    by_out = {v.uid: n for n in lp.body.nodes for v in n.outputs}
    stack, reached = [port.result, lp.output_ports[1].result], []
    while stack:
        v = stack.pop()
        n = by_out.get(v.uid)
        if n is not None and n not in reached:
            reached.append(n)
            stack.extend(x for x in n.inputs if x is not None)
    transposes = [n for n in reached if n.op_type == "Transpose"]
    assert [n.inputs[0].name for n in transposes] == ["A"]
    _assert_backends_agree(g, g2, _feeds())


def test_matmul_reduce_keepdims_and_scanned_state():
    g = load(_ssm(_MORE, "e_t"))
    g2, count = transformed(g, carried_layout)
    assert count == 1
    assert [n.op_type for n in g2.nodes] == ["Transpose", "Loop", "Transpose", "Transpose"]
    for seed in (2, 3):
        _assert_backends_agree(g, g2, _feeds(seed=seed))


def test_transpose_of_the_state_becomes_identity():
    extra = [h.make_node("Transpose", ["h_out"], ["ht"], perm=[1, 0]),
             h.make_node("Neg", ["ht"], ["e_t"])]
    g = load(_ssm(extra, "e_t", extra_shape=(S, D)))
    g2, count = transformed(g, carried_layout)
    assert count == 1
    (ht,) = [n for n in loops(g2)[0].body.nodes if n.outputs[0].name == "ht"]
    assert ht.op_type == "Identity" and ht.inputs[0] is loops(g2)[0].carried[0].result
    _assert_backends_agree(g, g2, _feeds())


@pytest.mark.parametrize("extra,shape", [
    ([h.make_node("Shape", ["h_out"], ["sh"]), h.make_node("Cast", ["sh"], ["e_t"], to=F)],
     (2,)),
    ([h.make_node("Flatten", ["h_in"], ["e_t"])], (D, S)),
])
def test_loop_with_an_unrewritable_use_is_left_alone(extra, shape):
    g = load(_ssm(extra, "e_t", extra_shape=shape))
    assert not carried_layout.applicable(g)
    g2, count = transformed(g, carried_layout)
    assert count == 0
    assert [n.op_type for n in g2.nodes] == ["Loop"]
    assert [n.op_type for n in loops(g2)[0].body.nodes] == \
        [n.op_type for n in loops(g)[0].body.nodes]


def test_square_state_is_left_alone():
    g = load(_ssm(d=2 * S - 1))
    assert not carried_layout.applicable(g)
    assert transformed(g, carried_layout)[1] == 0


def test_jax_backend_runs_the_rewritten_copy_and_leaves_the_graph():
    pytest.importorskip("jax")
    import itergraph as ig
    from itergraph.backends.numpy import run_graph

    m = ig.load(_ssm())
    before = [n.op_type for n in loops(m.graph)[0].body.nodes]
    got = m.run(_feeds(), backend="jax")
    want = run_graph(m.graph, _feeds())
    assert [n.op_type for n in m.graph.nodes] == ["Loop"]
    assert [n.op_type for n in loops(m.graph)[0].body.nodes] == before
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_scanned_state_on_any_axis(axis):
    """ONNX Scan stacking the state itself on `axis`: the stacked output is transposed back."""
    nodes = [h.make_node("Unsqueeze", ["x_t", "ax1"], ["x_col"]),
             h.make_node("Mul", ["h_in", "x_col"], ["hx"]),
             h.make_node("Add", ["hx", "bias"], ["pre"]),
             h.make_node("Tanh", ["pre"], ["h_out"]),
             h.make_node("Identity", ["h_out"], ["h_scan"])]
    shape = [D, S]
    out_shape = list(shape)
    out_shape.insert(axis % 3, L)
    bd = body(nodes, [vi("h_in", F, shape), vi("x_t", F, [D])],
              [vi("h_out", F, shape), vi("h_scan", F, shape)])
    scan = h.make_node("Scan", ["h0", "X"], ["h", "H"], body=bd, num_scan_inputs=1,
                       scan_output_axes=[axis])
    m = model([scan], [vi("h0", F, shape), vi("X", F, [L, D])],
              [vi("h", F, shape), vi("H", F, out_shape)],
              [const("ax1", [1], np.int64),
               const("bias", rng(5).standard_normal(S), np.float32)])
    g = load(m)
    g2, count = transformed(g, carried_layout)
    assert count == 1
    r = rng(6)
    feeds = {"h0": r.standard_normal(shape).astype(np.float32),
             "X": r.standard_normal((L, D)).astype(np.float32)}
    _assert_backends_agree(g, g2, feeds)
