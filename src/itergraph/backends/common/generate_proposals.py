"""OpenVINO ``GenerateProposals-9`` as the ``org.openvinotoolkit`` op ``GenerateProposals`` that
OpenVINO's ONNX frontend reads: inputs ``(scores [N, A, H, W], deltas [N, A*4, H, W],
im_info [N, 3 or 4], anchors)``, attributes ``min_size``, ``nms_thresh``, ``pre_nms_topN``,
``post_nms_topN``, ``legacy_plus_one`` (1: pixel sizes count inclusively, OpenVINO's
``normalized=false``). `anchors` is ``[A, 4]`` (the frontend's form: the same anchors at every
location) or ``[H, W, A, 4]`` (OpenVINO's op: anchors per location, which the frontend does not
read).

Per image: each anchor ``(x0, y0, x1, y1)`` at each location is moved by its deltas ``(dx, dy,
dlog_w, dlog_h)`` (log sizes capped at ``log(1000 / 16)``), clipped to the image ``(height,
width) = im_info[:2]``, and marked too small when narrower or lower than ``min_size`` times
the image scale (``im_info[2]``, or ``im_info[2:4]`` for height and width). The
``pre_nms_topN`` best-scoring proposals (order over locations ``h, w, anchor``; ties keep that
order) enter a greedy NMS that skips small ones and drops a later box whose IoU with a kept one
exceeds ``nms_thresh``, until ``post_nms_topN`` are kept. Outputs: ``rois`` [K, 4],
``roi_scores`` [K] (all images together) and ``rois_num`` [N] (int64).
"""

from __future__ import annotations

import math

import numpy as np

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)

F32 = np.float32


def _refine(anchors, deltas, off: float, img_h, img_w):
    """Boxes [K, 4] of the anchors [K, 4] moved by `deltas` [K, 4], clipped to the image."""
    ww = anchors[:, 2] - anchors[:, 0] + F32(off)
    hh = anchors[:, 3] - anchors[:, 1] + F32(off)
    cx, cy = anchors[:, 0] + F32(0.5) * ww, anchors[:, 1] + F32(0.5) * hh
    cap = F32(math.log(1000.0 / 16.0))
    pcx, pcy = deltas[:, 0] * ww + cx, deltas[:, 1] * hh + cy
    pw = np.exp(np.minimum(deltas[:, 2], cap)) * ww
    ph = np.exp(np.minimum(deltas[:, 3], cap)) * hh
    box = np.stack([pcx - F32(0.5) * pw, pcy - F32(0.5) * ph,
                    pcx + F32(0.5) * pw - F32(off), pcy + F32(0.5) * ph - F32(off)], axis=1)
    lim = np.array([img_w, img_h, img_w, img_h], F32) - F32(off)
    return np.maximum(F32(0), np.minimum(box, lim)).astype(F32)


def _nms(boxes, alive, thresh: float, off: float, limit: int) -> list[int]:
    dead = ~alive
    kept: list[int] = []
    off = F32(off)
    for i in range(len(boxes)):
        if dead[i]:
            continue
        kept.append(i)
        if len(kept) == limit:
            break
        a = boxes[i]
        rest = boxes[i + 1:]
        iw = np.minimum(a[2], rest[:, 2]) - np.maximum(a[0], rest[:, 0]) + off
        ih = np.minimum(a[3], rest[:, 3]) - np.maximum(a[1], rest[:, 1]) + off
        inter = np.maximum(F32(0), iw) * np.maximum(F32(0), ih)
        area_a = (a[2] - a[0] + off) * (a[3] - a[1] + off)
        area_b = (rest[:, 2] - rest[:, 0] + off) * (rest[:, 3] - rest[:, 1] + off)
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (area_a + area_b - inter)
        touch = (a[0] <= rest[:, 2]) & (a[1] <= rest[:, 3]) & (rest[:, 0] <= a[2]) & \
            (rest[:, 1] <= a[3])
        dead[i + 1:] |= (F32(thresh) < iou) & touch
    return kept


def generate_proposals(scores, deltas, im_info, anchors, min_size: float, nms_thresh: float,
                       pre_nms: int, post_nms: int, legacy_plus_one: bool):
    sc, dl = np.asarray(scores, F32), np.asarray(deltas, F32)
    info, anc = np.asarray(im_info, F32), np.asarray(anchors, F32)
    n, a, h, w = sc.shape
    anc = np.broadcast_to(anc.reshape(-1, a, 4) if anc.ndim == 2 else anc.reshape(h * w, a, 4),
                          (h * w, a, 4)).reshape(-1, 4)
    off = 1.0 if legacy_plus_one else 0.0
    rois, roi_scores, counts = [], [], []
    for b in range(n):
        img = info[b].reshape(-1)
        scale_h = img[2] if img.size > 2 else F32(1)
        scale_w = img[3] if img.size > 3 else scale_h
        d = dl[b].reshape(a, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4)  # [h, w, a] order
        s = sc[b].transpose(1, 2, 0).reshape(-1)
        box = _refine(anc, d, off, img[0], img[1])
        bw, bh = box[:, 2] - box[:, 0] + F32(off), box[:, 3] - box[:, 1] + F32(off)
        big = (F32(min_size) * scale_w <= bw) & (F32(min_size) * scale_h <= bh)
        order = np.argsort(-s, kind="stable")[:min(int(pre_nms), s.size)]
        kept = order[_nms(box[order], big[order], nms_thresh, off, int(post_nms))]
        rois.append(box[kept])
        roi_scores.append(s[kept])
        counts.append(len(kept))
    return (np.concatenate(rois).astype(np.asarray(scores).dtype),
            np.concatenate(roi_scores).astype(np.asarray(scores).dtype),
            np.asarray(counts, np.int64))
