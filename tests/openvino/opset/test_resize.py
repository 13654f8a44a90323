"""Interpolate-1/4/11 against OpenVINO: modes, coordinate transformations, nearest modes,
sizes and scales, axes, pads, antialias; read, written back to IR and to ONNX."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset10 as ops4
import openvino.opset11 as ops11
import pytest
from opcheck import check_op, rand
from ov_helpers import save

from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(37)
TOL = {"rtol": 1e-4, "atol": 1e-4}
CTMS = ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"]


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "cubic"])
@pytest.mark.parametrize("target", [[7, 10], [3, 2]])
def test_interpolate11_sizes(ctm, mode, target, tmp_path):
    x = ops11.parameter([1, 2, 5, 4], np.float32, name="x")
    y = ops11.interpolate(x, ops11.constant(np.array(target, np.int64)), mode, "sizes",
                          coordinate_transformation_mode=ctm,
                          axes=ops11.constant(np.array([2, 3], np.int64)))
    check_op([y], [x], {"x": rand(rng, 1, 2, 5, 4)}, tmp_path, **TOL)


@pytest.mark.parametrize("nearest", ["round_prefer_floor", "round_prefer_ceil", "floor",
                                     "ceil"])
@pytest.mark.parametrize("scales", [[2.0, 1.5], [0.5, 0.75]])
def test_interpolate11_scales_nearest(nearest, scales, tmp_path):
    x = ops11.parameter([1, 2, 6, 8], np.float32, name="x")
    y = ops11.interpolate(x, ops11.constant(np.array(scales, np.float32)), "nearest", "scales",
                          coordinate_transformation_mode="asymmetric", nearest_mode=nearest,
                          axes=ops11.constant(np.array([2, 3], np.int64)))
    check_op([y], [x], {"x": rand(rng, 1, 2, 6, 8)}, tmp_path, **TOL)


@pytest.mark.parametrize("mode,ctm", [("linear", "half_pixel"), ("cubic", "half_pixel"),
                                      ("nearest", "tf_half_pixel_for_nn")])
def test_interpolate11_unlike_onnx_refused(mode, ctm, tmp_path):
    """Antialiased filters differ from ONNX Resize's; tf_half_pixel_for_nn left ONNX."""
    x = ops11.parameter([1, 1, 12, 10], np.float32, name="x")
    y = ops11.interpolate(x, ops11.constant(np.array([5, 4], np.int64)), mode, "sizes",
                          antialias=mode != "nearest", coordinate_transformation_mode=ctm,
                          axes=ops11.constant(np.array([2, 3], np.int64)))
    path = save(ov.Model([y], [x]), tmp_path)
    with pytest.raises(UnsupportedError, match="Interpolate"):
        read(path)


@pytest.mark.parametrize("calc", ["sizes", "scales"])
def test_interpolate4_pads(calc, tmp_path):
    x = ops4.parameter([1, 2, 4, 5], np.float32, name="x")
    y = ops4.interpolate(x, ops4.constant(np.array([9, 14], np.int64)),
                         ops4.constant(np.array([1.5, 2.0], np.float32)), "linear_onnx", calc,
                         pads_begin=[0, 0, 1, 0], pads_end=[0, 0, 1, 2],
                         axes=ops4.constant(np.array([2, 3], np.int64)))
    check_op([y], [x], {"x": rand(rng, 1, 2, 4, 5)}, tmp_path, **TOL)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("align", [False, True])
def test_interpolate1(mode, align, tmp_path):
    x = ops1.parameter([1, 2, 4, 5], np.float32, name="x")
    y = ops1.interpolate(x, ops1.constant(np.array([8, 7], np.int64)),
                         {"axes": [2, 3], "mode": mode, "align_corners": align,
                          "antialias": False, "pads_begin": [0], "pads_end": [0]})
    check_op([y], [x], {"x": rand(rng, 1, 2, 4, 5)}, tmp_path, **TOL)
