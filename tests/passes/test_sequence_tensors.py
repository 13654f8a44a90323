"""passes.sequence_tensors: a list appended to conditionally, or with pieces of different
lengths, then joined, becomes a carried tensor grown by Concat; checked against ONNX Runtime
on the original and OpenVINO on the written IR (torch.onnx writes these for ``if ...:
out.append(row)`` and ``out.append(x[i, :k])`` in a scripted loop)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

from itergraph.passes.sequence_tensors import sequence_tensors
from itergraph.passes.sequence_tensors_unconditional import sequence_tensors_unconditional
from onnx_builders import I64, B, F, body, model, vi
from passutil import assert_like_ort_everywhere, assert_same_outputs, load, ops, rng, transformed


def SEQ(name, elem, shape):
    return h.make_value_info(name, h.make_sequence_type_proto(
        h.make_tensor_type_proto(elem, shape)))


def _conditional(new_axis: int, first: bool, width=None):
    """``out = [] (or [x[0]]); for i in range(M): r = X[i]; if r.sum() > 0: out.append(2 r)``
    then ``ConcatFromSequence(out, axis=0, new_axis)``; rows of X have `width` columns as the
    file declares them (None: unknown)."""
    then_b = h.make_graph([h.make_node("Add", ["r", "r"], ["r2"]),
                           h.make_node("SequenceInsert", ["seq_in", "r2"], ["s_then"])],
                          "then", [], [SEQ("s_then", F, [width])])
    else_b = h.make_graph([h.make_node("Identity", ["seq_in"], ["s_else"])], "else", [],
                          [SEQ("s_else", F, [width])])
    nodes = [h.make_node("Gather", ["X", "i"], ["r"]),
             h.make_node("ReduceSum", ["r"], ["tot"], keepdims=0),
             h.make_node("Greater", ["tot", "zero"], ["pos"]),
             h.make_node("If", ["pos"], ["seq_out"], then_branch=then_b, else_branch=else_b),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), SEQ("seq_in", F, [width])],
             [vi("c_out", B, []), SEQ("seq_out", F, [width])])
    if first:
        start = [h.make_node("Gather", ["X", "zero_i"], ["row0"]),
                 h.make_node("SequenceConstruct", ["row0"], ["start"])]
    else:
        start = [h.make_node("SequenceEmpty", [], ["start"], dtype=F)]
    outer = [h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", F, [], [0.0])),
             h.make_node("Constant", [], ["zero_i"],
                         value=h.make_tensor("zi", I64, [], [0])),
             *start,
             h.make_node("Loop", ["M", "", "start"], ["list"], body=b),
             h.make_node("ConcatFromSequence", ["list"], ["Y"], axis=0, new_axis=new_axis)]
    rank = 2 if new_axis else 1
    return model(outer, [vi("M", I64, []), vi("X", F, ["n", 3])],
                 [vi("Y", F, [f"y{k}" for k in range(rank)])], opset=18)


def _feeds(m=5):
    x = rng(4).standard_normal((5, 3)).astype(np.float32)
    x[1] = -np.abs(x[1])
    x[3] = np.abs(x[3])
    return {"M": np.array(m, np.int64), "X": x}


@pytest.mark.parametrize("new_axis", [0, 1])
@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize("width", [3, None])
def test_conditional_append_becomes_a_growing_tensor(new_axis, first, width, tmp_path):
    m = _conditional(new_axis, first, width)
    g = load(m)
    new, count = transformed(g, sequence_tensors)
    assert count == 1
    assert not {"SequenceEmpty", "SequenceConstruct", "SequenceInsert",
                "ConcatFromSequence"} & set(ops(new))
    for trips in (5, 0) if first else (5,):  # ConcatFromSequence of an empty list is an error
        feeds = _feeds(trips)
        assert_same_outputs(g, new, feeds)
        assert_like_ort_everywhere(m, feeds, tmp_path)


def test_list_read_elsewhere_is_left_alone():
    """A list also read by SequenceLength stays a sequence."""
    m = _conditional(1, False)
    m.graph.node.append(h.make_node("SequenceLength", ["list"], ["n"]))
    m.graph.output.append(vi("n", I64, []))
    assert transformed(load(m), sequence_tensors)[1] == 0


def test_compiler_form_leaves_conditional_appends_and_takes_unconditional_ones():
    """`sequence_tensors_unconditional` (the JAX backend's): a list appended to inside an If
    stays a list (its length would be known only at run time, XLA's conditional returns one
    shape per branch); one appended to at every iteration becomes the grown tensor, with the
    same outputs."""
    assert transformed(load(_conditional(0, False, 3)), sequence_tensors_unconditional)[1] == 0
    m = _conditional(0, False, 3)
    loop = next(n for n in m.graph.node if n.op_type == "Loop")
    b = loop.attribute[0].g
    for i, n in enumerate(b.node):  # the append made unconditional
        if n.op_type == "If":
            b.node[i].CopyFrom(h.make_node("SequenceInsert", ["seq_in", "r"], ["seq_out"]))
    g = load(m)
    new, count = transformed(g, sequence_tensors_unconditional)
    assert count == 1 and "SequenceInsert" not in ops(new)
    assert_same_outputs(g, new, _feeds())
