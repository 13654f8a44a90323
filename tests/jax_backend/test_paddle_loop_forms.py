"""Loop forms paddle2onnx writes, on the JAX backend (found by the ``paddle`` corpus
source): an index computed through float (``end = cast(float(i) * 1.0 + 1.0)``) slicing a
row per iteration, and a counter that a ``[1]`` constant makes ``[1]`` while the file declares
it a scalar. ONNX Runtime is the oracle; `explain` must say what the run does."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h

from itergraph.backends import jax as jb
from itergraph.frontends.onnx import read
from onnx_builders import body, model, run_ort, vi

F, I64, B = TP.FLOAT, TP.INT64, TP.BOOL


def _const(name: str, dtype, dims, vals):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, dtype, dims, vals))


def _row_sum_loop():
    """``for i in range(M): acc += x[i]`` with paddle2onnx's slice bounds: start ``[i]``,
    end ``[cast(float(i) * 1.0 + 1.0)]``."""
    nodes = [h.make_node("Unsqueeze", ["i", "ax"], ["start"]),
             h.make_node("Cast", ["i"], ["fi"], to=F),
             _const("one_f", F, [], [1.0]),
             h.make_node("Mul", ["fi", "one_f"], ["fi1"]),
             h.make_node("Add", ["fi1", "one_f"], ["fe"]),
             h.make_node("Cast", ["fe"], ["e"], to=I64),
             h.make_node("Unsqueeze", ["e", "ax"], ["end"]),
             h.make_node("Slice", ["x", "start", "end", "ax"], ["row"]),
             h.make_node("ReduceSum", ["row", "ax"], ["r"], keepdims=0),
             h.make_node("Add", ["acc_in", "r"], ["acc_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, [3])],
             [vi("c_out", B, []), vi("acc_out", F, [3])])
    outer = [_const("ax", I64, [1], [0]), _const("acc0", F, [3], [0, 0, 0]),
             h.make_node("Loop", ["M", "", "acc0"], ["acc"], body=b, name="L")]
    return model(outer, [vi("M", I64, []), vi("x", F, [5, 3])], [vi("acc", F, [3])], opset=13)


def test_slice_bounds_computed_through_float_compile_as_a_dynamic_slice():
    m = _row_sum_loop()
    feeds = {"M": np.array(4, np.int64),
             "x": np.arange(15, dtype=np.float32).reshape(5, 3)}
    want = run_ort(m, feeds)["acc"]
    g = read(m)
    static = [r for r in jb.explain(g) if r.element == "Loop node 'L'"]
    ran = [r for r in jb.explain(g, feeds) if r.element == "Loop node 'L'"]
    assert [r.compiles for r in static] == [True]
    assert [r.compiles for r in ran] == [True], ran
    cg = jb.compile_graph(g)
    np.testing.assert_allclose(cg.run(feeds)["acc"], want)


def _counter_of_another_rank():
    """``i = cast(float(i) * [1.0] + 1.0)`` carried from the scalar ``0`` while the body
    declares it a scalar: it is ``[1]`` from the first iteration on; ``x`` halved."""
    nodes = [h.make_node("Cast", ["i_in"], ["fi"], to=F),
             _const("one_v", F, [1], [1.0]),
             h.make_node("Mul", ["fi", "one_v"], ["fi1"]),
             _const("one_s", F, [], [1.0]),
             h.make_node("Add", ["fi1", "one_s"], ["fe"]),
             h.make_node("Cast", ["fe"], ["i_out"], to=I64),
             _const("half", F, [], [0.5]),
             h.make_node("Mul", ["x_in", "half"], ["x_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("k", I64, []), vi("c_in", B, []), vi("i_in", I64, []),
                     vi("x_in", F, [2])],
             [vi("c_out", B, []), vi("i_out", I64, []), vi("x_out", F, [2])])
    outer = [_const("i0", I64, [], [0]),
             h.make_node("Loop", ["M", "", "i0", "x"], ["n", "y"], body=b, name="L")]
    # onnx.checker's full check refuses the declaration, as it refuses paddle2onnx's
    g = h.make_graph(outer, "g", [vi("M", I64, []), vi("x", F, [2])],
                     [vi("n", I64, ["r"]), vi("y", F, [2])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7)


def test_a_carried_value_whose_rank_the_body_changes_is_explained_as_numpy():
    """Tracing finds the changing shape and runs the loop on NumPy; the static `explain`
    says so beforehand (element-wise rank propagation sees through the declarations)."""
    m = _counter_of_another_rank()
    feeds = {"M": np.array(3, np.int64), "x": np.array([8.0, -2.0], np.float32)}
    want = run_ort(m, feeds)
    g = read(m)
    static = [r for r in jb.explain(g) if r.element == "Loop node 'L'"]
    assert [r.compiles for r in static] == [False]
    assert "changes rank from 0 to 1" in static[0].reason
    got = jb.compile_graph(g).run(feeds)
    for k, w in want.items():
        np.testing.assert_array_equal(got[k], w)
