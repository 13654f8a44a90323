"""MatrixNms-8, MulticlassNms-8/9, NMSRotated-13 and GenerateProposals-9 against OpenVINO: read
as ``org.openvinotoolkit`` ops, run on NumPy and JAX (which falls back to NumPy for these ops:
their row counts depend on the data), written back. GenerateProposals with anchors that are
the same at every location is also written to ONNX as the ``GenerateProposals`` op OpenVINO's
ONNX frontend reads, and run by OpenVINO; no ONNX reader knows the NMS ops."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset8 as ops8
import openvino.opset9 as ops9
import openvino.opset13 as ops13
import pytest
from opcheck import check_op
from ov_helpers import run_ov, save

import itergraph as ig
from itergraph.backends.jax import explain
from itergraph.errors import ModelError, UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(59)


def _boxes(*lead, lo=0.0, hi=1.0, size=(0.1, 0.5)):
    xy = rng.uniform(lo, hi, lead + (2,))
    wh = rng.uniform(*size, lead + (2,))
    return np.concatenate([xy, xy + wh], -1).astype(np.float32)


def _params(boxes, scores):
    return (ops8.parameter(list(boxes.shape), np.float32, name="b"),
            ops8.parameter(list(scores.shape), np.float32, name="s"))


VARIANTS = [
    dict(),
    dict(sort_result_type="score", keep_top_k=7),
    dict(sort_result_type="score", sort_result_across_batch=True, nms_top_k=5),
    dict(sort_result_type="classid", sort_result_across_batch=True, background_class=1),
    dict(score_threshold=0.3, keep_top_k=4, output_type="i32"),
    dict(normalized=False, background_class=0),
]


@pytest.mark.parametrize("variant", range(len(VARIANTS)))
@pytest.mark.parametrize("decay", ["linear", "gaussian"])
def test_matrix_nms(variant, decay, tmp_path):
    boxes, scores = _boxes(2, 8), rng.uniform(0, 1, (2, 3, 8)).astype(np.float32)
    if not VARIANTS[variant].get("normalized", True):
        boxes = _boxes(2, 8, hi=20, size=(2, 10))
    b, s = _params(boxes, scores)
    y = ops8.matrix_nms(b, s, decay_function=decay, gaussian_sigma=1.5, post_threshold=0.05,
                        **VARIANTS[variant])
    check_op(y.outputs(), [b, s], {"b": boxes, "s": scores}, tmp_path, to_onnx=False)


def test_matrix_nms_class_order_per_batch(tmp_path):
    """``sort_result_type="classid"`` without ``sort_result_across_batch``: the spec orders each
    batch element's boxes by class; the CPU plugin keeps them in score order (the same rows,
    asserted here as its disagreement)."""
    boxes, scores = _boxes(2, 8), rng.uniform(0, 1, (2, 3, 8)).astype(np.float32)
    b, s = _params(boxes, scores)
    y = ops8.matrix_nms(b, s, sort_result_type="classid", keep_top_k=9)
    model = ov.Model(y.outputs(), [b, s])
    feeds = {"b": boxes, "s": scores}
    want = run_ov(model, feeds)
    g = read(save(model, tmp_path))
    got = list(ig.load(g).run(feeds).values())
    np.testing.assert_array_equal(got[2], want[2])
    start = 0
    for n in got[2]:
        mine, theirs = got[0][start:start + n], want[0][start:start + n]
        order = np.lexsort((np.arange(n), -theirs[:, 1], theirs[:, 0]))
        np.testing.assert_allclose(mine, theirs[order], rtol=1e-6)
        assert np.all(np.diff(mine[:, 0]) >= 0)
        assert np.all(np.diff(theirs[:, 1]) <= 0) and np.any(np.diff(theirs[:, 0]) < 0)
        start += n


def test_matrix_nms_empty_batch(tmp_path):
    """A batch element with no box above the threshold selects nothing, the others still
    select theirs."""
    boxes = _boxes(3, 6)
    scores = rng.uniform(0.5, 1, (3, 2, 6)).astype(np.float32)
    scores[1] = 0.1
    b, s = _params(boxes, scores)
    y = ops8.matrix_nms(b, s, score_threshold=0.3, sort_result_type="score")
    _, want = check_op(y.outputs(), [b, s], {"b": boxes, "s": scores}, tmp_path,
                       to_onnx=False)
    assert want[2][1] == 0 and want[2][0] > 0 and want[2][2] > 0


@pytest.mark.parametrize("variant", range(len(VARIANTS)))
@pytest.mark.parametrize("version,eta", [(8, 1.0), (9, 1.0), (9, 0.6)])
def test_multiclass_nms(variant, version, eta, tmp_path):
    ops = ops8 if version == 8 else ops9
    boxes, scores = _boxes(2, 10), rng.uniform(0, 1, (2, 3, 10)).astype(np.float32)
    if not VARIANTS[variant].get("normalized", True):
        boxes = _boxes(2, 10, hi=20, size=(2, 10))
    b, s = _params(boxes, scores)
    y = ops.multiclass_nms(b, s, iou_threshold=0.6 if eta < 1 else 0.3, nms_eta=eta,
                           **VARIANTS[variant])
    check_op(y.outputs(), [b, s], {"b": boxes, "s": scores}, tmp_path, to_onnx=False)


@pytest.mark.parametrize("variant", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("counts", [(4, 6), (3, 0, 7)])
def test_multiclass_nms_roisnum(variant, counts, tmp_path):
    """Version 9's per-class boxes [C, M, 4] with the boxes of each image counted by
    ``roisnum``; an image with no box selects nothing."""
    m = sum(counts)
    boxes, scores = _boxes(3, m), rng.uniform(0, 1, (3, m)).astype(np.float32)
    b, s = _params(boxes, scores)
    n = ops9.parameter([len(counts)], np.int32, name="n")
    y = ops9.multiclass_nms(b, s, n, iou_threshold=0.4, **VARIANTS[variant])
    feeds = {"b": boxes, "s": scores, "n": np.array(counts, np.int32)}
    check_op(y.outputs(), [b, s, n], feeds, tmp_path, to_onnx=False)


def _rotated(n, m):
    return np.concatenate([rng.uniform(0, 6, (n, m, 2)), rng.uniform(1, 4, (n, m, 2)),
                           rng.uniform(-1.5, 1.5, (n, m, 1))], -1).astype(np.float32)


@pytest.mark.parametrize("clockwise", [True, False])
@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("limit,iou,score,out", [(4, 0.3, 0.2, "i64"), (10, 0.5, 0.0, "i32"),
                                                 (2, 0.1, 0.6, "i64")])
def test_nms_rotated(clockwise, descending, limit, iou, score, out, tmp_path):
    boxes, scores = _rotated(2, 10), rng.uniform(0, 1, (2, 3, 10)).astype(np.float32)
    b = ops13.parameter(list(boxes.shape), np.float32, name="b")
    s = ops13.parameter(list(scores.shape), np.float32, name="s")
    y = ops13.nms_rotated(b, s, np.int64(limit), np.float32(iou), np.float32(score),
                          sort_result_descending=descending, output_type=out,
                          clockwise=clockwise)
    check_op(y.outputs(), [b, s], {"b": boxes, "s": scores}, tmp_path, to_onnx=False)


def test_nms_rotated_overlapping_turned_boxes(tmp_path):
    """The same box turned by small angles overlaps itself more than a shifted one: the
    rotated IoU, not the axis-aligned one, decides."""
    base = np.array([3, 3, 4, 1, 0], np.float32)
    boxes = np.stack([base + [0, 0, 0, 0, a] for a in (0, 0.2, 0.9, 1.57)]
                     + [base + [0.5, 0.5, 0, 0, 0.3]])[None].astype(np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.5]]], np.float32)
    b = ops13.parameter(list(boxes.shape), np.float32, name="b")
    s = ops13.parameter(list(scores.shape), np.float32, name="s")
    y = ops13.nms_rotated(b, s, np.int64(5), np.float32(0.4), np.float32(0.0))
    _, want = check_op(y.outputs(), [b, s], {"b": boxes, "s": scores}, tmp_path,
                       to_onnx=False)
    assert 0 < want[2][0] < 5


def _proposal_inputs(n, a, h, w, info_width, shared=False):
    info = np.array([[40, 50, 1.0, 0.8], [30, 44, 0.5, 1.2]][:n], np.float32)[:, :info_width]
    if shared:
        anchors = np.broadcast_to(_boxes(a, hi=30, size=(3, 15)), (h, w, a, 4)).copy()
    else:
        anchors = _boxes(h, w, a, hi=40, size=(2, 15))
    deltas = (rng.standard_normal((n, a * 4, h, w)) * 0.3).astype(np.float32)
    scores = rng.uniform(0, 1, (n, a, h, w)).astype(np.float32)
    return info, anchors, deltas, scores


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("info_width", [3, 4])
@pytest.mark.parametrize("pre,post,thresh,min_size", [(40, 12, 0.5, 2.0), (100, 100, 0.7, 0.0),
                                                      (8, 20, 0.3, 5.0)])
def test_generate_proposals(normalized, info_width, pre, post, thresh, min_size, tmp_path):
    info, anchors, deltas, scores = _proposal_inputs(2, 3, 4, 5, info_width)
    names = ("i", "a", "d", "s")
    params = [ops9.parameter(list(v.shape), np.float32, name=k)
              for k, v in zip(names, (info, anchors, deltas, scores))]
    y = ops9.generate_proposals(*params, min_size, thresh, pre, post, normalized=normalized)
    feeds = dict(zip(names, (info, anchors, deltas, scores)))
    check_op(y.outputs(), params, feeds, tmp_path, rtol=1e-5, atol=1e-4, to_onnx=False)


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("num_type", ["i64", "i32"])
def test_generate_proposals_shared_anchors_to_onnx(normalized, num_type, tmp_path):
    """Constant anchors equal at every location become ``[A, 4]``: the ONNX copy holds the
    ``org.openvinotoolkit`` GenerateProposals of OpenVINO's ONNX frontend and runs there."""
    info, anchors, deltas, scores = _proposal_inputs(2, 3, 4, 5, 3, shared=True)
    names = ("i", "d", "s")
    params = [ops9.parameter(list(v.shape), np.float32, name=k)
              for k, v in zip(names, (info, deltas, scores))]
    y = ops9.generate_proposals(params[0], ops9.constant(anchors), params[1], params[2], 1.0,
                                0.6, 30, 10, normalized=normalized, roi_num_type=num_type)
    feeds = dict(zip(names, (info, deltas, scores)))
    g, _ = check_op(y.outputs(), params, feeds, tmp_path, rtol=1e-5, atol=1e-4,
                    onnx_runner="openvino")
    node = next(n for n in g.nodes if n.op_type == "GenerateProposals")
    assert node.inputs[3].const.shape == (3, 4)


