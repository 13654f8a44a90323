"""passes.split_sequence_reads: ``SequenceAt`` / ``ConcatFromSequence`` of a
``SplitToSequence`` read the split tensor; checked against ONNX Runtime on the original,
itergraph on the rewritten graph, and OpenVINO on the IR that ``ig.save`` writes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.ir import Loop
from itergraph.passes.pipelines import OPENVINO_WRITE, run_pipeline
from itergraph.passes.split_sequence_reads import split_sequence_reads
from onnx_builders import I64, B, F, body, const, model, vi
from passutil import (
    assert_like_ort_everywhere,
    assert_same_outputs,
    load,
    loops,
    ops,
    rng,
    transformed,
)

SEQ_OPS = {"SplitToSequence", "SequenceAt", "ConcatFromSequence"}


def _all_ops(graph) -> set[str]:
    return {n.op_type for _, n in graph.walk()}


def _check(m, feeds, tmp_path, count):
    """The pass rewrites `count` reads and leaves no sequence op; ORT, itergraph before and
    after, and OpenVINO on the written IR agree."""
    g = load(m)
    new, done = transformed(g, split_sequence_reads)
    assert done == count
    assert not SEQ_OPS & _all_ops(new)
    assert_same_outputs(g, new, feeds)
    # the JAX backend makes the same rewrite (XLA_LAYOUT), and so does the IR writer
    assert_like_ort_everywhere(m, feeds, tmp_path, atol=1e-5)
    return new


def _rows_loop(keepdims: int, axis: int):
    """``for t in range(len(xs)): h = tanh(h + xs[t])`` as torch.onnx writes it at opset 11:
    ``SplitToSequence(X)`` before the loop, ``SequenceAt(seq, t)`` inside."""
    nodes = [h.make_node("SequenceAt", ["seq", "t"], ["row"]),
             *([h.make_node("Reshape", ["row", "row_shape"], ["row2"])] if keepdims else []),
             h.make_node("Add", ["h_in", "row2" if keepdims else "row"], ["s"]),
             h.make_node("Tanh", ["s"], ["h_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("t", I64, []), vi("c_in", B, []), vi("h_in", F, [2, 3])],
             [vi("c_out", B, []), vi("h_out", F, [2, 3])])
    x_shape = [4, 2, 3] if axis == 0 else [2, 4, 3]
    outer = [h.make_node("SplitToSequence", ["X"], ["seq"], axis=axis, keepdims=keepdims),
             h.make_node("Loop", ["M", "", "h0"], ["h"], body=b)]
    return model(outer, [vi("M", I64, []), vi("X", F, x_shape), vi("h0", F, [2, 3])],
                 [vi("h", F, [2, 3])], [const("row_shape", np.array([2, 3], np.int64))],
                 opset=13)


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axis", [0, 1])
def test_rows_read_by_iteration(tmp_path, keepdims, axis):
    m = _rows_loop(keepdims, axis)
    r = rng(1)
    x = r.standard_normal((4, 2, 3) if axis == 0 else (2, 4, 3)).astype(np.float32)
    feeds = {"M": np.array(4, np.int64), "X": x, "h0": r.standard_normal((2, 3)).astype(
        np.float32)}
    new = _check(m, feeds, tmp_path, 1)
    assert "Gather" in ops(loops(new)[0].body)
    # the writer's pipeline turns the per-iteration Gather into a sliced input
    run_pipeline(OPENVINO_WRITE, new)
    (loop,) = [n for _, n in new.walk() if isinstance(n, Loop)]
    assert len(list(loop.sliced)) == 1 and "Gather" not in ops(loop.body)


@pytest.mark.parametrize("pos", [0, 1, 2, -1, -3])
def test_chunk_read_by_constant_position(tmp_path, pos):
    """``a, b, c = torch.chunk(z, 3, dim=1)`` inside a loop body (a GRU cell by hand): the
    chunk sizes come from a ``Concat``, the positions are constants."""
    nodes = [h.make_node("MatMul", ["h_in", "W"], ["z"]),
             h.make_node("Shape", ["z"], ["zs"]),
             h.make_node("Gather", ["zs", "one"], ["width"]),
             h.make_node("Div", ["width", "three"], ["third"]),
             h.make_node("Sub", ["width", "third"], ["rest"]),
             h.make_node("Sub", ["rest", "third"], ["last"]),
             h.make_node("Concat", ["third", "third", "last"], ["sizes"], axis=0),
             h.make_node("SplitToSequence", ["z", "sizes"], ["seq"], axis=1),
             h.make_node("SequenceAt", ["seq", "pos"], ["piece"]),
             h.make_node("SequenceAt", ["seq", "zero"], ["first"]),
             h.make_node("Add", ["piece", "first"], ["p2"]),
             h.make_node("Tanh", ["p2"], ["h_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("t", I64, []), vi("c_in", B, []), vi("h_in", F, [2, 4])],
             [vi("c_out", B, []), vi("h_out", F, [2, 4])],
             [const("pos", np.array(pos, np.int64)), const("zero", np.array(0, np.int32))])
    r = rng(2)
    m = model([h.make_node("Loop", ["M", "", "h0"], ["h"], body=b)],
              [vi("M", I64, []), vi("h0", F, [2, 4])], [vi("h", F, [2, 4])],
              [const("W", r.standard_normal((4, 12)).astype(np.float32) / 3),
               const("one", np.array([1], np.int64)), const("three", np.array([3], np.int64))],
              opset=13)
    feeds = {"M": np.array(3, np.int64), "h0": r.standard_normal((2, 4)).astype(np.float32)}
    _check(m, feeds, tmp_path, 2)


JOINS = [(0, 0, 0, 0), (0, 0, 1, 1), (0, 0, -1, 1), (1, 0, 0, 1), (1, 0, 1, 0), (0, 1, 0, 0),
         (0, 1, 1, 0), (1, 1, 0, 1), (2, 1, 2, 0)]


@pytest.mark.parametrize("split_axis,keepdims,axis,new_axis", JOINS,
                         ids=lambda v: str(v))
def test_split_then_joined(tmp_path, split_axis, keepdims, axis, new_axis):
    """``torch.cat(list(x))`` / ``torch.stack(list(x), 1)``: a tensor split into a sequence and
    joined again, on any axes."""
    shape = [4, 2, 3]
    outer = [h.make_node("Tanh", ["X"], ["x"]),
             h.make_node("SplitToSequence", ["x"], ["seq"], axis=split_axis, keepdims=keepdims),
             h.make_node("ConcatFromSequence", ["seq"], ["Y"], axis=axis, new_axis=new_axis)]
    rank = 3 - (0 if keepdims else 1) + new_axis
    m = model(outer, [vi("X", F, shape)], [vi("Y", F, [f"y{k}" for k in range(rank)])],
              opset=13)
    feeds = {"X": rng(3).standard_normal(shape).astype(np.float32)}
    _check(m, feeds, tmp_path, 1)


def test_chunks_joined_where_cut_and_other_readers(tmp_path):
    """Explicit chunks joined on their axis give the tensor back; a ``SequenceLength`` keeps
    the ``SplitToSequence`` (only the join is rewritten)."""
    outer = [h.make_node("SplitToSequence", ["X", "sizes"], ["seq"], axis=1),
             h.make_node("ConcatFromSequence", ["seq"], ["Y"], axis=1),
             h.make_node("SequenceLength", ["seq"], ["n"])]
    m = model(outer, [vi("X", F, [2, 5])], [vi("Y", F, [2, 5]), vi("n", I64, [])],
              [const("sizes", np.array([2, 3], np.int64))], opset=13)
    g = load(m)
    new, done = transformed(g, split_sequence_reads)
    assert done == 1 and "ConcatFromSequence" not in ops(new) and "SplitToSequence" in ops(new)
    assert_same_outputs(g, new, {"X": rng(4).standard_normal((2, 5)).astype(np.float32)})


# (split axis, keepdims, join axis, new_axis, chunk sizes fed at run time or None, X shape)
EMPTY_JOINS = [(0, 1, 0, 0, None, [0, 3]), (0, 0, 0, 0, None, [0, 3]),
               (1, 0, 0, 1, None, [2, 0]), (1, 1, -1, 0, None, [2, 0]),
               (0, 1, 0, 0, [0], [0, 3]), (0, 1, 0, 0, [], [0, 3]),
               (1, 1, 1, 0, [2, 0], [2, 2])]


@pytest.mark.parametrize("split_axis,keepdims,axis,new_axis,sizes,shape", EMPTY_JOINS,
                         ids=lambda v: str(v))
def test_join_of_a_split_of_zero_length_as_ort_on_both_backends(split_axis, keepdims, axis,
                                                               new_axis, sizes, shape):
    """A zero-length axis splits into no piece: ONNX Runtime refuses the join of the empty
    sequence, and so do both backends (the JAX backend runs the rewritten join, whose guard
    keeps the error); chunk sizes that make pieces (one of length 0) join to the tensor."""
    import itergraph as ig
    from onnx_builders import run_ort

    ins = ["X"] + (["S"] if sizes is not None else [])
    outer = [h.make_node("SplitToSequence", ins, ["seq"], axis=split_axis,
                         **({} if sizes is not None else {"keepdims": keepdims})),
             h.make_node("ConcatFromSequence", ["seq"], ["Y"], axis=axis, new_axis=new_axis)]
    rank = len(shape) - (0 if keepdims or sizes is not None else 1) + new_axis
    m = model(outer, [vi("X", F, ["a", "b"]), *([vi("S", I64, ["k"])] if sizes is not None
                                                  else [])],
              [vi("Y", F, [f"y{k}" for k in range(rank)])], opset=13)
    feeds = {"X": np.zeros(shape, np.float32)}
    if sizes is not None:
        feeds["S"] = np.array(sizes, np.int64)
    try:
        want = run_ort(m, feeds)["Y"]
    except Exception as e:  # noqa: BLE001 - ORT's refusal is the oracle
        assert "ConcatFromSequence" in str(e), e
        want = None
    for backend in ("numpy", "jax"):
        if want is None:
            with pytest.raises(ig.ExecutionError, match="cannot concatenate an empty sequence"):
                ig.load(m).run(feeds, backend=backend)
        else:
            got = ig.load(m).run(feeds, backend=backend)["Y"]
            assert got.shape == want.shape, backend
