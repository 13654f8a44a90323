"""OpenVINO ``PriorBox`` and ``PriorBoxClustered`` (domain ``org.openvinotoolkit``, the form
OpenVINO's ONNX frontend reads): the SSD anchor boxes of a feature map.

Both take two tensors and read only their shapes: dims 2 and 3 of the first are the feature
map's ``H, W``, those of the second the image's ``IH, IW``. The result is ``[1, 2, 4*H*W*P]``
float32: row 0 the boxes ``(xmin, ymin, xmax, ymax)`` normalised by the image size, cell by
cell (row-major) and P priors per cell; row 1 the ``variance`` (one value repeated, or four
per box; default 0.1).

``PriorBox``: a cell's centre is ``((w + 0.5) * IW / W, (h + 0.5) * IH / H)`` when ``step`` is
0, else ``((offset + w) * step, (offset + h) * step)``. Its priors, in order: for each
``fixed_size`` s (``density`` d: a d x d grid of shifted centres) the square box and one per
aspect ratio (only those of ``fixed_ratio`` when it is given), clipped to the image on the
outer sides; then for each ``min_size`` m: the square m, and the square sqrt(m * max_size)
and the aspect-ratio boxes (ratio r: width m*sqrt(r), height m/sqrt(r)) in that order with
``min_max_aspect_ratios_order``, the other way round without. The aspect ratios are 1, then
each given one not yet listed (and its inverse with ``flip``). ``scale_all_sizes`` false
(MXNet) scales ``min_size`` and ``step`` by IH (``step`` -1: IH / H) and gives the
aspect-ratio boxes of the last min size only. ``clip`` clamps every coordinate to [0, 1].

``PriorBoxClustered``: centre ``((w + offset) * step_w, (h + offset) * step_h)`` (``step_w``,
``step_h`` falling back to ``step``, and to IW / W, IH / H when both are 0), one box per
``width``/``height`` pair.

The arithmetic is float32, in OpenVINO's order, so the boxes match its reference bit for bit
where the CPU plugin does.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ModelError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the ops' domain)

F32 = np.float32


def aspect_ratios(ratios, flip: bool) -> list[float]:
    out = [1.0]
    for r in ratios:
        r = float(F32(r))
        if any(abs(r - e) < 1e-6 for e in out):
            continue
        out.append(r)
        if flip:
            out.append(float(F32(1.0) / F32(r)))
    return out


def prior_count(a: dict) -> int:
    """Priors per cell as OpenVINO sizes the output (``PriorBox::number_of_priors``); some
    attribute sets (``fixed_ratio`` with as many ratios as aspect ratios excepted) generate
    another number of boxes, and are refused."""
    n_ar = len(aspect_ratios(a.get("aspect_ratio", []), bool(a.get("flip", 0))))
    mins, maxs = a.get("min_size", []), a.get("max_size", [])
    if int(a.get("scale_all_sizes", 1)):
        n = n_ar * len(mins) + len(maxs)
    else:
        n = n_ar + len(mins) - 1
    if a.get("fixed_size"):
        n = n_ar * len(a["fixed_size"])
    for d in a.get("density", []):
        d2 = int(d) ** 2 - 1
        n += (len(a["fixed_ratio"]) if a.get("fixed_ratio") else n_ar) * d2
    return n


def _cell_priors(a: dict, ih: int) -> list[tuple]:
    """Per-cell priors ``(dx, dy, half_w, half_h, clip_outer)``: the centre shift and half
    sizes, float32, and whether the box is clipped to the image on its outer sides."""
    ars = aspect_ratios(a.get("aspect_ratio", []), bool(a.get("flip", 0)))
    mins = [F32(m) for m in a.get("min_size", [])]
    maxs = [F32(m) for m in a.get("max_size", [])]
    scale_all = bool(int(a.get("scale_all_sizes", 1)))
    if not scale_all:
        mins = [m * F32(ih) for m in mins]
    fixed, ratios = a.get("fixed_size", []), a.get("fixed_ratio", [])
    density = a.get("density", [])
    out: list[tuple] = []

    def grid(s, half_w, half_h):
        fs = F32(fixed[s])
        d = int(density[s])
        shift = int(fs / F32(d))
        for r in range(d):
            for c in range(d):
                dx = F32(-(int(fs) // 2)) + F32(shift / 2.0) + F32(c * shift)
                dy = F32(-(int(fs) // 2)) + F32(shift / 2.0) + F32(r * shift)
                out.append((dx, dy, half_w, half_h, True))

    for s in range(len(fixed)):
        fs = F32(fixed[s])
        if ratios:
            for ar in ratios:
                q = F32(math.sqrt(F32(ar)))
                grid(s, fs * F32(0.5) * q, fs * F32(0.5) / q)
            continue
        if density:
            half = F32(int(fs)) * F32(0.5)
            grid(s, half, half)
        for ar in ars:
            if abs(ar - 1.0) < 1e-6:
                continue
            q = F32(math.sqrt(F32(ar)))
            grid(s, fs * F32(0.5) * q, fs * F32(0.5) / q)

    for i, m in enumerate(mins):
        zero = F32(0)
        box = [(zero, zero, m * F32(0.5), m * F32(0.5), False)]
        big = []
        if len(maxs) > i:
            half = F32(math.sqrt(F32(m * maxs[i]))) * F32(0.5)
            big = [(zero, zero, half, half, False)]
        rest = []
        if scale_all or i == len(mins) - 1:
            base = mins[i if scale_all else 0]
            for ar in ars:
                if abs(ar - 1.0) < 1e-6:
                    continue
                q = F32(math.sqrt(F32(ar)))
                rest.append((zero, zero, base * F32(0.5) * q, base * F32(0.5) / q, False))
        order = int(a.get("min_max_aspect_ratios_order", 1))
        out += box + (big + rest if order else rest + big)
    return out


def _variances(a: dict, key: str, n_boxes: int) -> np.ndarray:
    var = [F32(v) for v in a.get(key, [])] or [F32(0.1)]
    if len(var) not in (1, 4):
        raise ModelError(f"{len(var)} variance values (1 or 4)")
    return np.tile(np.asarray(var * (4 // len(var)), F32), n_boxes)


def prior_box(a: dict, h: int, w: int, ih: int, iw: int) -> np.ndarray:
    """The ``[1, 2, 4*h*w*P]`` output of ``PriorBox`` (attributes `a`, see the module)."""
    priors = _cell_priors(a, ih)
    if len(priors) != prior_count(a):
        raise ModelError(f"PriorBox attributes {a} give {len(priors)} priors per cell, "
                         f"OpenVINO sizes the output for {prior_count(a)}")
    step = F32(a.get("step", 0.0))
    if not int(a.get("scale_all_sizes", 1)):
        step = F32(ih) / F32(h) if step == -1 else step * F32(ih)
    ws, hs = np.arange(w, dtype=F32), np.arange(h, dtype=F32)
    if step == 0:
        cx, cy = (ws + F32(0.5)) * (F32(iw) / F32(w)), (hs + F32(0.5)) * (F32(ih) / F32(h))
    else:
        off = F32(a.get("offset", 0.0))
        cx, cy = (off + ws) * step, (off + hs) * step
    cx, cy = np.broadcast_to(cx[None, :], (h, w)).reshape(-1), \
        np.broadcast_to(cy[:, None], (h, w)).reshape(-1)
    if not priors:
        return np.zeros((1, 2, 0), F32)
    dx, dy, hw, hh, outer = (np.asarray(c) for c in zip(*priors))
    px, py = cx[:, None] + dx.astype(F32), cy[:, None] + dy.astype(F32)
    iwi, ihi = F32(1) / F32(iw), F32(1) / F32(ih)
    boxes = np.stack([(px - hw.astype(F32)) * iwi, (py - hh.astype(F32)) * ihi,
                      (px + hw.astype(F32)) * iwi, (py + hh.astype(F32)) * ihi], -1)
    lo, hi = boxes[..., :2], boxes[..., 2:]
    outer = outer.astype(bool)[None, :, None]
    boxes = np.concatenate([np.where(outer, np.maximum(lo, F32(0)), lo),
                            np.where(outer, np.minimum(hi, F32(1)), hi)], -1)
    if int(a.get("clip", 0)):
        boxes = np.clip(boxes, F32(0), F32(1))
    flat = boxes.astype(F32).reshape(-1)
    return np.stack([flat, _variances(a, "variance", flat.size // 4)])[None]


def prior_box_clustered(a: dict, h: int, w: int, ih: int, iw: int) -> np.ndarray:
    """The ``[1, 2, 4*h*w*P]`` output of ``PriorBoxClustered`` (see the module)."""
    widths = np.asarray(a.get("width", []), F32)
    heights = np.asarray(a.get("height", []), F32)
    if widths.shape != heights.shape:
        raise ModelError(f"PriorBoxClustered: {widths.size} widths and {heights.size} heights")
    step = F32(a.get("step", 0.0))
    sw, sh = F32(a.get("step_w", 0.0)), F32(a.get("step_h", 0.0))
    sw, sh = (step if sw == 0 else sw), (step if sh == 0 else sh)
    if sw == 0 and sh == 0:
        sw, sh = F32(iw) / F32(w), F32(ih) / F32(h)
    off = F32(a.get("offset", 0.0))
    cx = np.broadcast_to(((np.arange(w, dtype=F32) + off) * sw)[None, :], (h, w)).reshape(-1, 1)
    cy = np.broadcast_to(((np.arange(h, dtype=F32) + off) * sh)[:, None], (h, w)).reshape(-1, 1)
    two = F32(2)
    boxes = np.stack([(cx - widths / two) / F32(iw), (cy - heights / two) / F32(ih),
                      (cx + widths / two) / F32(iw), (cy + heights / two) / F32(ih)], -1)
    if int(a.get("clip", 0)):
        boxes = np.clip(boxes, F32(0), F32(1))
    flat = boxes.astype(F32).reshape(-1)
    return np.stack([flat, _variances(a, "variance", flat.size // 4)])[None]


def spatial(shape, what: str) -> tuple[int, int]:
    """Dims 2 and 3 of a rank-4 `shape`: the sizes the prior-box ops read."""
    if len(shape) != 4:
        raise ModelError(f"{what}: a {len(shape)}-D input (the prior-box ops read dims 2 and 3 "
                         "of 4-D inputs)")
    return int(shape[2]), int(shape[3])
