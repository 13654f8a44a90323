"""OpenVINO's position-sensitive and rotated ROI pooling (domain ``org.openvinotoolkit``),
written against an array module `xp` (NumPy or ``jax.numpy``): ``PSROIPooling-1``,
``DeformablePSROIPooling-1`` and ``ROIAlignRotated-15``. Computed in float32, returned in the
type of the feature maps. ``round`` below rounds half away from zero.

PSROIPooling (`feature` [N, C_in, H, W], `rois` rows ``(batch, x1, y1, x2, y2)``) -> [R,
output_dim, G, G] with G = ``group_size``:
- ``average``: the box is ``round(x1) * scale`` to ``(round(x2) + 1) * scale`` (likewise y),
  cut into G x G bins; bin (i, j) averages the pixels from ``floor(start)`` (at most the
  last pixel) to ``ceil(end)`` (at most the size) of input channel ``(c * G + i) * G + j``;
- ``bilinear``: box coordinates are normalised (scaled by ``spatial_scale``, then by ``size -
  1``); the box is cut into ``spatial_bins_y x spatial_bins_x`` sub-boxes, sub-box (sy, sx)
  reading channel ``(sy * bins_x + sx) * output_dim + c``, each output cell sampling every
  sub-box once by bilinear interpolation (points outside the map add 0), averaged over all
  sub-boxes.

DeformablePSROIPooling (`rois` as above, optional `offsets` [R, 2K, P, P] with P =
``part_size``) -> [R, output_dim, G, G]: the box runs from ``round(x1) * scale - 0.5`` to
``(round(x2) + 1) * scale - 0.5`` (at least 0.1 wide); bin (i, j) of channel c reads input
channel ``(c * G + i) * G + j``, starts at its grid corner moved by ``offset * trans_std *
box size`` (offset pair ``c // (output_dim / K)`` at part ``(i * P // G, j * P // G)``) and
averages the bilinear samples at the corners of its ``bins_y x bins_x`` sub-bins that lie in
``[-0.5, size - 0.5]`` (clamped to the map), 0 when there is none; a negative batch index
gives 0.

ROIAlignRotated (`rois` rows ``(x_center, y_center, width, height, angle)``, `batch` [R])
-> [R, C, pooled_h, pooled_w]: the box, centred at ``center * scale - 0.5`` and sized ``size *
scale``, turned by ``angle`` (radians, clockwise with ``clockwise_mode``), is cut into bins of
``sampling_ratio`` x ``sampling_ratio`` samples (0: ``ceil(bin size)`` per axis, per box);
each sample is bilinear (0 outside ``[-1, size]``, clamped inside), the bin their mean.
"""

from __future__ import annotations

import numpy as np

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the ops' domain)

F32 = np.float32


def _round(xp, v):
    return xp.sign(v) * xp.floor(xp.abs(v) + F32(0.5))


def psroi_average(xp, x, rois, output_dim: int, group: int, scale: float):
    n, c_in, h, w = x.shape
    r = rois.astype(F32)
    b = r[:, 0].astype(np.int32)
    x1, y1 = _round(xp, r[:, 1]) * F32(scale), _round(xp, r[:, 2]) * F32(scale)
    x2, y2 = (_round(xp, r[:, 3]) + 1) * F32(scale), (_round(xp, r[:, 4]) + 1) * F32(scale)
    steps = xp.arange(group, dtype=F32)

    def edges(start, end, size):
        bin_ = (end - start) / F32(group)
        lo = xp.minimum(xp.floor(start[:, None] + steps * bin_[:, None]), F32(size - 1))
        hi = xp.minimum(xp.ceil(start[:, None] + (steps + 1) * bin_[:, None]), F32(size))
        lo = xp.maximum(lo, F32(0))
        return lo.astype(np.int32), xp.maximum(hi, lo).astype(np.int32)  # [R, G]

    h0, h1 = edges(y1, y2, h)
    w0, w1 = edges(x1, x2, w)
    # integral image: table[.., y, x] = sum of the pixels above and left of (y, x)
    table = xp.pad(xp.cumsum(xp.cumsum(x.astype(F32), axis=2), axis=3),
                   ((0, 0), (0, 0), (1, 0), (1, 0)))
    g = np.arange(group)
    chan = (np.arange(output_dim)[:, None, None] * group + g[:, None]) * group + g  # [C, i, j]
    bi = b[:, None, None, None]
    ch = chan[None]
    ya, yb = h0[:, None, :, None], h1[:, None, :, None]
    xa, xb = w0[:, None, None, :], w1[:, None, None, :]
    total = table[bi, ch, yb, xb] - table[bi, ch, ya, xb] - table[bi, ch, yb, xa] \
        + table[bi, ch, ya, xa]
    count = ((yb - ya) * (xb - xa)).astype(F32)
    return (total / xp.maximum(count, F32(1))).astype(x.dtype)


