"""Convolution, GroupConvolution, ConvolutionBackpropData, GroupConvolutionBackpropData,
MaxPool-1/8/14 and AvgPool-1/14 against OpenVINO: padding modes, strides, dilations, rounding
types, read by itergraph, written back to IR and to ONNX (`opcheck.check_op`)."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset8 as ops8
import openvino.opset14 as ops14
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(5)
TOL = {"rtol": 1e-4, "atol": 1e-4}
PADS = [  # (pads_begin, pads_end, auto_pad)
    ([0, 0], [0, 0], "explicit"), ([1, 2], [2, 0], "explicit"), ([0, 0], [0, 0], "valid"),
    ([0, 0], [0, 0], "same_upper"), ([0, 0], [0, 0], "same_lower")]


@pytest.mark.parametrize("pads", PADS)
@pytest.mark.parametrize("strides,dilations", [([1, 1], [1, 1]), ([2, 3], [1, 1]),
                                               ([1, 2], [2, 1])])
def test_convolution(pads, strides, dilations, tmp_path):
    x = ops1.parameter([2, 3, 9, 8], np.float32, name="x")
    w = ops1.constant(rand(rng, 4, 3, 3, 2))
    c = ops1.convolution(x, w, strides, pads[0], pads[1], dilations, pads[2])
    check_op([c], [x], {"x": rand(rng, 2, 3, 9, 8)}, tmp_path, **TOL)


@pytest.mark.parametrize("rank", [1, 3])
def test_convolution_1d_3d(rank, tmp_path):
    sp = [7, 6, 5][:rank]
    x = ops1.parameter([1, 2, *sp], np.float32, name="x")
    w = ops1.constant(rand(rng, 3, 2, *[2] * rank))
    c = ops1.convolution(x, w, [2] * rank, [1] * rank, [0] * rank, [1] * rank)
    check_op([c], [x], {"x": rand(rng, 1, 2, *sp)}, tmp_path, **TOL)


def test_convolution_runtime_weights(tmp_path):
    x = ops1.parameter([1, 2, 6, 6], np.float32, name="x")
    w = ops1.parameter([3, 2, 3, 3], np.float32, name="w")
    c = ops1.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    check_op([c], [x, w], {"x": rand(rng, 1, 2, 6, 6), "w": rand(rng, 3, 2, 3, 3)}, tmp_path,
             **TOL)


@pytest.mark.parametrize("groups,cin,cout", [(2, 4, 6), (4, 4, 4)])
@pytest.mark.parametrize("pads", PADS[1:4])
def test_group_convolution(groups, cin, cout, pads, tmp_path):
    x = ops1.parameter([1, cin, 7, 7], np.float32, name="x")
    w = ops1.constant(rand(rng, groups, cout // groups, cin // groups, 3, 3))
    c = ops1.group_convolution(x, w, [2, 1], pads[0], pads[1], [1, 2], pads[2])
    check_op([c], [x], {"x": rand(rng, 1, cin, 7, 7)}, tmp_path, **TOL)


@pytest.mark.parametrize("pads", [([0, 0], [0, 0], "explicit"), ([1, 0], [0, 1], "explicit"),
                                  ([0, 0], [0, 0], "valid"), ([0, 0], [0, 0], "same_upper"),
                                  ([0, 0], [0, 0], "same_lower")])
@pytest.mark.parametrize("strides,dilations,out_pad", [([1, 1], [1, 1], [0, 0]),
                                                       ([2, 2], [1, 1], [1, 0]),
                                                       ([2, 3], [2, 1], [0, 1])])
def test_convolution_backprop_data(pads, strides, dilations, out_pad, tmp_path):
    x = ops1.parameter([1, 3, 5, 4], np.float32, name="x")
    w = ops1.constant(rand(rng, 3, 2, 3, 3))
    c = ops1.convolution_backprop_data(x, w, strides, None, pads[0], pads[1], dilations,
                                       pads[2], out_pad)
    check_op([c], [x], {"x": rand(rng, 1, 3, 5, 4)}, tmp_path, **TOL)


@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper", "same_lower"])
@pytest.mark.parametrize("out_shape", [[10, 9], [11, 8]])
def test_convolution_backprop_data_output_shape(auto_pad, out_shape, tmp_path):
    x = ops1.parameter([1, 2, 5, 4], np.float32, name="x")
    w = ops1.constant(rand(rng, 2, 3, 3, 3))
    c = ops1.convolution_backprop_data(x, w, [2, 2], output_shape=ops1.constant(
        np.array(out_shape, np.int64)), auto_pad=auto_pad)
    check_op([c], [x], {"x": rand(rng, 1, 2, 5, 4)}, tmp_path, **TOL)


@pytest.mark.parametrize("strides", [[1, 1], [2, 2]])
def test_group_convolution_backprop_data(strides, tmp_path):
    x = ops1.parameter([1, 4, 5, 5], np.float32, name="x")
    w = ops1.constant(rand(rng, 2, 2, 3, 3, 3))
    c = ops1.group_convolution_backprop_data(x, w, strides, pads_begin=[1, 0], pads_end=[0, 1])
    check_op([c], [x], {"x": rand(rng, 1, 4, 5, 5)}, tmp_path, **TOL)


POOL_PADS = [([0, 0], [0, 0], "explicit"), ([1, 0], [1, 1], "explicit"),
             ([0, 0], [0, 0], "valid"), ([0, 0], [0, 0], "same_upper"),
             ([0, 0], [0, 0], "same_lower")]


@pytest.mark.parametrize("pads", POOL_PADS)
@pytest.mark.parametrize("rounding", ["floor", "ceil"])
@pytest.mark.parametrize("strides,kernel", [([2, 2], [3, 3]), ([1, 3], [2, 2])])
def test_max_pool1(pads, rounding, strides, kernel, tmp_path):
    x = ops1.parameter([1, 2, 8, 9], np.float32, name="x")
    p = ops1.max_pool(x, strides, pads[0], pads[1], kernel, rounding, pads[2])
    check_op([p], [x], {"x": rand(rng, 1, 2, 8, 9)}, tmp_path)


@pytest.mark.parametrize("pads", POOL_PADS[:3])
@pytest.mark.parametrize("rounding", ["floor", "ceil"])
@pytest.mark.parametrize("axis", [0, 2])
@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_max_pool8_indices(pads, rounding, axis, index_type, tmp_path):
    x = ops8.parameter([2, 3, 7, 8], np.float32, name="x")
    p = ops8.max_pool(x, [2, 2], [1, 2], pads[0], pads[1], [2, 2], rounding, pads[2],
                      index_type, axis)
    # ONNX Runtime's indices count over the whole input: only axis 0 matches them
    check_op([p.output(0), p.output(1)], [x], {"x": rand(rng, 2, 3, 7, 8)}, tmp_path,
             to_onnx=axis == 0 and index_type == "i64")


@pytest.mark.parametrize("pads", POOL_PADS[:2])
@pytest.mark.parametrize("rounding", ["floor", "ceil", "ceil_torch"])
def test_max_pool14(pads, rounding, tmp_path):
    x = ops14.parameter([1, 2, 8, 7], np.float32, name="x")
    p = ops14.max_pool(x, [3, 2], [1, 1], pads[0], pads[1], [3, 2], rounding, pads[2])
    check_op([p.output(0)], [x], {"x": rand(rng, 1, 2, 8, 7)}, tmp_path)


@pytest.mark.parametrize("pads", POOL_PADS)
@pytest.mark.parametrize("rounding", ["floor", "ceil"])
@pytest.mark.parametrize("exclude", [True, False])
def test_avg_pool1(pads, rounding, exclude, tmp_path):
    x = ops1.parameter([1, 2, 8, 9], np.float32, name="x")
    p = ops1.avg_pool(x, [2, 2], pads[0], pads[1], [3, 3], exclude, rounding, pads[2])
    check_op([p], [x], {"x": rand(rng, 1, 2, 8, 9)}, tmp_path, **TOL)


@pytest.mark.parametrize("pads", POOL_PADS[:2])
@pytest.mark.parametrize("rounding", ["floor", "ceil", "ceil_torch"])
@pytest.mark.parametrize("exclude", [True, False])
def test_avg_pool14(pads, rounding, exclude, tmp_path):
    x = ops14.parameter([1, 2, 8, 7], np.float32, name="x")
    p = ops14.avg_pool(x, [3, 2], pads[0], pads[1], [3, 2], exclude, rounding, pads[2])
    check_op([p], [x], {"x": rand(rng, 1, 2, 8, 7)}, tmp_path, **TOL)
