"""OpenVINO's multi-class NMS ops of the ``org.openvinotoolkit`` domain: ``MatrixNms`` (opset 8)
and ``MulticlassNms`` (opsets 8 and 9). Both give ``selected_outputs`` rows ``(class, score,
xmin, ymin, xmax, ymax)``, ``selected_indices`` (the row of the box in the flattened boxes) and
``selected_num`` (rows per batch element); the row count depends on the data.

Shared semantics (OpenVINO's specification and reference implementation):
- classes equal to ``background_class`` are skipped; ``nms_top_k`` (-1: all) candidates per
  class enter the suppression, best score first (ties: lower box index first);
- the boxes kept in a batch element are ordered by score (descending; ties: class, then box
  index), cut to ``keep_top_k`` (-1: all), then, with ``sort_result_type="classid"`` and
  without ``sort_result_across_batch``, ordered by class (ties: score, box index);
- ``sort_result_across_batch`` orders the rows of all batch elements together, by score
  (ties: batch, class, box) for ``"score"`` and by class (ties: batch, score, box) for
  ``"classid"``; ``"none"`` keeps the per-batch order;
- ``normalized=false`` counts pixels inclusively (a box is ``x2 - x1 + 1`` wide).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the ops' domain)


@dataclass(frozen=True)
class Common:
    """The attributes MatrixNms and MulticlassNms share."""

    sort_result_type: str = "none"
    sort_result_across_batch: bool = False
    score_threshold: float = 0.0
    nms_top_k: int = -1
    keep_top_k: int = -1
    background_class: int = -1
    normalized: bool = True


def _area(b, off: float) -> np.ndarray:
    return (b[..., 2] - b[..., 0] + off) * (b[..., 3] - b[..., 1] + off)


def _pair_iou(a, b, off: float, matrix: bool) -> np.ndarray:
    """IoU of every box of `a` [n, 4] with every box of `b` [m, 4] (float32). The matrix-NMS
    form gives 0 to disjoint pairs and to boxes with x2 < x1 or y2 < y1; the multiclass form to
    pairs where a box has no positive area."""
    a, b = a[:, None, :], b[None, :, :]
    iw = np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]) + np.float32(off)
    ih = np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]) + np.float32(off)
    off = np.float32(off)
    if matrix:
        def area(x):
            bad = (x[..., 2] < x[..., 0]) | (x[..., 3] < x[..., 1])
            return np.where(bad, np.float32(0), _area(x, off))
        disjoint = (b[..., 0] > a[..., 2]) | (b[..., 2] < a[..., 0]) | \
            (b[..., 1] > a[..., 3]) | (b[..., 3] < a[..., 1])
        inter = iw * ih
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (area(a) + area(b) - inter)
        return np.where(disjoint, np.float32(0), iou).astype(np.float32)
    aa, ab = _area(a, off), _area(b, off)
    inter = np.maximum(iw, 0) * np.maximum(ih, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (aa + ab - inter)
    return np.where((aa <= 0) | (ab <= 0), np.float32(0), iou).astype(np.float32)


def _candidates(scores: np.ndarray, keep: np.ndarray, top_k: int) -> np.ndarray:
    """Indices of the boxes where `keep` holds, best score first (ties: lower index), cut to
    `top_k` (-1: all)."""
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return idx if top_k < 0 else idx[:top_k]


def _matrix_class(boxes, scores, a: Common, decay: str, sigma: float, post: float, off):
    """Matrix NMS of one class: (box indices, decayed scores)."""
    cand = _candidates(scores, scores > np.float32(a.score_threshold), a.nms_top_k)
    if cand.size == 0:
        return cand, scores[cand]
    iou = np.triu(_pair_iou(boxes[cand], boxes[cand], off, matrix=True), k=1)  # [j, i], j < i
    max_iou = iou.max(axis=0)  # per candidate: its largest IoU with a better one
    cmax = max_iou[:, None]
    if decay == "gaussian":
        factor = np.exp((cmax * cmax - iou * iou) * np.float32(sigma))
    else:
        factor = (1 - iou) / (1 - cmax + np.float32(1e-10))
    upper = np.triu(np.ones(iou.shape, bool), k=1)
    factor = np.where(upper, factor, np.float32(1)).astype(np.float32)
    decayed = (np.minimum(factor.min(axis=0), 1) * scores[cand]).astype(np.float32)
    ok = decayed > np.float32(post)
    return cand[ok], decayed[ok]


def _multiclass_class(boxes, scores, a: Common, iou_threshold: float, eta: float, off):
    """Greedy NMS of one class with an adaptive threshold: (box indices, scores)."""
    cand = _candidates(scores, scores >= np.float32(a.score_threshold), a.nms_top_k)
    chosen: list[int] = []
    thr = np.float32(iou_threshold)
    for i in cand:
        if chosen:
            iou = _pair_iou(boxes[i:i + 1], boxes[chosen], off, matrix=False)[0]
            if np.any(iou >= thr):
                continue
        chosen.append(int(i))
        if eta < 1 and thr > 0.5:
            thr = np.float32(thr * np.float32(eta))
    idx = np.asarray(chosen, np.int64)
    return idx, scores[idx]


def _order(rows: list[tuple], a: Common, across: bool) -> list[tuple]:
    """Rows ``(batch, class, box, score, flat_index, coords)`` in output order."""
    if a.sort_result_type == "classid":
        return sorted(rows, key=lambda r: (r[1], r[0], -r[3], r[2]) if across
                      else (r[0], r[1], -r[3], r[2]))
    if a.sort_result_type == "score" and across:
        return sorted(rows, key=lambda r: (-r[3], r[0], r[1], r[2]))
    return rows


def _run(per_class, boxes_of, n_batch: int, n_class: int, flat, a: Common, out_dtype,
         idx_dtype):
    """Collect the rows of every batch element; `per_class(b, c)` -> (box idx, scores),
    `boxes_of(b, c)` -> that class's boxes, `flat(b, c, i)` -> the flattened index."""
    rows, counts = [], []
    for b in range(n_batch):
        mine = []
        for c in range(n_class):
            if c == a.background_class:
                continue
            idx, sc = per_class(b, c)
            bx = boxes_of(b, c)
            mine += [(b, c, int(i), float(s), flat(b, c, int(i)), bx[int(i)])
                     for i, s in zip(idx, sc)]
        mine.sort(key=lambda r: (-r[3], r[1], r[2]))
        if a.keep_top_k > -1:
            mine = mine[:a.keep_top_k]
        if not a.sort_result_across_batch:
            mine = _order(mine, a, across=False)
        counts.append(len(mine))
        rows += mine
    if a.sort_result_across_batch:
        rows = _order(rows, a, across=True)
    out = np.zeros((len(rows), 6), np.float32)
    for k, r in enumerate(rows):
        out[k, 0], out[k, 1], out[k, 2:] = r[1], r[3], r[5]
    index = np.asarray([r[4] for r in rows], np.int64).reshape(-1, 1)
    return (out.astype(out_dtype), index.astype(idx_dtype),
            np.asarray(counts, np.int64).astype(idx_dtype))


