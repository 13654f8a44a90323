"""Rules of the SSD post-processing ops of the ``org.openvinotoolkit`` domain: PriorBox and
PriorBoxClustered depend on their inputs' static shapes only, so they lower to constants (math
in `backends.common.prior_box`); Proposal (semantics in `backends.common.proposal`) decodes
vectorised and runs its greedy NMS as a ``fori_loop`` with a fixed-size kept list;
DetectionOutput (`backends.common.detection_output`) runs one ``fori_loop`` NMS per class
(vmapped) or one over the priors' best classes (MXNet style), picks ``keep_top_k`` and orders
the rows with sorts over fixed-size masks."""

from __future__ import annotations

import numpy as np

from ...common import prior_box as pb
from ...common.detection_output import decode, detection_output, jaccard, output_rows
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


def _greedy_groups(jnp, lax, boxes, valid, group, thr):
    """Greedy NMS over `boxes` ``[K, 4]`` in order: a valid box is kept unless a kept box of
    its `group` overlaps it by more than `thr`."""
    def step(i, kept):
        iou = jaccard(jnp, boxes[i], boxes)
        hit = jnp.any(kept & (group == group[i]) & (iou > thr))
        return kept.at[i].set(valid[i] & ~hit)

    return lax.fori_loop(0, boxes.shape[0], step, jnp.zeros(boxes.shape[0], bool))


def _ranked(jnp, score, ok):
    """The order putting `ok` entries first, best score first, ties by index."""
    idx = jnp.arange(score.shape[-1])
    return jnp.lexsort((idx, -score, ~ok))


def _image_kept(jnp, lax, a: dict, boxes, scores):
    """``[C, P]`` kept mask of one image (Caffe or MXNet style, then keep_top_k)."""
    import jax

    classes, n = scores.shape
    bg = int(a.get("background_label_id", 0))
    thr = np.float32(a.get("confidence_threshold", 0.0)).astype(scores.dtype)
    nms = np.float32(a.get("nms_threshold", 0.0))
    top, keep = int(a.get("top_k", -1)), int(a.get("keep_top_k", -1))
    share = int(a.get("share_location", 1))
    rank = jnp.arange(n)
    cls = jnp.arange(classes)
    span = min(top, n) if top > -1 else n
    if not int(a.get("decrease_label_id", 0)):
        per_class = jnp.broadcast_to(boxes, (classes, n, 4)) if share else boxes

        def one(score, bx):
            ok = score > thr
            order = _ranked(jnp, score, ok)[:span]  # only the top_k best can be kept
            kept = _greedy_groups(jnp, lax, bx[order], ok[order], jnp.zeros(span, jnp.int32),
                                  nms)
            return jnp.zeros(n, bool).at[order].set(kept)

        kept = jax.vmap(one)(scores, per_class) & (cls != bg)[:, None]
    else:
        usable = (cls >= 1) & (cls != bg)
        sub = jnp.where(usable[:, None], scores, -jnp.inf)
        label = jnp.argmax(sub, 0)
        conf = jnp.max(sub, 0)
        ok = usable.any() & (conf > -1) & (conf >= thr)
        order = _ranked(jnp, conf, ok)[:span]
        own = boxes[0] if share else boxes[label, jnp.arange(n)]
        kept_p = _greedy_groups(jnp, lax, own[order], ok[order], label[order], nms)
        kept_p = jnp.zeros(n, bool).at[order].set(kept_p)
        kept = (cls[:, None] == label[None, :]) & kept_p[None, :]
    if keep > -1:
        flat_s, flat_k = scores.reshape(-1), kept.reshape(-1)
        c_idx, p_idx = jnp.repeat(cls, n), jnp.tile(rank, classes)
        order = jnp.lexsort((c_idx, p_idx, -flat_s, ~flat_k))
        first = jnp.zeros(flat_k.shape[0], bool).at[order].set(
            jnp.arange(flat_k.shape[0]) < keep)
        kept = (first & flat_k).reshape(classes, n)
    return kept


