"""Proposal-1/4 against OpenVINO: Caffe and TensorFlow anchors, clipping before and after NMS,
normalised output, delta scales, image_shape with one or two scales, batches; the -1 marker
after the last proposal of an image compared exactly. Read as ``org.openvinotoolkit``
Proposal, run on NumPy and JAX, written back. OpenVINO's ONNX frontend has no Proposal, so
no ONNX leg."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from opcheck import check_op

rng = np.random.default_rng(31)

U = np.uint32  # the Python API wants unsigned counts
BASE = {"base_size": U(8), "pre_nms_topn": U(40), "post_nms_topn": U(12), "nms_thresh": 0.6,
        "feat_stride": U(8), "min_size": U(4), "ratio": [0.5, 1.0, 2.0], "scale": [1.0, 2.0],
        "clip_before_nms": True, "clip_after_nms": False, "normalize": False,
        "box_size_scale": 1.0, "box_coordinate_scale": 1.0, "framework": ""}

CASES = [
    {},
    {"framework": "tensorflow"},
    {"clip_before_nms": False, "clip_after_nms": True},
    {"normalize": True, "clip_after_nms": True},
    {"box_size_scale": 2.0, "box_coordinate_scale": 4.0},
    {"nms_thresh": 0.3, "post_nms_topn": U(30)},
    {"pre_nms_topn": U(200), "post_nms_topn": U(100), "nms_thresh": 0.5},
    {"framework": "tensorflow", "nms_thresh": 0.4, "normalize": True},
    {"framework": "tensorflow", "clip_before_nms": False, "clip_after_nms": True},
]


def _valid_scores(ops, rois, scores):
    """`scores` where a proposal was output, else 0: the CPU plugin leaves the scores after
    the last proposal of an image uninitialised (the specification: 0), so they are masked
    (a row is empty when its image index is -1 or its box is all 0)."""
    first = ops.squeeze(ops.split(rois, 1, 5).output(0), [1])
    box = ops.reduce_max(ops.abs(rois), [1], False)
    valid = ops.logical_and(ops.not_equal(first, np.float32(-1)),
                            ops.greater(box, np.float32(0)))
    return ops.select(valid, scores, np.float32(0))


# each run compiles the JAX rule anew (~3 s): every case once, the two-scale image_shape
# and version 1 (the first output only) on a few
RUNS = [(4, case, [48, 64, 1]) for case in range(len(CASES))] + \
    [(4, case, [48, 64, 1.5, 0.5]) for case in (0, 1, 2, 8)] + \
    [(1, case, [48, 64, 1]) for case in (0, 1, 3)]


@pytest.mark.parametrize("version,case,info", RUNS)
def test_proposal(version, case, info, tmp_path):
    ops = importlib.import_module(f"openvino.opset{version}")
    attrs = {**BASE, **CASES[case]}
    a = len(attrs["ratio"]) * len(attrs["scale"])  # anchors per cell
    b, h, w = 2, 6, 8
    probs = ops.parameter([b, 2 * a, h, w], np.float32, name="probs")
    deltas = ops.parameter([b, 4 * a, h, w], np.float32, name="deltas")
    shape = ops.parameter([len(info)], np.float32, name="info")
    y = ops.proposal(probs, deltas, shape, attrs)
    outs = [y.output(0)] if version == 1 else \
        [y.output(0), _valid_scores(ops, y.output(0), y.output(1))]
    feeds = {"probs": rng.random((b, 2 * a, h, w)).astype(np.float32),
             "deltas": (rng.standard_normal((b, 4 * a, h, w)) * 0.3).astype(np.float32),
             "info": np.array(info, np.float32)}
    check_op(outs, [probs, deltas, shape], feeds, tmp_path, rtol=1e-5, atol=1e-4,
             to_onnx=False)


def test_proposal_scores_after_the_last_are_zero(tmp_path):
    """Fewer proposals than post_nms_topn: rois and scores past them are 0 (the image index of
    the first row -1), as the specification says."""
    import openvino as ov
    import openvino.opset4 as ops4
    from ov_helpers import run_ov, save

    import itergraph as ig

    attrs = {**BASE, "post_nms_topn": U(60), "nms_thresh": 0.2}
    probs = ops4.parameter([1, 12, 3, 4], np.float32, name="probs")
    deltas = ops4.parameter([1, 24, 3, 4], np.float32, name="deltas")
    shape = ops4.parameter([3], np.float32, name="info")
    y = ops4.proposal(probs, deltas, shape, attrs)
    feeds = {"probs": rng.random((1, 12, 3, 4)).astype(np.float32),
             "deltas": (rng.standard_normal((1, 24, 3, 4)) * 0.3).astype(np.float32),
             "info": np.array([40, 40, 1], np.float32)}
    model = ov.Model(list(y.outputs()), [probs, deltas, shape])
    want = run_ov(model, feeds)
    rois, scores = ig.load(save(model, tmp_path)).run(feeds).values()
    n = int(np.argmax(want[0][:, 0] == -1))
    assert 0 < n < 60
    np.testing.assert_allclose(rois, want[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(scores[:n], want[1][:n], rtol=1e-5, atol=1e-6)
    assert not scores[n:].any()
