"""OpenVINO ``NMSRotated`` (opset 13, domain ``org.openvinotoolkit``): non-maximum suppression
of rotated boxes ``(x_center, y_center, width, height, angle)``.

Per batch element and class, the best remaining box whose score is at least
``score_threshold`` is kept, and every box whose rotated IoU with it is above
``iou_threshold`` is dropped, until ``max_output_boxes_per_class`` boxes are kept. The rotated
IoU is the area of the intersection polygon of the two rectangles (convex clipping) over the
union ``area1 + area2 - intersection``. ``clockwise`` says a positive angle turns the box
clockwise in image coordinates (y pointing down); otherwise counterclockwise.

Outputs, as NonMaxSuppression-9: ``selected_indices`` rows ``(batch, class, box)``,
``selected_scores`` rows ``(batch, class, score)``, ``valid_outputs`` (the row count, one
element). Rows come per batch and class, best score first; ``sort_result_descending`` orders
all rows by score (ties: the earlier row first).
"""

from __future__ import annotations

import numpy as np

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def corners(box, clockwise: bool) -> np.ndarray:
    """The 4 corners [4, 2] of a rotated box, in order around it."""
    cx, cy, w, h, a = (float(v) for v in box)
    if not clockwise:
        a = -a
    c, s = np.cos(a), np.sin(a)
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    # x' = x cos - y sin, y' = x sin + y cos: clockwise on screen for a positive angle
    return np.stack([cx + local[:, 0] * c - local[:, 1] * s,
                     cy + local[:, 0] * s + local[:, 1] * c], axis=1)


def _cross(o, a, b) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _clip(poly: list, a, b) -> list:
    """The part of convex polygon `poly` on the left of (or on) edge a->b."""
    out = []
    n = len(poly)
    for i in range(n):
        p, q = poly[i], poly[(i + 1) % n]
        dp, dq = _cross(a, b, p), _cross(a, b, q)
        if dp >= 0:
            out.append(p)
        if (dp >= 0) != (dq >= 0) and dp != dq:
            t = dp / (dp - dq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _area(poly) -> float:
    n = len(poly)
    return 0.5 * abs(sum(poly[i][0] * poly[(i + 1) % n][1] - poly[(i + 1) % n][0] * poly[i][1]
                         for i in range(n)))


def _ccw(pts: np.ndarray) -> list:
    p = [tuple(v) for v in pts]
    signed = sum(p[i][0] * p[(i + 1) % 4][1] - p[(i + 1) % 4][0] * p[i][1] for i in range(4))
    return p if signed >= 0 else p[::-1]


def rotated_iou(b1, b2, clockwise: bool) -> float:
    """Intersection over union of two rotated boxes (0 when either has no area)."""
    a1, a2 = float(b1[2]) * float(b1[3]), float(b2[2]) * float(b2[3])
    if a1 <= 0 or a2 <= 0:
        return 0.0
    p, q = _ccw(corners(b1, clockwise)), _ccw(corners(b2, clockwise))
    poly = p
    for i in range(4):
        if not poly:
            break
        poly = _clip(poly, q[i], q[(i + 1) % 4])
    inter = _area(poly) if len(poly) >= 3 else 0.0
    return inter / (a1 + a2 - inter)


def nms_rotated(boxes, scores, max_out, iou_threshold, score_threshold,
                sort_result_descending: bool, clockwise: bool, idx_dtype=np.int64):
    bx = np.asarray(boxes, np.float32)
    sc = np.asarray(scores, np.float32)
    limit = int(np.asarray(max_out).reshape(-1)[0]) if max_out is not None else 0
    iou_t = float(np.asarray(iou_threshold, np.float32).reshape(-1)[0]) \
        if iou_threshold is not None else 0.0
    score_t = np.float32(np.asarray(score_threshold).reshape(-1)[0]) \
        if score_threshold is not None else np.float32(-np.inf)
    rows: list[tuple[int, int, int, float]] = []
    n, c, _ = sc.shape
    for b in range(n):
        for k in range(c):
            s = sc[b, k]
            order = np.argsort(-s, kind="stable")
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit or s[i] < score_t:
                    break
                if all(rotated_iou(bx[b, i], bx[b, j], clockwise) <= iou_t for j in kept):
                    kept.append(int(i))
            rows += [(b, k, i, float(s[i])) for i in kept]
    if sort_result_descending:
        rows = [rows[i] for i in np.argsort([-r[3] for r in rows], kind="stable")]
    sel = np.asarray([r[:3] for r in rows], np.int64).reshape(-1, 3)
    scored = np.asarray([(r[0], r[1], r[3]) for r in rows], np.float32).reshape(-1, 3)
    return (sel.astype(idx_dtype), scored.astype(np.asarray(scores).dtype),
            np.asarray([len(rows)], idx_dtype))