def test_nms_ops_fall_back_on_jax(tmp_path):
    boxes, scores = _boxes(1, 5), rng.uniform(0, 1, (1, 2, 5)).astype(np.float32)
    b, s = _params(boxes, scores)
    outs = ops8.matrix_nms(b, s).outputs() + ops9.multiclass_nms(b, s).outputs()
    g = read(save(ov.Model(outs, [b, s]), tmp_path))
    records = explain(g, {"b": boxes, "s": scores})
    fallback = [str(r.element) for r in records if not r.compiles]
    assert len(fallback) == 2, fallback


def test_generate_proposals_nms_eta_refused(tmp_path):
    """OpenVINO itself accepts only ``nms_eta=1`` (no adaptive NMS); so does the reader."""
    info, anchors, deltas, scores = _proposal_inputs(1, 2, 3, 3, 3)
    params = [ops9.parameter(list(v.shape), np.float32) for v in (info, anchors, deltas, scores)]
    with pytest.raises(RuntimeError, match="nms_eta"):
        ops9.generate_proposals(*params, 1.0, 0.5, 10, 5, nms_eta=0.5)
    y = ops9.generate_proposals(*params, 1.0, 0.5, 10, 5)
    path = save(ov.Model(y.outputs(), params), tmp_path)
    path.write_text(path.read_text().replace('nms_eta="1"', 'nms_eta="0.5"'))
    with pytest.raises(UnsupportedError, match="nms_eta"):
        read(path)


def test_matrix_nms_bad_decay_is_refused(tmp_path):
    boxes, scores = _boxes(1, 5), rng.uniform(0, 1, (1, 2, 5)).astype(np.float32)
    b, s = _params(boxes, scores)
    path = save(ov.Model(ops8.matrix_nms(b, s).outputs(), [b, s]), tmp_path)
    path.write_text(path.read_text().replace('decay_function="linear"',
                                             'decay_function="cubic"'))
    with pytest.raises(ModelError, match="decay_function 'cubic'"):
        read(path)


@pytest.mark.parametrize("op", ["matrix", "multiclass"])
def test_nms_dynamic_box_count(op, tmp_path):
    boxes, scores = _boxes(2, 7), rng.uniform(0, 1, (2, 2, 7)).astype(np.float32)
    b = ops9.parameter([-1, -1, 4], np.float32, name="b")
    s = ops9.parameter([-1, -1, -1], np.float32, name="s")
    y = ops8.matrix_nms(b, s, sort_result_type="score") if op == "matrix" else \
        ops9.multiclass_nms(b, s, iou_threshold=0.4, sort_result_type="classid")
    check_op(y.outputs(), [b, s], {"b": boxes, "s": scores}, tmp_path, to_onnx=False)
