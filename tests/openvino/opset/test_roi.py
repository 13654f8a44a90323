"""ROIAlign-3/9 and ROIPooling-2 against OpenVINO: avg in every aligned mode (max is
refused), sampling ratios, spatial scales; read, written back to IR and to ONNX. ONNX
RoiAlign written to IR is checked against ONNX Runtime."""

from __future__ import annotations

import importlib

import numpy as np
import onnxruntime as ort
import openvino as ov
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from opcheck import check_op, rand
from ov_helpers import run_ov, save

import itergraph as ig
from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(23)


def _rois(n, size, scale):
    xy = rng.random((n, 2)) * size * 0.6 / scale
    wh = (rng.random((n, 2)) * 0.4 + 0.1) * size / scale
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


@pytest.mark.parametrize("version,aligned", [(3, None), (9, "asymmetric"),
                                             (9, "half_pixel_for_nn"), (9, "half_pixel")])
@pytest.mark.parametrize("sampling,scale", [(2, 1.0), (0, 0.5), (1, 0.25)])
def test_roi_align(version, aligned, sampling, scale, tmp_path, mode="avg"):
    ops = importlib.import_module(f"openvino.opset{version}")
    x = ops.parameter([2, 3, 10, 12], np.float32, name="x")
    r = ops.parameter([4, 4], np.float32, name="r")
    bi = ops.parameter([4], np.int32, name="bi")
    kw = {} if aligned is None else {"aligned_mode": aligned}
    a = ops.roi_align(x, r, bi, 3, 2, sampling, scale, mode, **kw)
    feeds = {"x": rand(rng, 2, 3, 10, 12), "r": _rois(4, 10, scale),
             "bi": np.array([0, 1, 1, 0], np.int32)}
    check_op([a], [x, r, bi], feeds, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize("size", [[2, 2], [3, 2]])
def test_roi_pooling(scale, size, tmp_path):
    ops = importlib.import_module("openvino.opset2")
    x = ops.parameter([2, 3, 9, 8], np.float32, name="x")
    r = ops.parameter([3, 5], np.float32, name="r")
    p = ops.roi_pooling(x, r, output_size=size, spatial_scale=scale)
    boxes = _rois(3, 8, scale)
    feeds = {"x": rand(rng, 2, 3, 9, 8),
             "r": np.concatenate([np.array([[0], [1], [1]], np.float32), boxes], 1)}
    check_op([p], [x, r], feeds, tmp_path)


@pytest.mark.parametrize("mode,aligned", [("max", "asymmetric"), ("max", "half_pixel")])
def test_roi_align_unlike_onnx_refused(mode, aligned, tmp_path):
    ops = importlib.import_module("openvino.opset9")
    x = ops.parameter([1, 1, 4, 4], np.float32, name="x")
    r = ops.parameter([1, 4], np.float32, name="r")
    bi = ops.parameter([1], np.int32, name="bi")
    a = ops.roi_align(x, r, bi, 2, 2, 1, 1.0, mode, aligned_mode=aligned)
    path = save(ov.Model([a], [x, r, bi]), tmp_path)
    with pytest.raises(UnsupportedError, match="ROIAlign"):
        read(path)


@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling", [0, 2])
def test_onnx_roi_align_written_to_ir(ctm, sampling, tmp_path):
    """ONNX RoiAlign -> IR -> OpenVINO CPU equals ONNX Runtime on the ONNX file; max mode,
    which OpenVINO computes otherwise, is refused by the writer."""
    x = rand(rng, 1, 2, 10, 10)
    rois = _rois(3, 10, 0.7)
    bi = np.array([0, 0, 0], np.int64)

    def model(mode):
        n = h.make_node("RoiAlign", ["X", "r", "b"], ["Y"], output_height=3, output_width=4,
                        sampling_ratio=sampling, spatial_scale=0.7, mode=mode,
                        coordinate_transformation_mode=ctm)
        g = h.make_graph([n], "g", [h.make_tensor_value_info("X", T.FLOAT, x.shape),
                                    h.make_tensor_value_info("r", T.FLOAT, rois.shape),
                                    h.make_tensor_value_info("b", T.INT64, bi.shape)],
                         [h.make_tensor_value_info("Y", T.FLOAT, None)])
        return h.make_model(g, opset_imports=[h.make_opsetid("", 16)])

    feeds = {"X": x, "r": rois, "b": bi}
    m = model("avg")
    want = ort.InferenceSession(m.SerializeToString()).run(None, feeds)[0]
    ig.load(m).save(tmp_path / "m.xml")
    np.testing.assert_allclose(run_ov(tmp_path / "m.xml", feeds)[0], want, rtol=1e-4, atol=1e-5)
    with pytest.raises(UnsupportedError, match="max"):
        ig.load(model("max")).save(tmp_path / "max.xml")


@pytest.mark.parametrize("aligned", ["half_pixel", "half_pixel_for_nn"])
@pytest.mark.parametrize("sampling", [0, 3])
def test_roi_align_half_pixel_boxes_across_borders(aligned, sampling, tmp_path):
    """ROIAlign-9 avg with the half-pixel modes on boxes that leave the image, thin boxes
    and boxes smaller than a pixel, the adaptive sample count (``sampling_ratio=0``) among
    them; ONNX Runtime runs the ONNX copy to OpenVINO's outputs. (A box of zero width or
    height with ``sampling_ratio=0`` takes no samples: OpenVINO gives NaN, ONNX 0.)"""
    ops = importlib.import_module("openvino.opset9")
    x = ops.parameter([2, 3, 10, 12], np.float32, name="x")
    r = ops.parameter([6, 4], np.float32, name="r")
    bi = ops.parameter([6], np.int32, name="bi")
    a = ops.roi_align(x, r, bi, 3, 4, sampling, 0.5, "avg", aligned_mode=aligned)
    rois = np.array([[-6, -4, 8, 6], [18, 14, 30, 26], [3, 3, 3.4, 9], [5, 5, 5.6, 5.3],
                     [0, 0, 23.9, 19.9], [-1, 7, 4, 30]], np.float32)
    feeds = {"x": rand(rng, 2, 3, 10, 12), "r": rois,
             "bi": np.array([0, 1, 1, 0, 1, 0], np.int32)}
    check_op([a], [x, r, bi], feeds, tmp_path, rtol=1e-4, atol=1e-4)
