"""DetectionOutput-1/8 against OpenVINO: corner and centre-size codes, shared and per-class
boxes, variances in the priors or in the target, normalised or pixel priors, top_k and
keep_top_k, clipping before and after NMS, Caffe and MXNet label styles, per-image priors,
and the RefineDet inputs 4 and 5. Compared exactly, the -1 marker after the last detection
included. Read as ``org.openvinotoolkit`` DetectionOutput, run on NumPy and JAX, written back,
and the ONNX copy run by OpenVINO's ONNX frontend (ONNX Runtime knows no such op)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from opcheck import check_op

rng = np.random.default_rng(29)

B, P, C = 2, 12, 4


def _priors(n_sets, normalized, encoded, n=P):
    xy = rng.random((n_sets, n, 2)) * 0.6
    wh = rng.random((n_sets, n, 2)) * 0.3 + 0.1
    box = np.concatenate([xy, xy + wh], -1)
    if not normalized:
        box = np.concatenate([np.zeros((n_sets, n, 1)), box * [60, 40, 60, 40]], -1)
    rows = [box.reshape(n_sets, -1)]
    if not encoded:
        var = np.tile([0.1, 0.1, 0.2, 0.2], (n_sets, n))
        if not normalized:
            var = np.concatenate([var, np.zeros((n_sets, n))], -1)
        rows.append(var)
    return np.stack(rows, 1).astype(np.float32)


def _scores(n_cls, n=P, batch=B):
    return rng.random((batch, n * n_cls)).astype(np.float32)


def _model(version, attrs, feeds, arm=False):
    ops = importlib.import_module(f"openvino.opset{version}")
    params = [ops.parameter(list(v.shape), np.float32, name=k) for k, v in feeds.items()]
    extra = params[3:] if arm else []
    y = ops.detection_output(*params[:3], attrs, *extra)
    return y, params


BASE = {"nms_threshold": 0.45, "confidence_threshold": 0.2, "keep_top_k": [10], "top_k": 8,
        "background_label_id": 0, "code_type": "caffe.PriorBoxParameter.CENTER_SIZE",
        "share_location": True, "variance_encoded_in_target": False, "normalized": True}

CASES = [
    {},
    {"code_type": "caffe.PriorBoxParameter.CORNER"},
    {"share_location": False},
    {"share_location": False, "background_label_id": -1, "code_type":
     "caffe.PriorBoxParameter.CORNER"},
    {"variance_encoded_in_target": True},
    {"keep_top_k": [-1], "top_k": -1},
    {"keep_top_k": [-1], "top_k": 5},
    {"keep_top_k": [3]},
    {"clip_before_nms": True, "clip_after_nms": True},
    {"clip_after_nms": True, "background_label_id": 2},
    {"decrease_label_id": True},
    {"decrease_label_id": True, "share_location": False, "top_k": 6},
    {"normalized": False, "input_width": 60, "input_height": 40},
    {"confidence_threshold": 0.9, "nms_threshold": 0.1},
    {"confidence_threshold": 0.999},
]


def _feeds(attrs, n_sets=1, arm=False):
    share, n_cls = attrs["share_location"], C
    n_loc = 1 if share else n_cls
    feeds = {"loc": (rng.standard_normal((B, P * n_loc * 4)) * 0.5).astype(np.float32),
             "conf": _scores(n_cls),
             "priors": _priors(n_sets, attrs.get("normalized", True),
                               attrs["variance_encoded_in_target"])}
    if arm:
        feeds["arm_conf"] = _scores(2)
        feeds["arm_loc"] = (rng.standard_normal((B, P * n_loc * 4)) * 0.3).astype(np.float32)
    return feeds


# each run compiles the JAX rule anew (~4 s): every case on version 8, a few on version 1
@pytest.mark.parametrize("version,case", [(8, c) for c in range(len(CASES))] +
                         [(1, c) for c in (0, 2, 10)])
def test_detection_output(version, case, tmp_path):
    attrs = {**BASE, **CASES[case]}
    if version == 1:
        attrs["num_classes"] = C
    feeds = _feeds(attrs)
    y, params = _model(version, attrs, feeds)
    check_op([y], params, feeds, tmp_path, rtol=1e-5, atol=1e-6, onnx_runner="openvino")


def test_detection_output_priors_per_image(tmp_path):
    attrs = dict(BASE)
    feeds = _feeds(attrs, n_sets=B)
    y, params = _model(8, attrs, feeds)
    check_op([y], params, feeds, tmp_path, rtol=1e-5, atol=1e-6, onnx_runner="openvino")


@pytest.mark.parametrize("extra", [{}, {"objectness_score": 0.4},
                                   {"objectness_score": 0.6, "share_location": False},
                                   {"objectness_score": 0.3, "clip_before_nms": True}])
def test_detection_output_arm(extra, tmp_path):
    attrs = {**BASE, **extra}
    feeds = _feeds(attrs, arm=True)
    y, params = _model(8, attrs, feeds, arm=True)
    check_op([y], params, feeds, tmp_path, rtol=1e-5, atol=1e-6, onnx_runner="openvino")


@pytest.mark.parametrize("case", [0, 2, 12])
def test_detection_output_f16(case, tmp_path):
    import openvino.opset8 as ops8

    attrs = {**BASE, **CASES[case]}
    feeds = {k: v.astype(np.float16) for k, v in _feeds(attrs).items()}
    params = [ops8.parameter(list(v.shape), np.float16, name=k) for k, v in feeds.items()]
    y = ops8.detection_output(*params, attrs)
    check_op([y], params, feeds, tmp_path, rtol=2e-3, atol=2e-3, onnx_runner="openvino")
