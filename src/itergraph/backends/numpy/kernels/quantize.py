"""Quantisation kernels of the ``org.openvinotoolkit`` domain: FakeQuantize (math in
`backends.common.fake_quantize`)."""

from __future__ import annotations

import numpy as np

from ...common.attributes import attr
from ...common.fake_quantize import DOMAIN, fake_quantize
from . import kernel


@kernel("FakeQuantize", domain=DOMAIN)
def _fake_quantize(node, ctx):
    levels = int(attr(node, "levels"))

    def fn(x, il, ih, ol, oh):
        with np.errstate(divide="ignore", invalid="ignore"):  # equal bounds: masked out
            return np.asarray(fake_quantize(np, x, il, ih, ol, oh, levels))

    return fn
