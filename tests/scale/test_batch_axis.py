"""`batch_axis.per_example`: graphs it admits give, batched, the results of one run per input
(the oracle: the model's own single runs); graphs it refuses really mix examples (batched
anyway, their results differ) or are beyond what its rules can prove."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.scale.run_many import batching_plan
from onnx_builders import I64, F, const, model, vi

RNG = np.random.default_rng(7)
W64 = RNG.normal(size=(6, 5)).astype(np.float32)


def _model(nodes, inputs, inits, out_elem=F):
    """A model whose output type names only the element type (its shape is the graph's)."""
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("Y", out_elem, None)],
                     list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21)], ir_version=10)


def _i64(name, values):
    return const(name, np.array(values, np.int64))


ADMITTED = {
    "matmul-weights": ([h.make_node("MatMul", ["X", "W"], ["Y"])], [const("W", W64)]),
    "softmax-last": ([h.make_node("Softmax", ["X"], ["Y"], axis=-1)], []),
    "reduce-mean-axis1": ([h.make_node("ReduceMean", ["X", "a"], ["Y"], keepdims=0)],
                          [_i64("a", [1])]),
    "transpose-argmax": ([h.make_node("Transpose", ["X"], ["T"], perm=[2, 0, 1]),
                          h.make_node("ArgMax", ["T"], ["Y"], axis=0, keepdims=1)], []),
    "reshape-copy-batch": ([h.make_node("Reshape", ["X", "s"], ["Y"])], [_i64("s", [0, -1])]),
    "slice-concat": ([h.make_node("Slice", ["X", "st", "en", "ax"], ["S"]),
                      h.make_node("Concat", ["X", "S"], ["Y"], axis=1)],
                     [_i64("st", [1]), _i64("en", [3]), _i64("ax", [1])]),
    "unsqueeze-squeeze": ([h.make_node("Unsqueeze", ["X", "a"], ["U"]),
                           h.make_node("Squeeze", ["U", "a"], ["Y"])], [_i64("a", [0])]),
    "bias-broadcast": ([h.make_node("Add", ["X", "b"], ["Y"])],
                       [const("b", RNG.normal(size=(1, 4, 6)).astype(np.float32))]),
    "conv-pool-per-example": ([h.make_node("Conv", ["X", "cw"], ["C"], kernel_shape=[3],
                                           pads=[1, 1]),
                               h.make_node("AveragePool", ["C"], ["Y"], kernel_shape=[2])],
                              [const("cw", RNG.normal(size=(2, 4, 3)).astype(np.float32))]),
    "pad-other-axes": ([h.make_node("Pad", ["X", "p"], ["Y"], mode="reflect")],
                       [_i64("p", [0, 1, 2, 0, 1, 2])]),
    "pointwise-conv-along-batch": ([h.make_node("Transpose", ["X"], ["T"], perm=[1, 2, 0]),
                                    h.make_node("Conv", ["T", "pw"], ["C"], kernel_shape=[1]),
                                    h.make_node("Transpose", ["C"], ["Y"], perm=[2, 0, 1])],
                                   [const("pw", RNG.normal(size=(3, 6, 1)).astype(np.float32))]),
    "reshape-whole-rows": ([h.make_node("Reshape", ["X", "s"], ["Y"])], [_i64("s", [-1, 2, 12])]),
    "castlike-and-back": ([h.make_node("CastLike", ["X", "d"], ["C"]),
                           h.make_node("Cast", ["C"], ["Y"], to=1)],
                          [const("d", np.zeros(3, np.float64))]),
    "gemm-rows": ([h.make_node("Flatten", ["X"], ["Fl"]),
                   h.make_node("Gemm", ["Fl", "G", "c"], ["Y"])],
                  [const("G", RNG.normal(size=(24, 3)).astype(np.float32)),
                   const("c", np.ones(3, np.float32))]),
}

