"""Region-of-interest kernels: MaxRoiPool (``onnx.reference`` has none).

``MaxRoiPool`` (Caffe's ROI pooling): each box row ``(batch, x1, y1, x2, y2)`` is scaled by
``spatial_scale`` and rounded; its size is ``max(end - start + 1, 1)`` per axis; bin ``p`` of
``P`` covers ``[floor(p * size / P), ceil((p + 1) * size / P))`` from the start, clipped to
the input; the output is the bin's maximum, 0 for an empty bin.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir.attributes import attr, attr_or_default
from . import kernel


@kernel("MaxRoiPool", since=1)
def _max_roi_pool(node, ctx):
    ph, pw = (int(v) for v in attr(node, "pooled_shape"))
    scale = float(attr_or_default(node, "spatial_scale"))

    def bins(start: int, size: int, pooled: int, limit: int):
        step = size / pooled
        for p in range(pooled):
            lo = min(max(math.floor(p * step) + start, 0), limit)
            hi = min(max(math.ceil((p + 1) * step) + start, 0), limit)
            yield p, lo, hi

    def fn(x, rois):
        _, c, h, w = x.shape
        out = np.zeros((rois.shape[0], c, ph, pw), dtype=x.dtype)
        for n, (b, x1, y1, x2, y2) in enumerate(np.asarray(rois, np.float64)):
            xs, ys = round(x1 * scale), round(y1 * scale)
            rw = max(round(x2 * scale) - xs + 1, 1)
            rh = max(round(y2 * scale) - ys + 1, 1)
            img = x[int(b)]
            for i, h0, h1 in bins(ys, rh, ph, h):
                for j, w0, w1 in bins(xs, rw, pw, w):
                    if h1 > h0 and w1 > w0:
                        out[n, :, i, j] = img[:, h0:h1, w0:w1].max(axis=(1, 2))
        return out

    return fn
