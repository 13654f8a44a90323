"""Quantisation rules of the ``org.openvinotoolkit`` domain: FakeQuantize (math in
`backends.common.fake_quantize`)."""

from __future__ import annotations

from ...common.fake_quantize import DOMAIN, fake_quantize
from ..table import lowering
from ._util import attr


@lowering("FakeQuantize", domain=DOMAIN)
def _fake_quantize(cx, x, il, ih, ol, oh):
    return fake_quantize(cx.xp, x, il, ih, ol, oh, int(attr(cx.node, "levels")))
