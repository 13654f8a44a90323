"""Kernels of the ``org.openvinotoolkit`` domain: FakeQuantize and GatherTree (math in
`backends.common.fake_quantize` and `backends.common.gather_tree`)."""

from __future__ import annotations

import numpy as np

from ...common.attributes import attr
from ...common.fake_quantize import DOMAIN, fake_quantize
from ...common.gather_tree import gather_tree
from . import kernel


@kernel("FakeQuantize", domain=DOMAIN)
def _fake_quantize(node, ctx):
    levels = int(attr(node, "levels"))

    def fn(x, il, ih, ol, oh):
        with np.errstate(divide="ignore", invalid="ignore"):  # equal bounds: masked out
            return np.asarray(fake_quantize(np, x, il, ih, ol, oh, levels))

    return fn


@kernel("GatherTree", domain=DOMAIN)
def _gather_tree(node, ctx):
    return gather_tree
