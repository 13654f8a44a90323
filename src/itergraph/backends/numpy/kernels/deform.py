"""Kernels of the 2D deformable convolutions: ONNX ``DeformConv`` and ``DeformableConv2D`` of
the ``org.openvinotoolkit`` domain (math in `backends.common.deform_conv`)."""

from __future__ import annotations

import numpy as np

from ...common.deform_conv import DOMAIN, deform_conv, node_params
from . import kernel


@kernel("DeformConv", since=19)
def _deform_conv(node, ctx):
    def run(x, w, offset, b=None, mask=None):
        p = node_params(node, x.shape, w.shape, onnx=True)
        return np.asarray(deform_conv(np, x, w, offset, b, mask, **p))
    return run


@kernel("DeformableConv2D", domain=DOMAIN)
def _deformable_conv_2d(node, ctx):
    def run(x, offset, w, mask=None):
        p = node_params(node, x.shape, w.shape, onnx=False)
        return np.asarray(deform_conv(np, x, w, offset, None, mask, **p))
    return run
