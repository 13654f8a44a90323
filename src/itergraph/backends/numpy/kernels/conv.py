"""ConvTranspose (any ``group``): one channel product per window offset, added into the
strided positions of the full output, then cropped by the padding (geometry in
`backends.common.conv_transpose`)."""

from __future__ import annotations

import itertools

import numpy as np

from ....ir.attributes import attr, attr_or_default
from ...common.conv_transpose import transpose_geometry
from . import kernel


@kernel("ConvTranspose", since=1)
def _conv_transpose(node, ctx):
    group = int(attr_or_default(node, "group"))

    def fn(x, w, b=None):
        n = x.ndim - 2
        kernel_shape = list(attr(node, "kernel_shape", w.shape[2:]))
        size = x.shape[2:]
        strides, dil, begin, end, out_pad = transpose_geometry(node, size, kernel_shape)
        batch, cin = x.shape[:2]
        cg_in, cg_out = cin // group, w.shape[1]
        full = [s * (i - 1) + (k - 1) * d + 1 + p
                for i, k, s, d, p in zip(size, kernel_shape, strides, dil, out_pad)]
        buf = np.zeros((batch, group, cg_out, *full), dtype=np.result_type(x, w))
        xg = x.reshape(batch, group, cg_in, *size)
        wg = w.reshape(group, cg_in, cg_out, *w.shape[2:])
        for off in itertools.product(*(range(k) for k in kernel_shape)):
            part = np.einsum("ngi...,gio->ngo...", xg, wg[(..., *off)])
            where = tuple(slice(o * d, o * d + s * (i - 1) + 1, s)
                          for o, d, s, i in zip(off, dil, strides, size))
            buf[(slice(None),) * 3 + where] += part
        y = buf.reshape(batch, group * cg_out, *full)
        crop = tuple(slice(bg, f - e) for bg, e, f in zip(begin, end, full))
        y = y[(slice(None), slice(None)) + crop]
        if b is not None:
            y = y + b.reshape((1, -1) + (1,) * n)
        return np.ascontiguousarray(y.astype(x.dtype, copy=False))

    return fn