REFUSED = {  # each mixes examples: batched, the results differ from single runs
    "reduce-over-batch": ([h.make_node("ReduceSum", ["X", "a"], ["Y"], keepdims=1)],
                          [_i64("a", [0])], "folds the batch axis"),
    "reduce-all": ([h.make_node("ReduceMax", ["X"], ["Y"], keepdims=1)], [],
                   "reduces every axis"),
    "softmax-over-batch": ([h.make_node("Softmax", ["X"], ["Y"], axis=0)], [],
                           "along the batch axis"),
    "gram-over-batch": ([h.make_node("Transpose", ["X"], ["T"], perm=[1, 2, 0]),
                         h.make_node("Transpose", ["X"], ["U"], perm=[1, 0, 2]),
                         h.make_node("MatMul", ["T", "U"], ["Y"])], [],
                        "contracts the batch axis"),
    "reshape-merge-batch": ([h.make_node("Reshape", ["X", "s"], ["Y"])], [_i64("s", [-1, 6])],
                            "Reshape"),
    "shape-reads-batch": ([h.make_node("Shape", ["X"], ["S"]),
                           h.make_node("Cast", ["S"], ["Sf"], to=1),
                           h.make_node("ReduceSum", ["Sf"], ["R"], keepdims=1),
                           h.make_node("Mul", ["X", "R"], ["Y"])], [], "batch size"),
    "stretching-constant": ([h.make_node("Mul", ["X", "k"], ["Y"])],
                            [const("k", RNG.normal(size=(3, 1, 1)).astype(np.float32))],
                            "stretches along the batch axis"),
    "pad-batch-axis": ([h.make_node("Pad", ["X", "p"], ["Y"])], [_i64("p", [1, 0, 0, 0, 0, 0])],
                       "pads the batch axis"),
    "conv-window-along-batch": ([h.make_node("Transpose", ["X"], ["T"], perm=[1, 2, 0]),
                                 h.make_node("Conv", ["T", "pw"], ["Y"], kernel_shape=[2],
                                             pads=[1, 0])],
                                [const("pw", RNG.normal(size=(3, 6, 2)).astype(np.float32))],
                                "window spans"),
    "cumsum-over-batch": ([h.make_node("CumSum", ["X", "ax"], ["Y"])], [_i64("ax", 0)],
                          "no rule"),
}


def _feeds(n=5, rows=1):
    return [{"X": RNG.normal(size=(rows, 4, 6)).astype(np.float32)} for _ in range(n)]


def _build(nodes, inits):
    out_elem = I64 if any(n.op_type == "ArgMax" for n in nodes) else F
    return ig.load(_model(nodes, [vi("X", F, ["N", 4, 6])], inits, out_elem))


