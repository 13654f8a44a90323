"""ROIAlign-3/9 and ROIPooling-2 against OpenVINO: avg and max, aligned modes, sampling
ratios, spatial scales; read, written back to IR and to ONNX."""

from __future__ import annotations

import importlib

import numpy as np
import openvino as ov
import pytest
from opcheck import check_op, rand
from ov_helpers import save

from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(23)


def _rois(n, size, scale):
    xy = rng.random((n, 2)) * size * 0.6 / scale
    wh = (rng.random((n, 2)) * 0.4 + 0.1) * size / scale
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


@pytest.mark.parametrize("version,aligned", [(3, None), (9, "asymmetric")])
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


@pytest.mark.parametrize("mode,aligned", [("max", "asymmetric"), ("avg", "half_pixel")])
def test_roi_align_unlike_onnx_refused(mode, aligned, tmp_path):
    ops = importlib.import_module("openvino.opset9")
    x = ops.parameter([1, 1, 4, 4], np.float32, name="x")
    r = ops.parameter([1, 4], np.float32, name="r")
    bi = ops.parameter([1], np.int32, name="bi")
    a = ops.roi_align(x, r, bi, 2, 2, 1, 1.0, mode, aligned_mode=aligned)
    path = save(ov.Model([a], [x, r, bi]), tmp_path)
    with pytest.raises(UnsupportedError, match="ROIAlign"):
        read(path)
