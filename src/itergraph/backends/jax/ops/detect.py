"""Rules of the SSD post-processing ops of the ``org.openvinotoolkit`` domain: PriorBox and
PriorBoxClustered depend on their inputs' static shapes only, so they lower to constants (math
in `backends.common.prior_box`); Proposal (semantics in `backends.common.proposal`) decodes
vectorised and runs its greedy NMS as a ``fori_loop`` with a fixed-size kept list.
DetectionOutput has no rule (its per-class NMS and regrouping fall back to NumPy)."""

from __future__ import annotations

import numpy as np

from ...common import prior_box as pb
from ...common.proposal import anchors, proposal
from ..table import lowering


def _priors(cx, fn, feat, img):
    h, w = pb.spatial(feat.shape, cx.node.op_type)
    ih, iw = pb.spatial(img.shape, cx.node.op_type)
    y = fn(dict(cx.node.attrs), h, w, ih, iw)
    return y if cx.folding else cx.xp.asarray(y)


@lowering("PriorBox", domain=pb.DOMAIN)
def _prior_box(cx, feat, img):
    return _priors(cx, pb.prior_box, feat, img)


@lowering("PriorBoxClustered", domain=pb.DOMAIN)
def _prior_box_clustered(cx, feat, img):
    return _priors(cx, pb.prior_box_clustered, feat, img)


def _greedy_nms(jnp, lax, boxes, n: int, limit: int, thr, off):
    """Proposal's greedy NMS over the `n` boxes (best first): the indices kept, at most
    `limit` (``[limit]``, then the count)."""
    x0, y0, x1, y1 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    area = (x1 - x0 + off) * (y1 - y0 + off)
    later = jnp.arange(n)

    def step(i, state):
        dead, kept, count = state
        take = ~dead[i] & (count < limit)
        kept = jnp.where(take, kept.at[jnp.minimum(count, limit - 1)].set(i), kept)
        overlap = (x0[i] <= x1) & (y0[i] <= y1) & (x0 <= x1[i]) & (y0 <= y1[i])
        w = jnp.maximum(0, jnp.minimum(x1[i], x1) - jnp.maximum(x0[i], x0) + off)
        h = jnp.maximum(0, jnp.minimum(y1[i], y1) - jnp.maximum(y0[i], y0) + off)
        inter = w * h
        iou = jnp.where(overlap, inter / (area[i] + area - inter), 0)
        dead = dead | (take & (later > i) & (iou > thr))
        return dead, kept, count + take.astype(jnp.int32)

    state = (jnp.zeros(n, bool), jnp.zeros(limit, jnp.int32), jnp.int32(0))
    _, kept, count = lax.fori_loop(0, n, step, state)
    return kept, count


@lowering("Proposal", domain=pb.DOMAIN)
def _proposal(cx, probs, deltas, info):
    a = dict(cx.node.attrs)
    if cx.folding:
        return proposal(a, probs, deltas, info)
    import jax.numpy as jnp
    from jax import lax

    batch, a2, hh, ww = probs.shape
    n_anchor = a2 // 2
    base = anchors(a)
    if len(base) != n_anchor or tuple(deltas.shape) != (batch, 4 * n_anchor, hh, ww):
        cx.fail(f"{len(base)} anchors for class_probs {probs.shape}, deltas {deltas.shape}")
    tf = a.get("framework", "") == "tensorflow"
    off = np.float32(0 if tf else 1)
    info = info.reshape(-1).astype(jnp.float32)
    img_h, img_w, scale_h = info[0], info[1], info[2]
    scale_w = info[3] if info.shape[0] == 4 else scale_h
    min_size = np.float32(a.get("min_size", 1))
    stride = int(a.get("feat_stride", 1))
    post = int(a.get("post_nms_topn", 1))
    pre = min(int(a.get("pre_nms_topn", 1)), n_anchor * hh * ww)
    hs, ws = np.meshgrid(np.arange(hh), np.arange(ww), indexing="ij")
    sx, sy = (hs, ws) if tf else (ws, hs)
    shift = np.stack([sx * stride, sy * stride], -1).astype(np.float32)
    anc = jnp.asarray(np.concatenate([shift, shift], -1)[:, :, None, :] + base[None, None])
    lim_x, lim_y = (img_h, img_w) if tf else (img_w, img_h)
    if tf:
        anc = jnp.clip(anc, 0, jnp.stack([lim_x, lim_y, lim_x, lim_y]))
    cscale = np.float32(a.get("box_coordinate_scale", 1.0))
    sscale = np.float32(a.get("box_size_scale", 1.0))
    rois, scores = [], []
    for b in range(batch):
        d = deltas[b].reshape(n_anchor, 4, hh, ww).transpose(2, 3, 0, 1).astype(jnp.float32)
        score = probs[b, n_anchor:].transpose(1, 2, 0).astype(jnp.float32)
        x0, y0, x1, y1 = (anc[..., k] for k in range(4))
        w, h = x1 - x0 + off, y1 - y0 + off
        pcx, pcy = d[..., 0] / cscale * w + (x0 + 0.5 * w), d[..., 1] / cscale * h + (y0 + 0.5 * h)
        pw, ph = jnp.exp(d[..., 2] / sscale) * w, jnp.exp(d[..., 3] / sscale) * h
        box = jnp.stack([pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw, pcy + 0.5 * ph], -1)
        if int(a.get("clip_before_nms", 1)):
            box = jnp.clip(box, 0, jnp.stack([lim_x - off, lim_y - off] * 2))
        ok = (min_size * scale_w <= box[..., 2] - box[..., 0] + off) & \
            (min_size * scale_h <= box[..., 3] - box[..., 1] + off)
        score = (ok.astype(jnp.float32) * score).reshape(-1)
        box = box.reshape(-1, 4)
        order = jnp.argsort(-score, stable=True)[:pre]
        box, score = box[order], score[order]
        kept, count = _greedy_nms(jnp, lax, box, pre, post,
                                  np.float32(a.get("nms_thresh", 0.7)), off)
        out = box[kept]
        if int(a.get("clip_after_nms", 0)):
            out = jnp.clip(out, 0, jnp.stack([lim_x, lim_y] * 2))
        if int(a.get("normalize", 0)):
            out = out / jnp.stack([lim_x, lim_y] * 2)
        used = jnp.arange(post) < count
        first = jnp.where(used, np.float32(b), jnp.where(jnp.arange(post) == count, -1.0, 0.0))
        rois.append(jnp.concatenate([first[:, None], jnp.where(used[:, None], out, 0)], -1))
        scores.append(jnp.where(used, score[kept], 0))
    dt = probs.dtype
    return jnp.concatenate(rois).astype(dt), jnp.concatenate(scores).astype(dt)
