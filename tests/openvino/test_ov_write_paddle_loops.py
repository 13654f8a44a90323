"""Loop forms paddle2onnx writes that itergraph's writers once got wrong (found by the
``paddle`` corpus source): carried placeholders whose rank the body changes, and loop
conditions of shape ``[1]``. ONNX Runtime on the original file is the oracle; the IR is run
by OpenVINO and read back by itergraph, the ONNX file by ONNX Runtime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper as h
from ov_helpers import assert_close, run_ov

import itergraph as ig
from onnx_builders import I64, B, F, body, model, run_ort, vi


def _half(name_in: str, name_out: str) -> list:
    return [h.make_node("Constant", [], ["half"], value=h.make_tensor("h", F, [], [0.5])),
            h.make_node("Mul", [name_in, "half"], [name_out])]


def _placeholder_loop() -> onnx.ModelProto:
    """``while``: x halved; ``p = x > 0.1`` computed in the body. ``p`` is carried from a
    scalar placeholder (``False``) that the body never reads, and the body declares it
    ``bool[N]``, the rank it gives it (paddle2onnx's form of a variable first set in a loop)."""
    nodes = _half("x_in", "x_out") + [
        h.make_node("Constant", [], ["tenth"], value=h.make_tensor("t", F, [], [0.1])),
        h.make_node("Greater", ["x_out", "tenth"], ["p_out"]),
        h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, ["n"]),
                     vi("p_in", B, ["n"])],
             [vi("c_out", B, []), vi("x_out", F, ["n"]), vi("p_out", B, ["n"])])
    outer = [h.make_node("Constant", [], ["p0"], value=h.make_tensor("f", B, [], [False])),
             h.make_node("Loop", ["M", "", "x", "p0"], ["xs", "ps"], body=b, name="L")]
    return model(outer, [vi("M", I64, []), vi("x", F, ["n"])],
                 [vi("xs", F, ["n"]), vi("ps", B, ["n"])], opset=13)


def _unread_rank_drop_loop() -> onnx.ModelProto:
    """``step = full([1], 1e9)`` before the loop, ``step = max(|x|)`` (a scalar) in it: the
    carried value enters with rank 1 and leaves with rank 0; the body never reads it."""
    nodes = _half("x_in", "x_out") + [
        h.make_node("ReduceMax", ["x_out"], ["s_out"], keepdims=0),
        h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [3]),
                     vi("s_in", F, [1])],
             [vi("c_out", B, []), vi("x_out", F, [3]), vi("s_out", F, [])])
    outer = [h.make_node("Constant", [], ["s0"], value=h.make_tensor("s", F, [1], [1e9])),
             h.make_node("Loop", ["M", "", "x", "s0"], ["xs", "ss"], body=b, name="L")]
    return model(outer, [vi("M", I64, []), vi("x", F, [3])],
                 [vi("xs", F, [3]), vi("ss", F, [])], opset=13)


@pytest.mark.parametrize("make", [_placeholder_loop, _unread_rank_drop_loop])
def test_carried_value_of_another_rank_that_the_body_does_not_read(tmp_path, make):
    """The IR is written (no refusal: no body layer depends on the carried value's rank),
    OpenVINO runs it to ONNX Runtime's outputs, and itergraph reads it back and agrees."""
    m = make()
    feeds = {"M": np.array(3, np.int64), "x": np.array([4.0, 0.3, -2.0], np.float32)}
    want = list(run_ort(m, feeds).values())
    xml = tmp_path / "m.xml"
    ig.save(ig.load(m), xml)
    for got in (run_ov(xml, feeds), list(ig.load(xml).run(feeds).values())):
        for g, w in zip(got, want, strict=True):
            assert_close(g, w)


def _condition_of_unknown_shape() -> onnx.ModelProto:
    """``while max(x) > 1: x = x / 2`` with paddle2onnx's conditions: ``[1]`` tensors, the
    first one reshaped by a run-time shape (itergraph cannot know its shape)."""
    nodes = _half("x_in", "x_out") + [
        h.make_node("ReduceMax", ["x_out"], ["mx"], keepdims=1),
        h.make_node("Constant", [], ["one"], value=h.make_tensor("o", F, [1], [1.0])),
        h.make_node("Greater", ["mx", "one"], ["c_out"])]
    b = body(nodes, [vi("i", I64, [1]), vi("c_in", B, [1]), vi("x_in", F, ["n"])],
             [vi("c_out", B, [1]), vi("x_out", F, ["n"])])
    outer = [h.make_node("ReduceMax", ["x"], ["mx0"], keepdims=0),
             h.make_node("Reshape", ["mx0", "shape"], ["mx1"]),
             h.make_node("Constant", [], ["one0"], value=h.make_tensor("o", F, [], [1.0])),
             h.make_node("Greater", ["mx1", "one0"], ["c0"]),
             h.make_node("Loop", ["", "c0", "x"], ["xs"], body=b, name="L")]
    return model(outer, [vi("x", F, ["n"]), vi("shape", I64, [1])], [vi("xs", F, ["n"])],
                 opset=13)


def test_onnx_writer_gives_a_condition_of_unknown_shape_the_scalar_form(tmp_path):
    """The written ONNX Loop's condition is a scalar, so ONNX Runtime loads the body (its
    scalar condition input would otherwise meet the ``[1]`` it infers outside) and runs it
    to the original's outputs; also after a trip through the IR."""
    m = _condition_of_unknown_shape()
    feeds = {"x": np.array([9.0, -3.0, 0.5], np.float32), "shape": np.array([-1], np.int64)}
    want = run_ort(m, feeds)["xs"]
    xml = tmp_path / "m.xml"
    ig.save(ig.load(m), xml)
    for src in (m, xml):
        out = tmp_path / "back.onnx"
        ig.save(ig.load(src), out)
        got = run_ort(onnx.load(str(out)), feeds)["xs"]
        assert_close(got, want)
