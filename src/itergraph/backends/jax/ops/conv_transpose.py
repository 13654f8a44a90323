"""ConvTranspose (geometry in `backends.common.conv_transpose`) and MaxRoiPool.

ConvTranspose is the convolution of the input dilated by the strides with the flipped kernel
(in and out channels swapped within each group), padded by ``(kernel - 1) * dilation`` less
the ONNX pads on each side, plus ``output_padding`` at the end.

MaxRoiPool: each bin (semantics in the NumPy kernel, `backends.numpy.kernels.roi`) is a mask
over the image, computed from the boxes at run time; the bin's maximum is taken under the mask
(0 for an empty bin).
"""

from __future__ import annotations

import numpy as np

from ...common.conv_transpose import transpose_geometry
from ..table import lowering
from ._util import astype, attr, attr_ints, attr_or_default, precision


@lowering("ConvTranspose", since=1)
def _conv_transpose(cx, x, w, b=None):
    from jax import lax

    xp = cx.xp
    n = x.ndim - 2
    if not 1 <= n <= 3:
        cx.fail("ConvTranspose with more than 3 spatial axes is not lowered")
    kernel = attr_ints(cx.node, "kernel_shape") or list(w.shape[2:])
    strides, dil, begin, end, out_pad = transpose_geometry(cx.node, x.shape[2:], kernel)
    group = int(attr_or_default(cx.node, "group"))
    cin, cout_g = w.shape[0], w.shape[1]
    wk = xp.reshape(w, (group, cin // group, cout_g, *w.shape[2:]))
    wk = xp.swapaxes(wk, 1, 2).reshape((group * cout_g, cin // group, *w.shape[2:]))
    wk = xp.flip(wk, axis=tuple(range(2, n + 2)))
    pads = [((k - 1) * d - bg, (k - 1) * d - e + p)
            for k, d, bg, e, p in zip(kernel, dil, begin, end, out_pad)]
    dims = "DHW"[-n:]
    y = lax.conv_general_dilated(x, wk, (1,) * n, pads, lhs_dilation=tuple(strides),
                                 rhs_dilation=tuple(dil),
                                 dimension_numbers=("NC" + dims, "OI" + dims, "NC" + dims),
                                 feature_group_count=group, precision=precision())
    if b is not None:
        y = y + xp.reshape(b, (1, -1) + (1,) * n)
    return astype(cx, y, x.dtype)


@lowering("MaxRoiPool", since=1)
def _max_roi_pool(cx, x, rois):
    xp = cx.xp
    ph, pw = (int(v) for v in attr(cx.node, "pooled_shape"))
    scale = float(attr_or_default(cx.node, "spatial_scale"))
    _, _, h, w = x.shape
    r = rois.astype(np.float32)
    batch = r[:, 0].astype(np.int32)
    xs, ys = xp.round(r[:, 1] * scale), xp.round(r[:, 2] * scale)
    rw = xp.maximum(xp.round(r[:, 3] * scale) - xs + 1, 1.0)
    rh = xp.maximum(xp.round(r[:, 4] * scale) - ys + 1, 1.0)

    def bounds(start, size, pooled, limit):  # [R, pooled] (lo, hi)
        p = xp.arange(pooled, dtype=np.float32)[None]
        step = (size / pooled)[:, None]
        lo = xp.clip(xp.floor(p * step) + start[:, None], 0, limit)
        hi = xp.clip(xp.ceil((p + 1) * step) + start[:, None], 0, limit)
        return lo, hi

    h0, h1 = bounds(ys, rh, ph, h)
    w0, w1 = bounds(xs, rw, pw, w)
    rows = xp.arange(h, dtype=np.float32)
    cols = xp.arange(w, dtype=np.float32)
    in_h = (rows[None, None] >= h0[..., None]) & (rows[None, None] < h1[..., None])  # R,ph,H
    in_w = (cols[None, None] >= w0[..., None]) & (cols[None, None] < w1[..., None])  # R,pw,W
    mask = in_h[:, :, None, :, None] & in_w[:, None, :, None, :]  # R, ph, pw, H, W
    img = x[batch]  # R, C, H, W
    low = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    vals = xp.where(mask[:, None], img[:, :, None, None], low)  # R, C, ph, pw, H, W
    best = xp.max(vals, axis=(-2, -1))
    empty = ~xp.any(mask, axis=(-2, -1))[:, None]
    return astype(cx, xp.where(empty, 0, best), x.dtype)
