"""passes.sequence_scan_outputs: a list appended to in a loop, then concatenated, becomes a
scan output; checked against ONNX Runtime on the original and OpenVINO on the written IR."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.passes.sequence_scan_outputs import sequence_scan_outputs
from onnx_builders import I64, B, F, body, model, vi
from passutil import assert_like_ort_everywhere, assert_same_outputs, load, ops, rng, transformed


def SEQ(name, elem, shape):
    return h.make_value_info(name, h.make_sequence_type_proto(
        h.make_tensor_type_proto(elem, shape)))


def _list_loop(concat_attrs: dict, extra_body=(), extra_out=(), read_list_outside=False,
               first=()):
    """``h = x0; out = [*first]; for i in range(M): h = tanh(h + X[i]); out.append(2 * h)``
    then ``ConcatFromSequence(out, **concat_attrs)``, as torch.onnx writes it at opset 18
    (``SequenceEmpty`` for an empty list, else ``SequenceConstruct`` of the `first` inputs)."""
    nodes = [h.make_node("Gather", ["X", "i"], ["row"]),
             h.make_node("Add", ["h_in", "row"], ["s"]),
             h.make_node("Tanh", ["s"], ["h_out"]),
             h.make_node("Add", ["h_out", "h_out"], ["t"]),
             h.make_node("SequenceInsert", ["seq_in", "t"], ["seq_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"]), *extra_body]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("h_in", F, [2, 3]),
                     SEQ("seq_in", F, [2, 3])],
             [vi("c_out", B, []), vi("h_out", F, [2, 3]), SEQ("seq_out", F, [2, 3]),
              *extra_out])
    start = h.make_node("SequenceConstruct", list(first), ["empty"]) if first else \
        h.make_node("SequenceEmpty", [], ["empty"], dtype=F)
    outer = [start,
             h.make_node("Loop", ["M", "", "h0", "empty"],
                         ["h", "list", *[f"scan{k}" for k in range(len(extra_out))]], body=b),
             h.make_node("ConcatFromSequence", ["list"], ["Y"], **concat_attrs)]
    rank = 3 if concat_attrs["new_axis"] else 2
    outputs = [vi("h", F, [2, 3]), vi("Y", F, [f"y{k}" for k in range(rank)])]
    if read_list_outside:
        outer.append(h.make_node("SequenceLength", ["list"], ["n"]))
        outputs.append(vi("n", I64, []))
    outputs += [vi(f"scan{k}", I64, ["n"]) for k in range(len(extra_out))]
    return model(outer, [vi("M", I64, []), vi("X", F, [4, 2, 3]), vi("h0", F, [2, 3]),
                         *([vi("P", F, ["p0", 3])] if "P" in first else [])],
                 outputs, opset=18)


def _feeds(m=4):
    r = rng(3)
    return {"M": np.array(m, np.int64), "X": r.standard_normal((4, 2, 3)).astype(np.float32),
            "h0": r.standard_normal((2, 3)).astype(np.float32)}


CONCATS = [{"axis": 0, "new_axis": 1}, {"axis": 1, "new_axis": 1}, {"axis": -1, "new_axis": 1},
           {"axis": 0, "new_axis": 0}, {"axis": 1, "new_axis": 0}, {"axis": -1, "new_axis": 0}]


@pytest.mark.parametrize("attrs", CONCATS, ids=lambda a: f"axis{a['axis']}_new{a['new_axis']}")
def test_appended_list_becomes_a_scan_output(attrs, tmp_path):
    m = _list_loop(attrs)
    g = load(m)
    new, count = transformed(g, sequence_scan_outputs)
    assert count == 1
    assert not {"SequenceEmpty", "SequenceInsert", "ConcatFromSequence"} & set(ops(new))
    feeds = _feeds()
    assert_same_outputs(g, new, feeds)
    # the JAX backend and the IR writer make the same rewrite: neither has sequences
    assert_like_ort_everywhere(m, feeds, tmp_path)


def test_list_read_elsewhere_is_left_alone():
    """A list whose final value is also read by SequenceLength stays a sequence."""
    m = _list_loop({"axis": 0, "new_axis": 1}, read_list_outside=True)
    new, count = transformed(load(m), sequence_scan_outputs)
    assert count == 0 and "SequenceEmpty" in ops(new)


def test_list_read_in_the_body_is_left_alone():
    """A body that also reads the list (its length here) needs the sequence each step."""
    m = _list_loop({"axis": 0, "new_axis": 1},
                   extra_body=[h.make_node("SequenceLength", ["seq_in"], ["len"])],
                   extra_out=[vi("len", I64, [])])
    g = load(m)
    new, count = transformed(g, sequence_scan_outputs)
    assert count == 0
    assert_same_outputs(g, new, _feeds())


def test_zero_iterations_stay_an_error():
    """ConcatFromSequence of an empty list is an error (as ONNX Runtime); the rewritten loop
    keeps it on both backends: its scan output port carries the error, naming the join."""
    g = load(_list_loop({"axis": 0, "new_axis": 1}))
    with pytest.raises(ig.Error):
        ig.load(g).run(_feeds(0))
    new, _ = transformed(g, sequence_scan_outputs)
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.ExecutionError, match="ConcatFromSequence.*empty sequence"):
            ig.load(new).run(_feeds(0), backend=backend)
        with pytest.raises(ig.ExecutionError, match="empty sequence"):
            ig.load(g).run(_feeds(0), backend=backend)


@pytest.mark.parametrize("m", [4, 0])
@pytest.mark.parametrize("attrs", CONCATS, ids=lambda a: f"axis{a['axis']}_new{a['new_axis']}")
def test_list_that_starts_with_elements_is_them_then_the_scan_output(attrs, m, tmp_path):
    """``out = [x0, x0]`` before the loop (torch.jit.script lists that start non-empty): the
    join is the first elements followed by the appended ones, also after zero iterations."""
    mdl = _list_loop(attrs, first=("h0", "h0"))
    g = load(mdl)
    new, count = transformed(g, sequence_scan_outputs)
    assert count == 1
    assert not {"SequenceConstruct", "SequenceInsert", "ConcatFromSequence"} & set(ops(new))
    feeds = _feeds(m)
    assert_same_outputs(g, new, feeds)
    assert_like_ort_everywhere(mdl, feeds, tmp_path)


def test_a_first_element_of_another_length_on_the_join_axis_is_left_alone():
    """``torch.cat([P] + appended)`` with P of unknown length on axis 0: no scan output form."""
    g = load(_list_loop({"axis": 0, "new_axis": 0}, first=("P",)))
    assert transformed(g, sequence_scan_outputs)[1] == 0