def _bilinear(xp, fetch, yf, xf, h: int, w: int, tail: int = 0):
    """Bilinear samples at (yf, xf) (>= 0, inside the map): ``fetch(rows, cols)`` reads the
    pixels; it may add `tail` trailing axes (channels), which the weights broadcast over."""
    top, left = xp.floor(yf), xp.floor(xf)
    bottom = xp.minimum(xp.ceil(yf), F32(h - 1))
    right = xp.minimum(xp.ceil(xf), F32(w - 1))
    t, lo, bo, ri = (v.astype(np.int32) for v in (top, left, bottom, right))
    tl, tr, bl, br = fetch(t, lo), fetch(t, ri), fetch(bo, lo), fetch(bo, ri)
    more = (1,) * tail
    dx, dy = (xf - left).reshape(xf.shape + more), (yf - top).reshape(yf.shape + more)
    upper = tl + (tr - tl) * dx
    lower = bl + (br - bl) * dx
    return upper + (lower - upper) * dy


def psroi_bilinear(xp, x, rois, output_dim: int, group: int, scale: float, bins_x: int,
                   bins_y: int):
    n, c_in, h, w = x.shape
    r = rois.astype(F32)
    b = r[:, 0].astype(np.int32)
    x1, y1, x2, y2 = (r[:, k] * F32(scale) for k in (1, 2, 3, 4))

    def points(start, end, bins: int, size: int):
        sub = (end - start) / F32(bins)  # [R]
        first = start[:, None] + xp.arange(bins, dtype=F32) * sub[:, None]  # [R, bins]
        if group > 1:
            step = sub * F32(size - 1) / F32(group - 1)
            return (xp.arange(group, dtype=F32)[None, :, None] * step[:, None, None]
                    + (first * F32(size - 1))[:, None, :])  # [R, G, bins]
        return ((first + first + sub[:, None]) * F32(size - 1) / 2)[:, None, :]

    px = points(x1, x2, bins_x, w)  # [R, G(j), bins_x]
    py = points(y1, y2, bins_y, h)  # [R, G(i), bins_y]
    yf = py[:, :, None, :, None]  # [R, i, 1, sy, 1]
    xf = px[:, None, :, None, :]  # [R, 1, j, 1, sx]
    ok = (xf < w) & (yf < h) & (xf >= 0) & (yf >= 0)
    yc, xc = xp.clip(yf, 0, h - 1), xp.clip(xf, 0, w - 1)
    yc, xc = xp.broadcast_arrays(yc, xc)
    sub = (np.arange(bins_y)[:, None] * bins_x + np.arange(bins_x))[:, :, None] * output_dim
    chan = (sub + np.arange(output_dim))[None, None, None]  # [1, 1, 1, sy, sx, C]
    bi = b[:, None, None, None, None, None]
    feat = x.astype(F32)
    vals = _bilinear(xp, lambda yy, xx: feat[bi, chan, yy[..., None], xx[..., None]], yc, xc,
                     h, w, tail=1)  # [R, i, j, sy, sx, C]
    vals = xp.where(ok[..., None], vals, F32(0))
    out = vals.sum(axis=(3, 4)) / F32(bins_x * bins_y)  # [R, i, j, C]
    return xp.moveaxis(out, 3, 1).astype(x.dtype)


