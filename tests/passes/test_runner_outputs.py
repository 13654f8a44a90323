"""The NumPy loop runner writes concatenated outputs in place: every layout against a plain
NumPy oracle (known iteration counts, growth past the first capacity, early stops)."""

from __future__ import annotations

import numpy as np
import pytest

from itergraph.ir import Concat, Graph, Loop, Node, Sliced, Value, tensor
from passutil import rng, run


def _loop(stop_after, new_axis, axis, reverse, length=None):
    """y_k = x_k * 2 over X [20, 2, 3] (sliced on axis 0); with `stop_after` a condition ends
    the loop after that many iterations (so the runner does not know the count in advance)."""
    x = Value("X", tensor("float32", (20, 2, 3)))
    two = Value("two", tensor("float32", ()), const=np.array(2.0, np.float32))
    px = Value("x_k", tensor("float32", (2, 3)))
    it = Value("k", tensor("int64", ()))
    mul = Node("Mul", [px, two], 1, version=14)
    nodes, inits, cond = [mul], [two], None
    if stop_after is not None:
        lim = Value("lim", tensor("int64", ()), const=np.array(stop_after - 1, np.int64))
        less = Node("Less", [it, lim], 1, version=13)
        nodes.append(less)
        inits.append(lim)
        cond = less.outputs[0]
    bd = Graph("body", [it, px], [mul.outputs[0]], nodes)
    lv = None if length is None else Value("len", tensor("int64", ()),
                                           const=np.array(length, np.int64))
    loop = Loop(bd, [Sliced(x, px)], [Concat(mul.outputs[0], Value("Y"), axis=axis,
                                             reverse=reverse, new_axis=new_axis, length=lv)],
                iteration_param=it, condition_result=cond)
    return Graph("g", [x], loop.outputs, [loop], inits + ([lv] if lv is not None else []))


def _oracle(x, n, new_axis, axis, reverse, length=None):
    ys = [x[k] * 2 for k in range(n)]
    if reverse:
        ys = ys[::-1]
    if length is not None:
        ys += [np.zeros_like(ys[0])] * (length - n)
    return np.stack(ys, axis=axis) if new_axis else np.concatenate(ys, axis=axis)


@pytest.mark.parametrize("stop_after", [None, 3, 19])  # known count; early stop; growth
@pytest.mark.parametrize("new_axis,axis", [(True, 0), (True, 1), (True, 2), (True, -1),
                                           (False, 0), (False, 1), (False, -1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_concat_layouts(stop_after, new_axis, axis, reverse):
    g = _loop(stop_after, new_axis, axis, reverse)
    x = rng(1).standard_normal((20, 2, 3)).astype(np.float32)
    got = run(g, {"X": x})["Y"]
    want = _oracle(x, stop_after or 20, new_axis, axis, reverse)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("reverse", [False, True])
def test_concat_padded_to_a_length(reverse):
    g = _loop(None, True, 1, reverse, length=24)
    x = rng(2).standard_normal((20, 2, 3)).astype(np.float32)
    np.testing.assert_array_equal(run(g, {"X": x})["Y"], _oracle(x, 20, True, 1, reverse, 24))


def test_outputs_of_consecutive_runs_are_independent():
    g = _loop(None, True, 0, False)
    x = rng(3).standard_normal((20, 2, 3)).astype(np.float32)
    first = run(g, {"X": x})["Y"]
    kept = first.copy()
    run(g, {"X": x + 1})
    np.testing.assert_array_equal(first, kept)
