"""ShuffleChannels-3, SpaceToBatch-2, BatchToSpace-2, GRN-1 and GroupNormalization-12 against
OpenVINO; read, written back to IR and to ONNX."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset2 as ops2
import openvino.opset3 as ops3
import openvino.opset12 as ops12
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(41)


def _i(v):
    return ops2.constant(np.array(v, np.int64))


@pytest.mark.parametrize("axis,group", [(1, 2), (1, 3), (-1, 2), (2, 4)])
def test_shuffle_channels(axis, group, tmp_path):
    x = ops3.parameter([2, 6, 4, 4], np.float32, name="x")
    y = ops3.shuffle_channels(x, axis, group)
    check_op([y], [x], {"x": rand(rng, 2, 6, 4, 4)}, tmp_path)


@pytest.mark.parametrize("block,lo,hi", [([1, 1, 3, 2], [0, 0, 0, 0], [0, 0, 0, 0]),
                                         ([1, 2, 3, 1], [0, 0, 1, 0], [0, 0, 2, 1])])
def test_space_to_batch_and_back(block, lo, hi, tmp_path):
    x = ops2.parameter([2, 4, 3, 4], np.float32, name="x")
    s = ops2.space_to_batch(x, _i(block), _i(lo), _i(hi))
    back = ops2.batch_to_space(s, _i(block), _i(lo), _i(hi))
    check_op([s, back], [x], {"x": rand(rng, 2, 4, 3, 4)}, tmp_path)


def test_batch_to_space_crops(tmp_path):
    x = ops2.parameter([8, 2, 3, 2], np.float32, name="x")
    y = ops2.batch_to_space(x, _i([1, 1, 2, 4]), _i([0, 0, 1, 2]), _i([0, 0, 0, 3]))
    check_op([y], [x], {"x": rand(rng, 8, 2, 3, 2)}, tmp_path)


@pytest.mark.parametrize("bias", [1e-6, 0.5])
def test_grn(bias, tmp_path):
    x = ops1.parameter([2, 5, 3, 3], np.float32, name="x")
    y = ops1.grn(x, bias)
    check_op([y], [x], {"x": rand(rng, 2, 5, 3, 3)}, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_normalization(groups, tmp_path):
    x = ops12.parameter([2, 4, 3, 5], np.float32, name="x")
    y = ops12.group_normalization(x, ops12.constant(rand(rng, 4)), ops12.constant(rand(rng, 4)),
                                  groups, 1e-5)
    check_op([y], [x], {"x": rand(rng, 2, 4, 3, 5)}, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("pad", ["valid", "same_upper", "same_lower"])
@pytest.mark.parametrize("sizes,strides,rates", [([2, 2], [1, 1], [1, 1]),
                                                 ([3, 2], [2, 3], [1, 2])])
def test_extract_image_patches(pad, sizes, strides, rates, tmp_path):
    x = ops3.parameter([2, 3, 7, 8], np.float32, name="x")
    y = ops3.extract_image_patches(x, sizes, strides, rates, pad)
    check_op([y], [x], {"x": rand(rng, 2, 3, 7, 8)}, tmp_path)