def deformable_psroi(xp, x, rois, offsets, output_dim: int, group: int, scale: float,
                     bins_x: int, bins_y: int, trans_std: float, part: int):
    n, c_in, h, w = x.shape
    r = rois.astype(F32)
    b = r[:, 0].astype(np.int32)
    x1 = _round(xp, r[:, 1]) * F32(scale) - F32(0.5)
    y1 = _round(xp, r[:, 2]) * F32(scale) - F32(0.5)
    x2 = (_round(xp, r[:, 3]) + 1) * F32(scale) - F32(0.5)
    y2 = (_round(xp, r[:, 4]) + 1) * F32(scale) - F32(0.5)
    rw, rh = xp.maximum(x2 - x1, F32(0.1)), xp.maximum(y2 - y1, F32(0.1))
    bw, bh = rw / F32(group), rh / F32(group)
    g = xp.arange(group, dtype=F32)
    # bin corners [R, C, i, j]
    bx = xp.broadcast_to((x1[:, None] + g * bw[:, None])[:, None, None, :],
                         (r.shape[0], output_dim, group, group))
    by = xp.broadcast_to((y1[:, None] + g * bh[:, None])[:, None, :, None],
                         (r.shape[0], output_dim, group, group))
    if offsets is not None:
        pairs = offsets.shape[1] // 2
        cls = np.arange(output_dim) // (output_dim // pairs)
        gi = np.arange(group) * part // group
        off = offsets.astype(F32).reshape(offsets.shape[0], pairs, 2, part, part)
        off = off[:, cls][:, :, :, gi][:, :, :, :, gi]  # [R, C, 2, i, j]
        bx = bx + off[:, :, 0] * F32(trans_std) * rw[:, None, None, None]
        by = by + off[:, :, 1] * F32(trans_std) * rh[:, None, None, None]
    sxs = xp.arange(bins_x, dtype=F32) * (bw / F32(bins_x))[:, None]  # [R, sx]
    sys_ = xp.arange(bins_y, dtype=F32) * (bh / F32(bins_y))[:, None]
    xf = bx[..., None, None] + sxs[:, None, None, None, None, :]  # [R, C, i, j, 1, sx]
    yf = by[..., None, None] + sys_[:, None, None, None, :, None]  # [R, C, i, j, sy, 1]
    ok = (xf >= -0.5) & (xf <= w - 0.5) & (yf >= -0.5) & (yf <= h - 0.5)
    xc, yc = xp.broadcast_arrays(xp.clip(xf, 0, w - 1), xp.clip(yf, 0, h - 1))
    ok = xp.broadcast_to(ok, xc.shape) & (b >= 0)[:, None, None, None, None, None]
    g = np.arange(group)
    chan = ((np.arange(output_dim)[:, None, None] * group + g[:, None]) * group + g)
    chan = chan[None, :, :, :, None, None]  # [1, C, i, j, 1, 1]
    bi = xp.maximum(b, 0)[:, None, None, None, None, None]
    feat = x.astype(F32)
    vals = xp.where(ok, _bilinear(xp, lambda yy, xx: feat[bi, chan, yy, xx], yc, xc, h, w),
                    F32(0))
    count = ok.sum(axis=(4, 5)).astype(F32)
    out = vals.sum(axis=(4, 5)) / xp.maximum(count, F32(1))
    return out.astype(x.dtype)