@pytest.mark.parametrize("name", sorted(ADMITTED))
def test_admitted_graphs_batch_to_the_single_runs_results(name):
    m = _build(*ADMITTED[name])
    verdict = batching_plan(m)[1]
    assert verdict.ok, verdict.reason
    feeds = _feeds(7) + _feeds(2, rows=3)
    got = list(m.run_many(feeds, batch_size=3))
    for g, f in zip(got, feeds):
        w = m.run(f)
        assert g["Y"].shape == w["Y"].shape
        np.testing.assert_allclose(g["Y"], w["Y"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_graphs_mix_examples_and_run_one_by_one(name):
    nodes, inits, why = REFUSED[name]
    m = _build(nodes, inits)
    verdict = batching_plan(m)[1]
    assert not verdict.ok
    if why:
        assert why in verdict.reason
    feeds = _feeds(4)
    singles = [m.run(f)["Y"] for f in feeds]
    _same = [g["Y"] for g in m.run_many(feeds, batch_size=4)]
    for g, w in zip(_same, singles):
        np.testing.assert_array_equal(g, w)
    try:  # joined by hand, the examples do not give their single results back
        joined = m.run({"X": np.concatenate([f["X"] for f in feeds])})["Y"]
    except ig.Error:
        return
    pieces = [joined.take([i], axis=0) for i in range(len(feeds))] \
        if joined.shape[:1] == (len(feeds),) else None
    assert pieces is None or any(p.shape != w.shape or not np.allclose(p, w)
                                 for p, w in zip(pieces, singles))


def _cell_model(layout: int):
    hid, inp = 5, 6
    w = RNG.normal(0, 0.5, (1, 4 * hid, inp)).astype(np.float32)
    r = RNG.normal(0, 0.5, (1, 4 * hid, hid)).astype(np.float32)
    x_shape = ["N", "T", inp] if layout else ["T", "N", inp]
    node = h.make_node("LSTM", ["X", "W", "R"], ["Yall", "Y"], hidden_size=hid, layout=layout)
    return ig.load(_model([node], [vi("X", F, x_shape)], [const("W", w), const("R", r)]))


@pytest.mark.parametrize("layout", [0, 1])
def test_lstm_operator_on_its_batch_axis(layout):
    m = _cell_model(layout)
    axis = 0 if layout else 1
    verdict = batching_plan(m, {"X": axis})[1]
    assert verdict.ok, verdict.reason
    shape = (1, 7, 6) if layout else (7, 1, 6)
    feeds = [{"X": RNG.normal(size=shape).astype(np.float32)} for _ in range(5)]
    for g, f in zip(m.run_many(feeds, batch_size=2, batch_axes={"X": axis}), feeds):
        np.testing.assert_allclose(g["Y"], m.run(f)["Y"], rtol=1e-5, atol=1e-6)
    # the time axis is not a batch axis: the cell runs along it
    assert not batching_plan(m, {"X": 1 - axis})[1].ok


def test_embedding_lookup_batches_on_the_indices():
    table = RNG.normal(size=(10, 3)).astype(np.float32)
    m = ig.load(_model([h.make_node("Gather", ["E", "X"], ["Y"], axis=0)],
                       [vi("X", I64, ["N", 4])], [const("E", table)]))
    assert batching_plan(m)[1].ok
    feeds = [{"X": RNG.integers(0, 10, (1, 4))} for _ in range(5)]
    for g, f in zip(m.run_many(feeds, batch_size=4), feeds):
        np.testing.assert_array_equal(g["Y"], m.run(f)["Y"])


@pytest.mark.parametrize("opset,admitted", [(11, False), (13, True)])
def test_softmax_before_opset_13_normalizes_every_axis_from_its_own(opset, admitted):
    """Batch on axis 2, softmax axis 1: opset 11 normalizes axes 1 and 2 together."""
    m = ig.load(model([h.make_node("Softmax", ["X"], ["Y"], axis=1)],
                      [vi("X", F, [3, 4, "N"])], [vi("Y", F, [3, 4, "N"])], opset=opset))
    assert batching_plan(m, {"X": 2})[1].ok is admitted
    feeds = [{"X": RNG.normal(size=(3, 4, 1)).astype(np.float32)} for _ in range(3)]
    for g, f in zip(m.run_many(feeds, batch_size=3, batch_axes={"X": 2}), feeds):
        np.testing.assert_allclose(g["Y"], m.run(f)["Y"], rtol=1e-5, atol=1e-6)


def _shape_model(tail):
    """X [N, 4, 6] -> n = Shape(X)[0] (a scalar), then `tail` nodes that end in Y."""
    nodes = [h.make_node("Shape", ["X"], ["S"]),
             h.make_node("Gather", ["S", "zero"], ["n"], axis=0),
             h.make_node("Unsqueeze", ["n", "zero1"], ["n1"]), *tail]
    inits = [_i64("zero", 0), _i64("zero1", [0]), _i64("one1", [1]), _i64("six", [6]),
             _i64("m1", [-1]), const("b6", RNG.normal(size=(1, 6)).astype(np.float32))]
    return ig.load(_model(nodes, [vi("X", F, ["N", 4, 6])], inits))


SHAPE_TAILS = {  # name: (nodes after n/n1, admitted)
    "zero-state": ([h.make_node("Concat", ["n1", "six"], ["zs"], axis=0),
                    h.make_node("ConstantOfShape", ["zs"], ["Z"]),
                    h.make_node("ReduceMean", ["X", "one1"], ["R"], keepdims=0),
                    h.make_node("Add", ["R", "Z"], ["Y0"]),
                    h.make_node("Unsqueeze", ["Y0", "zero1"], ["Y1"]),
                    h.make_node("Squeeze", ["Y1", "zero1"], ["Y"])], True),
    "reshape-to-rows": ([h.make_node("Concat", ["n1", "m1"], ["rs"], axis=0),
                         h.make_node("Reshape", ["X", "rs"], ["Y"])], True),
    "expand-a-row": ([h.make_node("Slice", ["S", "zero1", "one1"], ["n1s"]),
                      h.make_node("Concat", ["n1s", "six"], ["es"], axis=0),
                      h.make_node("Expand", ["b6", "es"], ["E"]),
                      h.make_node("Transpose", ["X"], ["XT"], perm=[0, 2, 1]),
                      h.make_node("ReduceSum", ["XT", "m1"], ["R"], keepdims=0),
                      h.make_node("Mul", ["R", "E"], ["Y"])], True),
    "batch-size-as-a-number": ([h.make_node("Cast", ["n"], ["nf"], to=1),
                                h.make_node("Mul", ["X", "nf"], ["Y"])], False),
    "batch-size-in-arithmetic": ([h.make_node("Mul", ["n1", "m1"], ["k"]),
                                  h.make_node("Concat", ["k", "six"], ["s2"], axis=0),
                                  h.make_node("Reshape", ["X", "s2"], ["Y"])], False),
}


def test_shapes_read_from_batched_inputs():
    """The exporter idiom "however many examples": admitted where the batch size only sizes a
    constant, a reshape of whole rows or an expansion; refused where it is a number."""
    for name, (tail, admitted) in SHAPE_TAILS.items():
        m = _shape_model(tail)
        verdict = batching_plan(m)[1]
        assert verdict.ok is admitted, (name, verdict.reason)
        feeds = _feeds(5) + _feeds(2, rows=2)
        for g, f in zip(m.run_many(feeds, batch_size=3), feeds):
            np.testing.assert_allclose(g["Y"], m.run(f)["Y"], rtol=1e-5, atol=1e-6)
