"""``loop-to-scan``: counted loops written as ONNX Scan, checked by running."""

from __future__ import annotations

import pytest
from flavours import (
    check,
    loop_ops,
    onnx_count_loop,
    onnx_nested,
    onnx_row_loop,
    onnx_scan,
    onnx_while_loop,
    ov_loop,
    ov_tensor_iterator,
)

import itergraph as ig
from itergraph.transforms import TRANSFORMS

FLAVOURS = {
    "onnx-loop-constant-count": lambda tmp: onnx_count_loop(5),
    "onnx-loop-rows-dynamic": lambda tmp: onnx_row_loop("T"),
    "onnx-loop-rows-static": lambda tmp: onnx_row_loop(6),
    "openvino-loop": ov_loop,
    "openvino-ti": ov_tensor_iterator,
}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_counted_loops_are_written_as_scan(flavour, tmp_path):
    source, feeds = FLAVOURS[flavour](tmp_path)
    done = check(source, ["loop-to-scan"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Scan"]


def test_row_reads_become_scan_inputs(tmp_path):
    source, feeds = onnx_row_loop("T")
    done = check(source, ["loop-to-scan"], feeds, tmp_path)
    (loop,) = [n for n in done.model.graph.nodes if n.op_type == "Loop"]
    assert all(n.op_type != "Gather" for n in loop.body.nodes)
    assert loop.trip_count is None and loop.iteration_param is None


def test_loops_at_any_depth(tmp_path):
    source, feeds = onnx_nested()
    done = check(source, ["loop-to-scan"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Scan", "Scan", "Scan"]


def test_a_scan_stays_a_scan(tmp_path):
    source, feeds = onnx_scan(1)
    p = TRANSFORMS["loop-to-scan"].build(None)
    assert p(ig.load(source).graph) == 0
    assert loop_ops(check(source, ["loop-to-scan"], feeds, tmp_path).onnx_ops) == ["Scan"]


def test_loops_that_are_not_counted_are_left_with_a_reason(tmp_path):
    p = TRANSFORMS["loop-to-scan"].build(None)
    source, feeds = onnx_while_loop()
    assert p(ig.load(source).graph) == 0
    assert "condition may stop it early" in p.skipped[0]
    source, feeds = onnx_count_loop(4, trip_input=True)
    assert p(ig.load(source).graph) == 0
    assert "trip count" in p.skipped[0]
    assert loop_ops(check(source, ["loop-to-scan"], feeds, tmp_path).onnx_ops) == ["Loop"]