def roi_align_rotated(xp, x, rois, batch, pooled_h: int, pooled_w: int, ratio_y: int,
                      ratio_x: int, scale: float, clockwise: bool):
    """`ratio_y`, `ratio_x`: the (positive) sample counts per bin axis for all boxes; the
    caller splits the boxes by their counts when ``sampling_ratio`` is 0."""
    n, c, h, w = x.shape
    r = rois.astype(F32)
    cx, cy = r[:, 0] * F32(scale) - F32(0.5), r[:, 1] * F32(scale) - F32(0.5)
    bw, bh = r[:, 2] * F32(scale), r[:, 3] * F32(scale)
    angle = -r[:, 4] if clockwise else r[:, 4]
    cos, sin = xp.cos(angle), xp.sin(angle)
    binw, binh = bw / F32(pooled_w), bh / F32(pooled_h)

    def grid(size, bin_, pooled: int, ratio: int):
        k = xp.arange(pooled, dtype=F32)[:, None]
        s = (xp.arange(ratio, dtype=F32) + F32(0.5))[None, :]
        return (-size / 2)[:, None, None] + k * bin_[:, None, None] \
            + s * (bin_ / F32(ratio))[:, None, None]  # [R, pooled, ratio]

    gx = grid(bw, binw, pooled_w, ratio_x)[:, None, :, None, :]  # [R, 1, j, 1, sx]
    gy = grid(bh, binh, pooled_h, ratio_y)[:, :, None, :, None]  # [R, i, 1, sy, 1]
    e = (slice(None),) + (None,) * 4
    yf = gy * cos[e] - gx * sin[e] + cy[e]
    xf = gy * sin[e] + gx * cos[e] + cx[e]
    yf, xf = xp.broadcast_arrays(yf, xf)
    ok = (xf >= -1) & (xf <= w) & (yf >= -1) & (yf <= h)
    yf, xf = xp.maximum(yf, F32(0)), xp.maximum(xf, F32(0))
    y0, x0 = xp.floor(yf), xp.floor(xf)
    ylast, xlast = y0 >= h - 1, x0 >= w - 1
    y0 = xp.where(ylast, F32(h - 1), y0)
    x0 = xp.where(xlast, F32(w - 1), x0)
    yf, xf = xp.where(ylast, y0, yf), xp.where(xlast, x0, xf)
    y1i = xp.where(ylast, y0, y0 + 1).astype(np.int32)
    x1i = xp.where(xlast, x0, x0 + 1).astype(np.int32)
    y0i, x0i = y0.astype(np.int32), x0.astype(np.int32)
    ly, lx = yf - y0, xf - x0
    feat = x.astype(F32)
    bi = batch.astype(np.int32).reshape(-1, 1, 1, 1, 1)
    wts = [(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx]
    pts = [(y0i, x0i), (y0i, x1i), (y1i, x0i), (y1i, x1i)]
    # x[b, :, y, x] puts the indexed axes first, the channels last: [R, i, j, sy, sx, C]
    val = sum(feat[bi, :, yy, xx] * (wt * ok)[..., None] for wt, (yy, xx) in zip(wts, pts))
    out = val.sum(axis=(3, 4)) / F32(ratio_x * ratio_y)  # [R, i, j, C]
    return xp.moveaxis(out, 3, 1).astype(x.dtype)


def roi_align_rotated_np(x, rois, batch, pooled_h: int, pooled_w: int, sampling_ratio: int,
                         scale: float, clockwise: bool):
    """NumPy form: boxes grouped by their sample counts when ``sampling_ratio`` is 0."""
    x, rois, batch = np.asarray(x), np.asarray(rois), np.asarray(batch)
    out = np.zeros((rois.shape[0], x.shape[1], pooled_h, pooled_w), x.dtype)
    if sampling_ratio > 0:
        ratios = np.full((rois.shape[0], 2), sampling_ratio)
    else:
        sizes = rois[:, [3, 2]].astype(F32) * F32(scale) / np.array([pooled_h, pooled_w], F32)
        ratios = np.ceil(sizes).astype(np.int64)
    for ry, rx in {tuple(v) for v in ratios.tolist()}:
        sel = np.flatnonzero((ratios[:, 0] == ry) & (ratios[:, 1] == rx))
        if ry <= 0 or rx <= 0:
            continue  # no sample: the bins stay 0
        out[sel] = roi_align_rotated(np, x, rois[sel], batch[sel], pooled_h, pooled_w, ry, rx,
                                     scale, clockwise)
    return out
