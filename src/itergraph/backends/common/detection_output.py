"""OpenVINO ``DetectionOutput`` (domain ``org.openvinotoolkit``, attributes as OpenVINO's ONNX
frontend reads them): SSD's box decoding and per-class non-maximum suppression.

Inputs: ``loc`` ``[B, P*L*4]`` box offsets (L = 1 with ``share_location``, else one set per
class), ``conf`` ``[B, P*C]`` class scores, ``priors`` ``[1 or B, 1 or 2, P*S]`` (S = 4, or 5
without ``normalized``: a leading batch index per prior, and the prior sizes divided by
``input_width``/``input_height``); row 1 of ``priors`` holds 4 variances per prior unless
``variance_encoded_in_target``. Optional ``arm_conf`` ``[B, P*2]`` and ``arm_loc``
``[B, P*L*4]`` (RefineDet): priors whose objectness ``arm_conf[..., 1]`` is below
``objectness_score`` score 1 for the background class and 0 otherwise, and the priors are first
decoded with ``arm_loc``, the boxes then decoded relative to those.

Decoding (``code_type``): ``CORNER`` adds ``variance * offset`` to the prior's corners;
``CENTER_SIZE`` moves the prior's centre by ``variance * offset * size`` and scales its size by
``exp(variance * offset)``. ``clip_before_nms`` clamps the decoded boxes to [0, 1].

Suppression per image: Caffe style (default) for each class but ``background_label_id``: the
boxes scoring above ``confidence_threshold``, best first (ties: lower prior first), at most
``top_k`` (-1: all), each kept unless its IoU with a kept one exceeds ``nms_threshold``.
MXNet style (``decrease_label_id``): each prior's best class (1 .. C-1 but the background)
scoring at least the threshold, all priors ranked together, the same greedy pass per class;
labels are reported one lower. Then at most ``keep_top_k`` detections of the image, the best.

Output ``[1, 1, N, 7]``: rows ``(image, label, score, xmin, ymin, xmax, ymax)``, by image, then
label ascending, then rank; ``clip_after_nms`` clamps the box. N is ``B * keep_top_k``, else
``B * top_k * C``, else ``B * P * C``; the rows after the last detection are 0 but for the
image index -1 of the first of them. The arithmetic follows OpenVINO's, in the input type
(float32 for half types).
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)

CORNER, CENTER = "caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE"


def code_type(text: str) -> str:
    """The full name of a code type given as ``CORNER``, ``CENTER_SIZE`` or in full."""
    full = text if text.startswith("caffe.PriorBoxParameter.") else \
        "caffe.PriorBoxParameter." + text
    if full not in (CORNER, CENTER):
        raise ModelError(f"DetectionOutput: code_type '{text}' is not CORNER or CENTER_SIZE")
    return full


def _get(a: dict, key: str, default):
    v = a.get(key, default)
    return v.decode() if isinstance(v, bytes) else v


def output_rows(a: dict, batch: int, priors: int, classes: int) -> int:
    keep, top = int(_get(a, "keep_top_k", -1)), int(_get(a, "top_k", -1))
    if keep > 0:
        return batch * keep
    if top > 0:
        return batch * top * classes
    return batch * priors * classes


def decode(a: dict, prior, var, loc, dt, xp=np):
    """Boxes `loc` ``[..., P, 4]`` decoded against `prior` ``[P, 4]`` (variances `var`
    ``[P, 4]`` or ``None``), with the array module `xp`."""
    prior = prior.astype(dt)
    if not int(_get(a, "normalized", 1)):
        scale = np.array([_get(a, "input_width", 1), _get(a, "input_height", 1)] * 2, dt)
        prior = prior / scale
    off = loc if var is None else var * loc
    two = dt.type(2)
    if code_type(str(_get(a, "code_type", CORNER))) == CORNER:
        out = prior + off
    else:
        size = prior[..., 2:] - prior[..., :2]
        centre = (prior[..., :2] + prior[..., 2:]) / two
        c = off[..., :2] * size + centre
        s = xp.exp(off[..., 2:]).astype(dt) * size
        out = xp.concatenate([c - s / two, c + s / two], -1)
    if int(_get(a, "clip_before_nms", 0)):
        out = xp.clip(out, dt.type(0), dt.type(1))
    return out.astype(dt)


def jaccard(xp, box, boxes):
    """IoU of `box` ``[4]`` with each of `boxes` ``[K, 4]``, as OpenVINO's DetectionOutput
    computes it (0 for boxes that do not overlap or touch only); `xp`: NumPy or jax.numpy."""
    lo = xp.maximum(box[:2], boxes[:, :2])
    hi = xp.minimum(box[2:], boxes[:, 2:])
    apart = (boxes[:, 0] > box[2]) | (boxes[:, 2] < box[0]) | (boxes[:, 1] > box[3]) | \
        (boxes[:, 3] < box[1])
    wh = hi - lo
    inter = wh[:, 0] * wh[:, 1]

    def area(b):
        w, h = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
        return xp.where((w < 0) | (h < 0), 0, w * h)

    ok = ~apart & (wh[:, 0] > 0) & (wh[:, 1] > 0)
    return xp.where(ok, inter / xp.where(ok, area(box) + area(boxes) - inter, 1), 0)


def _greedy(boxes, order, thr: float, dt) -> list[int]:
    kept: list[int] = []
    for idx in order:
        if kept and np.any(jaccard(np, boxes[idx], boxes[kept]) > thr):
            continue
        kept.append(int(idx))
    return kept


def _ranked(scores, candidates):
    """`candidates` (prior indices) best score first, ties by index."""
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def _image(a: dict, boxes, scores, dt) -> dict[int, list[int]]:
    """Kept prior indices by label for one image: `boxes` ``[L, P, 4]``, `scores` ``[C, P]``."""
    bg = int(_get(a, "background_label_id", 0))
    thr = dt.type(_get(a, "confidence_threshold", 0.0))
    nms, top = float(np.float32(_get(a, "nms_threshold", 0.0))), int(_get(a, "top_k", -1))
    share = int(_get(a, "share_location", 1))
    classes = scores.shape[0]
    kept: dict[int, list[int]] = {}
    if not int(_get(a, "decrease_label_id", 0)):
        for c in range(classes):
            if c == bg:
                continue
            cand = _ranked(scores[c], np.nonzero(scores[c] > thr)[0])
            if top > -1:
                cand = cand[:top]
            kept[c] = _greedy(boxes[0 if share else c], cand, nms, dt)
        return kept
    usable = np.array([c != bg for c in range(1, classes)], bool)
    if not usable.any():
        return kept
    sub = np.where(usable[:, None], scores[1:], -np.inf)
    best = np.argmax(sub, 0)
    conf = sub[best, np.arange(sub.shape[1])]
    label = best + 1
    ok = (conf > -1) & (conf >= thr)
    cand = np.nonzero(ok)[0]
    cand = cand[np.lexsort((cand, -conf[cand]))]
    if top > -1:
        cand = cand[:top]
    for p in cand:
        c = int(label[p])
        mine = kept.setdefault(c, [])
        b = boxes[0 if share else c]
        if mine and np.any(jaccard(np, b[p], b[mine]) > nms):
            continue
        mine.append(int(p))
    return kept


def detection_output(a: dict, loc, conf, priors, arm_conf=None, arm_loc=None):
    """The ``[1, 1, N, 7]`` output of ``DetectionOutput`` (see the module)."""
    loc, conf, priors = np.asarray(loc), np.asarray(conf), np.asarray(priors)
    out_dt = loc.dtype
    dt = np.dtype(np.float32) if out_dt.itemsize < 4 else out_dt  # half types: as OpenVINO
    batch = loc.shape[0]
    size = 4 if int(_get(a, "normalized", 1)) else 5
    n_priors = priors.shape[2] // size
    if n_priors == 0 or conf.size % (batch * n_priors):
        raise ModelError(f"DetectionOutput: {conf.size} scores for {batch} images of "
                         f"{n_priors} priors")
    classes = conf.size // (batch * n_priors)
    share = int(_get(a, "share_location", 1))
    n_loc = 1 if share else classes
    if loc.size != batch * n_priors * n_loc * 4:
        raise ModelError(f"DetectionOutput: {loc.size} box offsets for {batch} images of "
                         f"{n_priors} priors and {n_loc} box sets")
    encoded = int(_get(a, "variance_encoded_in_target", 0))
    stride = n_priors * size * (1 if encoded else 2)
    flat = priors.reshape(-1)
    n_sets = priors.shape[0]
    sets = []
    for n in range(n_sets):
        base = flat[n * stride:n * stride + n_priors * size].reshape(n_priors, size)
        var = None if encoded else \
            flat[n * stride + n_priors * size:n * stride + n_priors * (size + 4)] \
            .reshape(n_priors, 4).astype(dt)
        sets.append((base[:, size - 4:], var))
    offsets = loc.reshape(batch, n_priors, n_loc, 4).transpose(0, 2, 1, 3).astype(dt)
    scores = conf.reshape(batch, n_priors, classes).transpose(0, 2, 1).astype(dt)
    arm = arm_conf is not None and arm_loc is not None
    bg = int(_get(a, "background_label_id", 0))
    if arm:
        low = np.asarray(arm_conf).reshape(batch, n_priors, 2)[..., 1] < \
            dt.type(_get(a, "objectness_score", 0.0))
        onehot = (np.arange(classes) == bg).astype(dt)[None, :, None]
        scores = np.where(low[:, None, :], onehot, scores)
        arm_off = np.asarray(arm_loc).reshape(batch, n_priors, n_loc, 4).transpose(0, 2, 1, 3) \
            .astype(dt)
    rows_n = output_rows(a, batch, n_priors, classes)
    keep = int(_get(a, "keep_top_k", -1))
    clip = int(_get(a, "clip_after_nms", 0))
    dec_label = int(_get(a, "decrease_label_id", 0))
    rows = []
    for i in range(batch):
        prior, var = sets[i if n_sets > 1 else 0]
        if arm:
            refined = decode(a, prior, var, arm_off[i], dt)
            boxes = np.stack([decode(a, refined[j], var, offsets[i, j], dt)
                              for j in range(n_loc)])
        else:
            boxes = decode(a, prior, var, offsets[i], dt)
        kept = _image(a, boxes, scores[i], dt)
        total = sum(len(v) for v in kept.values())
        if keep > -1 and total > keep:
            flat_k = [(label, p) for label, ps in kept.items() for p in ps]
            flat_k.sort(key=lambda t: (-scores[i, t[0], t[1]], t[1], t[0]))
            kept = {}
            for label, p in flat_k[:keep]:
                kept.setdefault(label, []).append(p)
        for label in sorted(kept):
            b = boxes[0 if share else label]
            for p in kept[label]:
                box = b[p]
                if clip:
                    box = np.clip(box, dt.type(0), dt.type(1))
                rows.append([i, label - 1 if dec_label else label, scores[i, label, p], *box])
    out = np.zeros((rows_n, 7), dt)
    if rows:
        out[:min(len(rows), rows_n)] = np.asarray(rows[:rows_n], dt)
    if len(rows) < rows_n:
        out[len(rows), 0] = -1
    return out.reshape(1, 1, rows_n, 7).astype(out_dt)
