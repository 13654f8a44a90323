"""Rules of OpenVINO's fixed-size ROI pooling ops of the ``org.openvinotoolkit`` domain:
PSROIPooling, DeformablePSROIPooling and ROIAlignRotated with a given ``sampling_ratio`` (math in
`backends.common.roi_pool_ov`). ROIAlignRotated with ``sampling_ratio=0`` takes a sample count
from each box's size, a run-time value: it falls back to NumPy, as do the NMS ops, whose row
counts depend on the data."""

from __future__ import annotations

from ...common import roi_pool_ov as roi
from ...common.roi_pool_ov import DOMAIN
from ..table import lowering
from ._util import attr, attr_str


@lowering("PSROIPooling", domain=DOMAIN)
def _psroi(cx, x, rois):
    n = cx.node
    od, g = int(attr(n, "output_dim")), int(attr(n, "group_size", 1))
    scale = float(attr(n, "spatial_scale", 1.0))
    if attr_str(n, "mode", "average") == "bilinear":
        return roi.psroi_bilinear(cx.xp, x, rois, od, g, scale, int(attr(n, "spatial_bins_x", 1)),
                                  int(attr(n, "spatial_bins_y", 1)))
    return roi.psroi_average(cx.xp, x, rois, od, g, scale)


@lowering("DeformablePSROIPooling", domain=DOMAIN)
def _deformable_psroi(cx, x, rois, offsets=None):
    n = cx.node
    return roi.deformable_psroi(
        cx.xp, x, rois, offsets, int(attr(n, "output_dim")), int(attr(n, "group_size", 1)),
        float(attr(n, "spatial_scale", 1.0)), int(attr(n, "spatial_bins_x", 1)),
        int(attr(n, "spatial_bins_y", 1)), float(attr(n, "trans_std", 1.0)),
        int(attr(n, "part_size", 1)))


@lowering("ROIAlignRotated", domain=DOMAIN)
def _roi_align_rotated(cx, x, rois, batch):
    n = cx.node
    ratio = int(attr(n, "sampling_ratio", 0))
    if ratio <= 0:
        cx.fail("ROIAlignRotated with sampling_ratio=0 takes each box's sample count from its "
                "run-time size")
    return roi.roi_align_rotated(cx.xp, x, rois, batch, int(attr(n, "pooled_h")),
                                 int(attr(n, "pooled_w")), ratio, ratio,
                                 float(attr(n, "spatial_scale", 1.0)),
                                 bool(attr(n, "clockwise_mode", 0)))
