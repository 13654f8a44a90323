"""passes.static_sequences: reads of lists whose elements are known values read the values;
checked against ONNX Runtime on the original, both backends, and OpenVINO on the written IR
(which has no sequence type)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.passes.static_sequences import static_sequences
from onnx_builders import I64, B, F, body, const, model, run_ort, vi
from passutil import assert_like_ort_everywhere, assert_same_outputs, load, ops, rng, transformed

FEEDS = {"a": rng(1).standard_normal((2, 3)).astype(np.float32),
         "b": rng(2).standard_normal((2, 3)).astype(np.float32),
         "c": rng(3).standard_normal((2, 3)).astype(np.float32)}
ABC = [vi("a", F, [2, 3]), vi("b", F, [2, 3]), vi("c", F, [2, 3])]


def _reads(concat: dict) -> list:
    """[a, b] + insert c at 1 + erase the last, then every reader of the result."""
    return [h.make_node("SequenceConstruct", ["a", "b"], ["s"]),
            h.make_node("SequenceInsert", ["s", "c", "one"], ["s2"]),   # [a, c, b]
            h.make_node("SequenceInsert", ["s2", "a"], ["s3"]),         # [a, c, b, a]
            h.make_node("SequenceErase", ["s3", "minus_two"], ["s4"]),  # [a, c, a]
            h.make_node("SequenceAt", ["s4", "minus_two"], ["at"]),
            h.make_node("SequenceLength", ["s4"], ["n"]),
            h.make_node("ConcatFromSequence", ["s4"], ["y"], **concat)]


def reads_model(concat: dict):
    rank = 3 if concat.get("new_axis") else 2
    return model(_reads(concat), ABC, [vi("at", F, [2, 3]), vi("n", I64, []),
                                       vi("y", F, [f"y{k}" for k in range(rank)])],
                 [const("one", 1, np.int64), const("minus_two", -2, np.int64)], opset=17)


CONCATS = [{"axis": 0}, {"axis": 1}, {"axis": -1}, {"axis": 0, "new_axis": 1},
           {"axis": 2, "new_axis": 1}, {"axis": -1, "new_axis": 1}, {"axis": -3, "new_axis": 1}]


@pytest.mark.parametrize("concat", CONCATS, ids=lambda a: "_".join(f"{k}{v}" for k, v in a.items()))
def test_reads_of_a_known_list_read_its_elements(concat, tmp_path):
    m = reads_model(concat)
    g = load(m)
    new, count = transformed(g, static_sequences)
    assert count == 3
    assert not [op for op in ops(new) if "Sequence" in op]
    assert_same_outputs(g, new, FEEDS, exact=True)
    assert_like_ort_everywhere(m, FEEDS, tmp_path, rtol=1e-6, atol=0)
    assert "fall back" not in ig.load(m).explain("jax")  # no sequence left for NumPy


def test_a_list_read_inside_a_loop_body():
    """SequenceAt of an outer list inside a Loop body reads the element as a capture."""
    b = body([h.make_node("SequenceAt", ["s", "k"], ["e"]),
              h.make_node("Add", ["x_in", "e"], ["x_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2, 3])],
             [vi("c_out", B, []), vi("x_out", F, [2, 3])], [const("k", 1, np.int64)])
    m = model([h.make_node("SequenceConstruct", ["a", "b"], ["s"]),
               h.make_node("Loop", ["M", "", "c"], ["y"], body=b)],
              [*ABC, vi("M", I64, [])], [vi("y", F, [2, 3])], opset=17)
    g = load(m)
    new, count = transformed(g, static_sequences)
    assert count == 1 and "SequenceConstruct" not in ops(new)
    feeds = {**FEEDS, "M": np.array(3, np.int64)}
    assert_same_outputs(g, new, feeds, exact=True)
    np.testing.assert_allclose(ig.load(m).run(feeds, backend="jax")["y"],
                               run_ort(m, feeds)["y"], rtol=1e-6)


@pytest.mark.parametrize("nodes", [
    [h.make_node("SequenceConstruct", ["a", "b"], ["s"]),
     h.make_node("SequenceAt", ["s", "two"], ["y"])],                     # outside the list
    [h.make_node("SequenceConstruct", ["a", "b"], ["s"]),
     h.make_node("SequenceAt", ["s", "k"], ["y"])],                       # position fed
    [h.make_node("SequenceEmpty", [], ["s"], dtype=F),
     h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],            # join of nothing
    [h.make_node("SplitToSequence", ["a"], ["s"], axis=0),
     h.make_node("SequenceAt", ["s", "two"], ["y"])],                     # elements unknown
], ids=["out-of-range", "fed-position", "empty-join", "split"])
def test_reads_the_pass_cannot_know_are_left_alone(nodes):
    m = model(nodes, [*ABC, vi("k", I64, [])], [vi("y", F, ["y0", "y1"])],
              [const("two", 2, np.int64)], opset=17)
    g = load(m)
    new, count = transformed(g, static_sequences)
    assert count == 0 and ops(new) == ops(g)