def matrix_nms(boxes, scores, a: Common, decay_function: str, gaussian_sigma: float,
               post_threshold: float, idx_dtype=np.int64):
    """MatrixNms-8: `boxes` [N, M, 4], `scores` [N, C, M]. A class's candidates (score above
    ``score_threshold``), best first, get their scores decayed by the IoU with each better
    candidate: the factor for candidate i is ``min_j<i f(iou_ij, max_iou_j)`` (and at most 1)
    with ``f = exp((max_iou_j**2 - iou_ij**2) * gaussian_sigma)`` (``gaussian``) or ``(1 -
    iou_ij) / (1 - max_iou_j)`` (``linear``), ``max_iou_j`` candidate j's largest IoU with a
    better one; candidates whose decayed score is above ``post_threshold`` are kept."""
    bx, sc = np.asarray(boxes, np.float32), np.asarray(scores, np.float32)
    n, c, m = sc.shape
    off = 0.0 if a.normalized else 1.0
    return _run(lambda b, k: _matrix_class(bx[b], sc[b, k], a, decay_function, gaussian_sigma,
                                           post_threshold, off),
                lambda b, k: bx[b], n, c, lambda b, k, i: b * m + i, a,
                np.asarray(boxes).dtype, idx_dtype)


def multiclass_nms(boxes, scores, roisnum, a: Common, iou_threshold: float, nms_eta: float,
                   idx_dtype=np.int64):
    """MulticlassNms-8/9. Shared boxes: `boxes` [N, M, 4], `scores` [N, C, M], flat index
    ``batch * M + box``. Per-class boxes (version 9, with `roisnum` [N]): `boxes` [C, M, 4],
    `scores` [C, M], batch element b owning the next ``roisnum[b]`` boxes of every class, flat
    index ``(first box of b + box) * C + class``. Greedy NMS per class: the best remaining
    candidate (score at least ``score_threshold``) is kept unless its IoU with a kept box
    reaches the threshold; after each kept box a threshold above 0.5 is multiplied by
    ``nms_eta`` when that is below 1."""
    bx, sc = np.asarray(boxes, np.float32), np.asarray(scores, np.float32)
    off = 0.0 if a.normalized else 1.0
    run = lambda b, s: _multiclass_class(b, s, a, iou_threshold, nms_eta, off)  # noqa: E731
    if roisnum is None:
        n, c, m = sc.shape
        return _run(lambda b, k: run(bx[b], sc[b, k]), lambda b, k: bx[b], n, c,
                    lambda b, k, i: b * m + i, a, np.asarray(boxes).dtype, idx_dtype)
    counts = np.asarray(roisnum, np.int64).reshape(-1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    c = sc.shape[0]

    def part(b, k):
        return slice(int(starts[b]), int(starts[b] + max(counts[b], 0)))

    return _run(lambda b, k: run(bx[k, part(b, k)], sc[k, part(b, k)]),
                lambda b, k: bx[k, part(b, k)], len(counts), c,
                lambda b, k, i: (int(starts[b]) + i) * c + k, a, np.asarray(boxes).dtype,
                idx_dtype)
