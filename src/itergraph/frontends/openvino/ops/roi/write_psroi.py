"""``org.openvinotoolkit`` ROI pooling ops -> OpenVINO layers of the same name and attributes:
``PSROIPooling-1``, ``DeformablePSROIPooling-1``, ``ROIAlignRotated-15``."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...export_table import exporter
from ...net_writer import NetWriter


def _data(node: Node, ints=(), floats=(), strs=(), bools=()) -> dict:
    a = node.attrs
    out = {k: int(a[k]) for k in ints}
    out.update({k: float(a[k]) for k in floats})
    out.update({k: a[k].decode() if isinstance(a[k], bytes) else str(a[k]) for k in strs})
    out.update({k: bool(int(a[k])) for k in bools})
    return out


@exporter("PSROIPooling", since=1, domain=DOMAIN)
def _psroi(w: NetWriter, node: Node, ins):
    data = _data(node, ("output_dim", "group_size", "spatial_bins_x", "spatial_bins_y"),
                 ("spatial_scale",), ("mode",))
    return w.one("PSROIPooling", "opset1", ins[:2], data, dtype=ins[0].dtype)


@exporter("DeformablePSROIPooling", since=1, domain=DOMAIN)
def _deformable_psroi(w: NetWriter, node: Node, ins):
    data = _data(node, ("output_dim", "group_size", "spatial_bins_x", "spatial_bins_y",
                        "part_size"), ("spatial_scale", "trans_std"), ("mode",))
    ports = [p for p in ins[:3] if p is not None]
    return w.one("DeformablePSROIPooling", "opset1", ports, data, dtype=ins[0].dtype)


@exporter("ROIAlignRotated", since=1, domain=DOMAIN)
def _roi_align_rotated(w: NetWriter, node: Node, ins):
    data = _data(node, ("pooled_h", "pooled_w", "sampling_ratio"), ("spatial_scale",),
                 bools=("clockwise_mode",))
    return w.one("ROIAlignRotated", "opset15", ins[:3], data, dtype=ins[0].dtype)
