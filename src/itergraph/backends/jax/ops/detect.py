"""Rules of the SSD post-processing ops of the ``org.openvinotoolkit`` domain: PriorBox and
PriorBoxClustered depend on their inputs' static shapes only, so they lower to constants (math
in `backends.common.prior_box`)."""

from __future__ import annotations

from ...common import prior_box as pb
from ..table import lowering


def _priors(cx, fn, feat, img):
    h, w = pb.spatial(feat.shape, cx.node.op_type)
    ih, iw = pb.spatial(img.shape, cx.node.op_type)
    y = fn(dict(cx.node.attrs), h, w, ih, iw)
    return y if cx.folding else cx.xp.asarray(y)


@lowering("PriorBox", domain=pb.DOMAIN)
def _prior_box(cx, feat, img):
    return _priors(cx, pb.prior_box, feat, img)


@lowering("PriorBoxClustered", domain=pb.DOMAIN)
def _prior_box_clustered(cx, feat, img):
    return _priors(cx, pb.prior_box_clustered, feat, img)
