"""``Resize`` (opset 11 and later) as gathers along its axes (`semantics.resize`), with
`roi`, `scales` and `sizes` known at compile time; the forms the semantics leave to the
reference stay on NumPy."""

from __future__ import annotations

from ....semantics import resize as rs
from ..table import lowering


@lowering("Resize", since=11)
def _resize(cx, x, roi=None, scales=None, sizes=None):
    a = rs.read_attrs(cx.node)
    if not rs.native(x.dtype, a):
        cx.fail(f"Resize in mode '{a.mode}' of {x.dtype} input"
                + (" with exclude_outside" if a.exclude_outside else "") + " is not lowered")
    given = [None if v is None else cx.const(v, what)
             for v, what in ((roi, "roi"), (scales, "scales"), (sizes, "sizes"))]
    p = rs.plan(cx.node, a, tuple(x.shape), *given)
    if p is None:
        cx.fail("Resize with keep_aspect_ratio_policy, or tf_crop_and_resize sized by scales, "
                "is not lowered")
    return rs.apply(p, x, cx.xp)
