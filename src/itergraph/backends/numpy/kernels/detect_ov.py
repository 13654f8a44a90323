"""Kernels of OpenVINO's detection ops of the ``org.openvinotoolkit`` domain: MatrixNms,
MulticlassNms, NMSRotated and GenerateProposals (whose row counts depend on the data; math in
`backends.common.nms_multi`, `nms_rotated`, `generate_proposals`) and PSROIPooling,
DeformablePSROIPooling and ROIAlignRotated (`backends.common.roi_pool_ov`)."""

from __future__ import annotations

import numpy as np

from ....ir.attributes import attr, attr_str
from ...common import roi_pool_ov as roi
from ...common.generate_proposals import generate_proposals
from ...common.nms_multi import DOMAIN, Common, matrix_nms, multiclass_nms
from ...common.nms_rotated import nms_rotated
from . import kernel


def _idx_dtype(node):
    return np.int32 if attr_str(node, "output_type", "i64") == "i32" else np.int64


def _common(node) -> Common:
    return Common(sort_result_type=attr_str(node, "sort_result_type", "none"),
                  sort_result_across_batch=bool(attr(node, "sort_result_across_batch", 0)),
                  score_threshold=float(attr(node, "score_threshold", 0.0)),
                  nms_top_k=int(attr(node, "nms_top_k", -1)),
                  keep_top_k=int(attr(node, "keep_top_k", -1)),
                  background_class=int(attr(node, "background_class", -1)),
                  normalized=bool(attr(node, "normalized", 1)))


@kernel("MatrixNms", domain=DOMAIN)
def _matrix_nms(node, ctx):
    a, dt = _common(node), _idx_dtype(node)
    decay = attr_str(node, "decay_function", "linear")
    sigma = float(attr(node, "gaussian_sigma", 2.0))
    post = float(attr(node, "post_threshold", 0.0))
    return lambda boxes, scores: matrix_nms(boxes, scores, a, decay, sigma, post, dt)


@kernel("MulticlassNms", domain=DOMAIN)
def _multiclass_nms(node, ctx):
    a, dt = _common(node), _idx_dtype(node)
    iou, eta = float(attr(node, "iou_threshold", 0.0)), float(attr(node, "nms_eta", 1.0))
    return lambda boxes, scores, roisnum=None: multiclass_nms(boxes, scores, roisnum, a, iou,
                                                             eta, dt)


@kernel("NMSRotated", domain=DOMAIN)
def _nms_rotated(node, ctx):
    desc = bool(attr(node, "sort_result_descending", 1))
    cw, dt = bool(attr(node, "clockwise", 1)), _idx_dtype(node)
    return lambda boxes, scores, max_out, iou, score: nms_rotated(
        boxes, scores, max_out, iou, score, desc, cw, dt)


@kernel("GenerateProposals", domain=DOMAIN)
def _generate_proposals(node, ctx):
    args = (float(attr(node, "min_size", 1.0)), float(attr(node, "nms_thresh", 0.7)),
            int(attr(node, "pre_nms_topN", 6000)), int(attr(node, "post_nms_topN", 300)),
            bool(attr(node, "legacy_plus_one", 1)))
    return lambda scores, deltas, im_info, anchors: generate_proposals(
        scores, deltas, im_info, anchors, *args)


@kernel("PSROIPooling", domain=DOMAIN)
def _psroi(node, ctx):
    od, g = int(attr(node, "output_dim")), int(attr(node, "group_size", 1))
    scale = float(attr(node, "spatial_scale", 1.0))
    if attr_str(node, "mode", "average") == "bilinear":
        bx, by = int(attr(node, "spatial_bins_x", 1)), int(attr(node, "spatial_bins_y", 1))
        return lambda x, rois: roi.psroi_bilinear(np, np.asarray(x), np.asarray(rois), od, g,
                                                  scale, bx, by)
    return lambda x, rois: roi.psroi_average(np, np.asarray(x), np.asarray(rois), od, g, scale)


@kernel("DeformablePSROIPooling", domain=DOMAIN)
def _deformable_psroi(node, ctx):
    args = (int(attr(node, "output_dim")), int(attr(node, "group_size", 1)),
            float(attr(node, "spatial_scale", 1.0)), int(attr(node, "spatial_bins_x", 1)),
            int(attr(node, "spatial_bins_y", 1)), float(attr(node, "trans_std", 1.0)),
            int(attr(node, "part_size", 1)))

    def fn(x, rois, offsets=None):
        off = None if offsets is None else np.asarray(offsets)
        return roi.deformable_psroi(np, np.asarray(x), np.asarray(rois), off, *args)

    return fn


@kernel("ROIAlignRotated", domain=DOMAIN)
def _roi_align_rotated(node, ctx):
    args = (int(attr(node, "pooled_h")), int(attr(node, "pooled_w")),
            int(attr(node, "sampling_ratio", 0)), float(attr(node, "spatial_scale", 1.0)),
            bool(attr(node, "clockwise_mode", 0)))
    return lambda x, rois, batch: roi.roi_align_rotated_np(x, rois, batch, *args)
