"""Linear-algebra rules of the ``org.openvinotoolkit`` domain: Inverse (math in
`backends.common.inverse`)."""

from __future__ import annotations

from ...common.inverse import DOMAIN, inverse
from ..table import lowering
from ._util import attr


@lowering("Inverse", domain=DOMAIN)
def _inverse(cx, x):
    return inverse(cx.xp, x, bool(attr(cx.node, "adjoint", 0)))
