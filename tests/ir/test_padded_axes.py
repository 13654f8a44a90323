"""`ir.padded_axes`, the one table of what an op does with a padded axis: its kinds agree
with `ir.traits`, and every fill value it names makes the op exact on a padded axis (checked
with NumPy: the op over the valid part equals the op over the padded value with that fill)."""

from __future__ import annotations

import numpy as np
import pytest

from itergraph.backends.numpy import run_graph
from itergraph.ir import Graph, Node, Value, tensor
from itergraph.ir.padded_axes import MASKED, NEUTRAL, PADDED_INPUTS, Along, along
from itergraph.ir.traits import ELEMENTWISE, Trait, ops_with


def _node(op, domain=""):
    return Node(op, [], 1, domain=domain, version=18)


def test_kinds_agree_with_the_traits():
    for op in ops_with(Trait.UNARY) | ops_with(Trait.BROADCAST):
        assert along(_node(op)) is Along.ELEMENTWISE, op
    for op in ops_with(Trait.REDUCTION):
        assert along(_node(op)) is Along.REDUCE, op
    assert set(NEUTRAL) <= ops_with(Trait.REDUCTION)
    assert all(along(_node(op)) is Along.NORMALIZE for op in MASKED)
    assert along(_node("CastLike")) is Along.ELEMENTWISE
    assert not ELEMENTWISE & (Trait.REDUCTION | Trait.CELL)
    assert along(_node("Add", "com.example")) is None and along(_node("CumSum")) is None
    for (domain, op), facts in PADDED_INPUTS.items():
        assert along(_node(op, domain)) is None  # contrib ops: their inputs, not a kind
        assert len({p.index for p in facts}) == len(facts)


def _run(op, x, axis, opset=18):
    g = Graph(name="g")
    xv = Value("x", tensor(str(x.dtype), x.shape))
    g.inputs = [xv]
    ins = [xv]
    attrs = {}
    if op in NEUTRAL:
        ax = Value("axes", tensor("int64", (1,)), np.array([axis], np.int64))
        g.initializers.append(ax)
        ins.append(ax)
    else:
        attrs["axis"] = axis
    n = Node(op, ins, [Value("y")], attrs, version=opset, name="n")
    g.nodes.append(n)
    g.outputs = [n.outputs[0]]
    return run_graph(g, {"x": x})["y"]


@pytest.mark.parametrize("op", sorted(NEUTRAL) + sorted(MASKED))
def test_the_fill_makes_the_op_exact_along_the_padded_axis(op):
    rng = np.random.default_rng(3)
    valid = rng.uniform(0.5, 2, (2, 3, 4)).astype(np.float32)
    fill = NEUTRAL.get(op, -np.inf)
    padded = np.concatenate([valid, np.full((2, 3, 5), fill, np.float32)], axis=2)
    got, want = _run(op, padded, 2), _run(op, valid, 2)
    if op in MASKED:  # the padded positions come out exactly 0 (-inf for the log)
        np.testing.assert_array_equal(got[..., 4:], 0 if op == "Softmax" else -np.inf)
        got = got[..., :4]
    np.testing.assert_allclose(got, want, rtol=1e-6)
