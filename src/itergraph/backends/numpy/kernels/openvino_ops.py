"""Kernels of the ``org.openvinotoolkit`` domain: FakeQuantize, GatherTree and Inverse (math in
`backends.common.fake_quantize`, `backends.common.gather_tree` and `backends.common.inverse`)."""

from __future__ import annotations

import numpy as np

from ....ir.attributes import attr
from ...common.fake_quantize import DOMAIN, fake_quantize
from ...common.gather_tree import gather_tree
from ...common.inverse import inverse
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


@kernel("Inverse", domain=DOMAIN)
def _inverse(node, ctx):
    adjoint = bool(attr(node, "adjoint", 0))
    return lambda x: np.asarray(inverse(np, np.asarray(x), adjoint))
