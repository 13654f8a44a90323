"""Kernels of the SSD post-processing ops of the ``org.openvinotoolkit`` domain: PriorBox,
PriorBoxClustered (math in `backends.common.prior_box`), DetectionOutput
(`backends.common.detection_output`) and Proposal (`backends.common.proposal`)."""

from __future__ import annotations

from ...common import prior_box as pb
from ...common.detection_output import DOMAIN, detection_output
from ...common.proposal import proposal
from . import kernel


def _priors(node, fn):
    attrs = dict(node.attrs)

    def run(feat, img):
        h, w = pb.spatial(feat.shape, node.op_type)
        ih, iw = pb.spatial(img.shape, node.op_type)
        return fn(attrs, h, w, ih, iw)

    return run


@kernel("PriorBox", domain=pb.DOMAIN)
def _prior_box(node, ctx):
    return _priors(node, pb.prior_box)


@kernel("PriorBoxClustered", domain=pb.DOMAIN)
def _prior_box_clustered(node, ctx):
    return _priors(node, pb.prior_box_clustered)


@kernel("DetectionOutput", domain=DOMAIN)
def _detection_output(node, ctx):
    attrs = dict(node.attrs)

    def run(loc, conf, priors, arm_conf=None, arm_loc=None):
        return detection_output(attrs, loc, conf, priors, arm_conf, arm_loc)

    return run


@kernel("Proposal", domain=DOMAIN)
def _proposal(node, ctx):
    attrs = dict(node.attrs)
    return lambda probs, deltas, info: proposal(attrs, probs, deltas, info)
