"""2D deformable convolutions -> OpenVINO ``DeformableConvolution-8``: ONNX ``DeformConv``
(inputs ``X, W, offset[, B[, mask]]``) with ``bilinear_interpolation_pad=true`` and its bias
added by ``Add``; ``org.openvinotoolkit`` ``DeformableConv2D`` (inputs ``X, offsets, W[,
mask]``) with ``false``. Other ranks than 2D are refused (OpenVINO has none)."""

from __future__ import annotations

from .....errors import UnsupportedError, where
from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...export_table import exporter
from ...net_writer import NetWriter
from .write import _auto, _bias

V8 = "opset8"


def _data(node: Node, groups_key: str, pad: bool) -> dict:
    a = node.attrs
    pads = list(a.get("pads") or [0, 0, 0, 0])
    if len(pads) != 4:
        raise UnsupportedError(f"{where(node)}: OpenVINO's DeformableConvolution is 2D only")
    return {"strides": list(a.get("strides") or [1, 1]), "pads_begin": pads[:2],
            "pads_end": pads[2:], "dilations": list(a.get("dilations") or [1, 1]),
            "auto_pad": _auto(node), "group": int(a.get("group", 1)),
            "deformable_group": int(a.get(groups_key, 1)), "bilinear_interpolation_pad": pad}


def _check_2d(node: Node, w) -> None:
    if w is not None and w.shape is not None and len(w.shape) != 4:
        raise UnsupportedError(f"{where(node)}: OpenVINO's DeformableConvolution is 2D only")


@exporter("DeformConv", since=19)
def _deform_conv(w: NetWriter, node: Node, ins):
    x, weights, offset = ins[0], ins[1], ins[2]
    _check_2d(node, weights)
    bias = ins[3] if len(ins) > 3 else None
    mask = ins[4] if len(ins) > 4 else None
    ports = [x, offset, weights] + ([mask] if mask is not None else [])
    y = w.one("DeformableConvolution", V8, ports, _data(node, "offset_group", True),
              dtype=x.dtype)
    return _bias(w, y, bias, 2)


@exporter("DeformableConv2D", since=1, domain=DOMAIN)
def _deformable_conv_2d(w: NetWriter, node: Node, ins):
    _check_2d(node, ins[2])
    ports = [p for p in ins[:4] if p is not None]
    return w.one("DeformableConvolution", V8, ports, _data(node, "deformable_groups", False),
                 dtype=ins[0].dtype)
