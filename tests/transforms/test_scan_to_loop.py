"""``scan-to-loop``: Scans and TensorIterators written as ONNX Loop, checked by running."""

from __future__ import annotations

import pytest
from flavours import (
    check,
    loop_ops,
    onnx_count_loop,
    onnx_nested,
    onnx_scan,
    ov_loop,
    ov_tensor_iterator,
)

import itergraph as ig
from itergraph.transforms import TRANSFORMS

FLAVOURS = {
    "onnx-scan": lambda tmp: onnx_scan(0),
    "onnx-scan-reversed": lambda tmp: onnx_scan(1),
    "openvino-ti": ov_tensor_iterator,
}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_scans_are_written_as_loop(flavour, tmp_path):
    source, feeds = FLAVOURS[flavour](tmp_path)
    done = check(source, ["scan-to-loop"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Loop"]
    # the IR writer's own loop-to-ti makes it a TensorIterator again (its count is static)
    assert loop_ops(done.xml_layers) == ["TensorIterator"]


def test_a_scan_over_an_input_of_unknown_length(tmp_path):
    source, feeds = onnx_scan(1)
    source.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "T"
    done = check(source, ["scan-to-loop"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Loop"]
    assert "Shape" in done.onnx_ops


def test_scans_at_any_depth(tmp_path):
    source, feeds = onnx_nested()
    done = check(source, ["scan-to-loop"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Loop", "Loop", "Loop"]


def test_loops_are_left_alone(tmp_path):
    source, _ = onnx_count_loop(3)
    assert TRANSFORMS["scan-to-loop"].build(None)(ig.load(source).graph) == 0
    xml, _ = ov_loop(tmp_path)  # an OpenVINO Loop with no sliced input
    assert TRANSFORMS["scan-to-loop"].build(None)(ig.load(str(xml)).graph) == 0


def test_scan_to_loop_then_loop_to_scan_round_trips(tmp_path):
    source, feeds = onnx_scan(0)
    done = check(source, ["scan-to-loop", "loop-to-scan"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Scan"]