@lowering("DetectionOutput", domain=pb.DOMAIN)
def _detection_output(cx, loc, conf, priors, arm_conf=None, arm_loc=None):
    a = dict(cx.node.attrs)
    if cx.folding:
        return detection_output(a, loc, conf, priors, arm_conf, arm_loc)
    import jax.numpy as jnp
    from jax import lax

    out_dt = np.dtype(loc.dtype)
    dt = np.dtype(np.float32) if out_dt.itemsize < 4 else out_dt
    batch = loc.shape[0]
    size = 4 if int(a.get("normalized", 1)) else 5
    n_priors = priors.shape[2] // size
    n_conf = int(np.prod(conf.shape))
    if n_priors == 0 or n_conf % (batch * n_priors):
        cx.fail(f"{n_conf} scores for {batch} images of {n_priors} priors")
    classes = n_conf // (batch * n_priors)
    share = int(a.get("share_location", 1))
    n_loc = 1 if share else classes
    encoded = int(a.get("variance_encoded_in_target", 0))
    stride = n_priors * size * (1 if encoded else 2)
    flat = priors.reshape(-1)
    sets = []
    for n in range(priors.shape[0]):
        base = flat[n * stride:n * stride + n_priors * size].reshape(n_priors, size)
        var = None if encoded else flat[n * stride + n_priors * size:
                                        n * stride + n_priors * (size + 4)] \
            .reshape(n_priors, 4).astype(dt)
        sets.append((base[:, size - 4:], var))
    offsets = loc.reshape(batch, n_priors, n_loc, 4).transpose(0, 2, 1, 3).astype(dt)
    scores = conf.reshape(batch, n_priors, classes).transpose(0, 2, 1).astype(dt)
    arm = arm_conf is not None and arm_loc is not None
    if arm:
        low = arm_conf.reshape(batch, n_priors, 2)[..., 1] < \
            np.float32(a.get("objectness_score", 0.0)).astype(dt)
        onehot = (np.arange(classes) == int(a.get("background_label_id", 0))).astype(dt)
        scores = jnp.where(low[:, None, :], onehot[None, :, None], scores)
        arm_off = arm_loc.reshape(batch, n_priors, n_loc, 4).transpose(0, 2, 1, 3).astype(dt)
    keys, rows = [], []
    for i in range(batch):
        prior, var = sets[i if len(sets) > 1 else 0]
        if arm:
            refined = decode(a, prior, var, arm_off[i], dt, jnp)
            boxes = jnp.stack([decode(a, refined[j], var, offsets[i, j], dt, jnp)
                               for j in range(n_loc)])
        else:
            boxes = decode(a, prior, var, offsets[i], dt, jnp)
        kept = _image_kept(jnp, lax, a, boxes, scores[i])
        per = jnp.broadcast_to(boxes, (classes, n_priors, 4)) if share else boxes
        if int(a.get("clip_after_nms", 0)):
            per = jnp.clip(per, 0, 1)
        label = np.arange(classes) - (1 if int(a.get("decrease_label_id", 0)) else 0)
        cols = [jnp.full((classes, n_priors, 1), i, dt),
                jnp.broadcast_to(jnp.asarray(label, dt)[:, None, None], (classes, n_priors, 1)),
                scores[i][..., None], per.astype(dt)]
        rows.append(jnp.concatenate(cols, -1).reshape(-1, 7))
        keys.append(kept.reshape(-1))
    rows, valid = jnp.concatenate(rows), jnp.concatenate(keys)
    total = rows.shape[0]
    idx = jnp.arange(total)
    # entries are laid out (image, label, prior): sort kept ones first, by score within a label
    block = idx // n_priors
    order = jnp.lexsort((idx % n_priors, -rows[:, 2], block, ~valid))
    rows, valid = rows[order], valid[order]
    n_out = output_rows(a, batch, n_priors, classes)
    if total < n_out:
        rows = jnp.concatenate([rows, jnp.zeros((n_out - total, 7), dt)])
        valid = jnp.concatenate([valid, jnp.zeros(n_out - total, bool)])
    rows, valid = rows[:n_out], valid[:n_out]
    count = jnp.sum(valid)
    out = jnp.where(valid[:, None], rows, 0)
    out = out.at[:, 0].set(jnp.where(jnp.arange(n_out) == count, -1, out[:, 0]))
    return out.reshape(1, 1, n_out, 7).astype(out_dt)
