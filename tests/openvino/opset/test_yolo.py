"""ReorgYolo-2 and RegionYolo-1 against OpenVINO: strides, YOLO v2 (softmax over the classes,
flattened axes) and v3 (sigmoids, a mask) heads, dynamic batch and spatial dims; read as ONNX
subgraphs, run on NumPy and JAX, written back, and run by ONNX Runtime."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset2 as ops2
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(23)


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_reorg_yolo(stride, dtype, tmp_path):
    shape = (2, 4 * stride * stride, 2 * stride, 3 * stride)
    x = ops2.parameter(list(shape), dtype, name="x")
    y = ops2.reorg_yolo(x, [stride, stride])
    feed = (rng.standard_normal(shape) * 10).astype(dtype)
    check_op([y], [x], {"x": feed}, tmp_path)


def test_reorg_yolo_dynamic_batch(tmp_path):
    x = ops2.parameter([-1, 8, 4, 6], np.float32, name="x")
    y = ops2.reorg_yolo(x, [2, 2])
    check_op([y], [x], {"x": rand(rng, 3, 8, 4, 6)}, tmp_path)


@pytest.mark.parametrize("coords,classes,num,axis,end_axis", [
    (4, 20, 5, 1, 3), (4, 3, 2, 1, 2), (4, 3, 2, 2, 3), (4, 3, 2, 0, 3), (4, 3, 2, 1, 1),
    (6, 2, 3, 1, 3), (4, 0, 2, 1, 3)])
def test_region_yolo_v2(coords, classes, num, axis, end_axis, tmp_path):
    c = num * (coords + classes + 1)
    x = ops1.parameter([2, c, 3, 4], np.float32, name="x")
    y = ops1.region_yolo(x, coords, classes, num, True, [], axis, end_axis)
    check_op([y], [x], {"x": rand(rng, 2, c, 3, 4) * 3}, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask,num,extra", [([0, 1, 2], 9, 0), ([3, 5], 6, 0), ([1], 3, 7)])
def test_region_yolo_v3(mask, num, extra, tmp_path):
    """YOLO v3: sigmoids, one region per mask entry; channels past them are dropped."""
    coords, classes = 4, 5
    c = len(mask) * (coords + classes + 1) + extra
    x = ops1.parameter([1, c, 5, 3], np.float32, name="x")
    y = ops1.region_yolo(x, coords, classes, num, False, mask, 1, 3)
    check_op([y], [x], {"x": rand(rng, 1, c, 5, 3) * 3}, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("softmax", [False, True])
def test_region_yolo_dynamic(softmax, tmp_path):
    x = ops1.parameter([-1, 18, -1, -1], np.float32, name="x")
    y = ops1.region_yolo(x, 4, 4, 2, softmax, [0, 1], 1, 3)
    check_op([y], [x], {"x": rand(rng, 2, 18, 3, 5) * 3}, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("softmax", [False, True])
def test_region_yolo_f16(softmax, tmp_path):
    x = ops1.parameter([1, 18, 3, 4], np.float16, name="x")
    y = ops1.region_yolo(x, 4, 4, 2, softmax, [0, 1], 1, 3)
    feed = (rng.standard_normal((1, 18, 3, 4)) * 3).astype(np.float16)
    check_op([y], [x], {"x": feed}, tmp_path, rtol=2e-3, atol=2e-3)
