"""OpenVINO ``Proposal`` (versions 1 and 4, domain ``org.openvinotoolkit``; OpenVINO's ONNX
frontend has no such op): Faster R-CNN's region proposals.

Inputs: ``class_probs`` ``[B, 2A, H, W]`` (channels A .. 2A-1 are the object scores of the A
anchors), ``bbox_deltas`` ``[B, 4A, H, W]`` (per anchor dx, dy, d log w, d log h), and
``image_shape`` ``[3]`` or ``[4]``: image height, width and the scale of the height (and of the
width; else the same), shared by the batch.

The anchors: for each ``ratio`` r and ``scale`` s a box of area ``base_size**2`` and aspect
ratio r, scaled by s, centred on ``(base_size - o) / 2`` (o = 1, the Caffe pixel convention,
or 0 with ``framework`` ``tensorflow``; Caffe rounds the sides, TensorFlow centres on 0).
Anchor a at cell ``(h, w)`` is shifted by ``(w, h) * feat_stride`` (TensorFlow: ``(h, w)``,
and it clips the anchors to the image first). Each is moved by its deltas (divided by
``box_coordinate_scale`` and ``box_size_scale``), clipped to the image with
``clip_before_nms``, and its score zeroed where a side is below ``min_size`` times the scale.

Per image: the ``pre_nms_topn`` best (ties: earlier anchor first), then greedy NMS (a box dies
from an IoU above ``nms_thresh`` with a kept one, sides counted with the +o convention) up to
``post_nms_topn`` boxes. Output ``[B * post_nms_topn, 5]`` rows ``(image, x0, y0, x1, y1)``
(clipped to the image with ``clip_after_nms``, divided by its size with ``normalize``), and,
version 4, their scores ``[B * post_nms_topn]``; unused rows are 0 but for the image index -1
of the first of them.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)

F32 = np.float32


def _get(a: dict, key: str, default):
    v = a.get(key, default)
    return v.decode() if isinstance(v, bytes) else v


def anchors(a: dict) -> np.ndarray:
    """The ``[R*S, 4]`` anchor boxes ``(x0, y0, x1, y1)`` around the first cell."""
    tf = _get(a, "framework", "") == "tensorflow"
    off = F32(0 if tf else 1)
    base = F32(_get(a, "base_size", 1))
    area, center = base * base, F32(0.5) * (base - off)
    out = []
    for r in _get(a, "ratio", []):
        r = F32(r)
        if tf:
            rw = F32(np.sqrt(area / r))
            rh = rw * r
        else:
            rw = F32(np.round(np.sqrt(area / r)))
            rh = F32(np.round(rw * r))
        for s in _get(a, "scale", []):
            sw = F32(0.5) * (rw * F32(s) - off)
            sh = F32(0.5) * (rh * F32(s) - off)
            box = [center - sw, center - sh, center + sw, center + sh]
            if tf:
                box = [v - base * F32(0.5) for v in box]
            out.append(box)
    return np.asarray(out, F32).reshape(-1, 4)


def _nms(boxes, n: int, limit: int, thr: float, off) -> list[int]:
    dead = np.zeros(n, bool)
    kept: list[int] = []
    x0, y0, x1, y1 = boxes[:n, 0], boxes[:n, 1], boxes[:n, 2], boxes[:n, 3]
    area = (x1 - x0 + off) * (y1 - y0 + off)
    for i in range(n):
        if dead[i]:
            continue
        kept.append(i)
        if len(kept) == limit:
            break
        j = slice(i + 1, n)
        overlap = (x0[i] <= x1[j]) & (y0[i] <= y1[j]) & (x0[j] <= x1[i]) & (y0[j] <= y1[i])
        w = np.maximum(F32(0), np.minimum(x1[i], x1[j]) - np.maximum(x0[i], x0[j]) + off)
        h = np.maximum(F32(0), np.minimum(y1[i], y1[j]) - np.maximum(y0[i], y0[j]) + off)
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = np.where(overlap, inter / (area[i] + area[j] - inter), F32(0))
        dead[j] |= F32(thr) < iou
    return kept


def proposal(a: dict, probs, deltas, image_shape):
    """``(rois [B*post_nms_topn, 5], scores [B*post_nms_topn])`` of ``Proposal``."""
    probs, deltas = np.asarray(probs), np.asarray(deltas)
    info = np.asarray(image_shape).reshape(-1)
    dt = probs.dtype
    if probs.ndim != 4 or probs.shape[1] % 2:
        raise ModelError(f"Proposal: class_probs of shape {probs.shape} (need [B, 2A, H, W])")
    batch, a2, hh, ww = probs.shape
    n_anchor = a2 // 2
    base = anchors(a)
    if len(base) != n_anchor or deltas.shape != (batch, 4 * n_anchor, hh, ww):
        raise ModelError(f"Proposal: {len(base)} anchors (ratios x scales), class_probs "
                         f"{probs.shape}, bbox_deltas {deltas.shape}")
    if info.size not in (3, 4):
        raise ModelError(f"Proposal: image_shape has {info.size} values (3 or 4)")
    tf = _get(a, "framework", "") == "tensorflow"
    off = F32(0 if tf else 1)
    img_h, img_w = F32(info[0]), F32(info[1])
    scale_h = F32(info[2])
    scale_w = F32(info[3]) if info.size == 4 else scale_h
    min_size = F32(_get(a, "min_size", 1))
    min_h, min_w = F32(min_size * scale_h), F32(min_size * scale_w)
    stride = int(_get(a, "feat_stride", 1))
    post, pre = int(_get(a, "post_nms_topn", 1)), int(_get(a, "pre_nms_topn", 1))
    n_prop = n_anchor * hh * ww
    pre = min(pre, n_prop)
    hs, ws = np.meshgrid(np.arange(hh), np.arange(ww), indexing="ij")
    sx, sy = (hs, ws) if tf else (ws, hs)
    shift = np.stack([sx * stride, sy * stride], -1).astype(F32)  # [H, W, 2]
    anc = np.concatenate([shift, shift], -1)[:, :, None, :] + base[None, None]  # [H, W, A, 4]
    # TensorFlow's x runs down the rows (the shifts above): its x is bounded by the height
    lim_x, lim_y = (img_h, img_w) if tf else (img_w, img_h)
    if tf:
        lim = np.array([lim_x, lim_y, lim_x, lim_y], F32)
        anc = np.maximum(F32(0), np.minimum(anc, lim))
    rois = np.zeros((batch, post, 5), dt)
    scores = np.zeros((batch, post), dt)
    cscale, sscale = F32(_get(a, "box_coordinate_scale", 1.0)), \
        F32(_get(a, "box_size_scale", 1.0))
    for b in range(batch):
        d = deltas[b].reshape(n_anchor, 4, hh, ww).transpose(2, 3, 0, 1).astype(F32)
        dx, dy = d[..., 0] / cscale, d[..., 1] / cscale
        dw, dh = d[..., 2] / sscale, d[..., 3] / sscale
        score = probs[b, n_anchor:].transpose(1, 2, 0).astype(F32)
        x0, y0, x1, y1 = (anc[..., k] for k in range(4))
        w, h = x1 - x0 + off, y1 - y0 + off
        cx, cy = x0 + F32(0.5) * w, y0 + F32(0.5) * h
        pcx, pcy = dx * w + cx, dy * h + cy
        pw, ph = np.exp(dw) * w, np.exp(dh) * h
        box = np.stack([pcx - F32(0.5) * pw, pcy - F32(0.5) * ph,
                        pcx + F32(0.5) * pw, pcy + F32(0.5) * ph], -1)
        if int(_get(a, "clip_before_nms", 1)):
            lim = np.array([lim_x - off, lim_y - off] * 2, F32)
            box = np.maximum(F32(0), np.minimum(box, lim))
        bw = box[..., 2] - box[..., 0] + off
        bh = box[..., 3] - box[..., 1] + off
        score = ((min_w <= bw) & (min_h <= bh)).astype(F32) * score
        box, score = box.reshape(-1, 4).astype(F32), score.reshape(-1)
        order = np.argsort(-score, kind="stable")[:pre]
        box, score = box[order], score[order]
        kept = _nms(box, pre, post, float(_get(a, "nms_thresh", 0.7)), off)
        out = box[kept]
        if int(_get(a, "clip_after_nms", 0)):
            out = np.maximum(F32(0), np.minimum(out, np.array([lim_x, lim_y] * 2, F32)))
        if int(_get(a, "normalize", 0)):
            out = out / np.array([lim_x, lim_y] * 2, F32)
        n = len(kept)
        rois[b, :n, 0] = b
        rois[b, :n, 1:] = out
        scores[b, :n] = score[kept]
        if n < post:
            rois[b, n, 0] = -1
    return rois.reshape(-1, 5), scores.reshape(-1)
