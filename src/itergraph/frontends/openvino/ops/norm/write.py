"""ONNX normalisations -> OpenVINO layers: ``GroupNormalization`` (opset 21, per-channel scale
and bias) is ``GroupNormalization-12``; opset 18's per-group scale and bias are refused."""

from __future__ import annotations

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from ...export_table import exporter
from ...net_writer import NetWriter


@exporter("GroupNormalization", since=18)
def _group_norm18(w: NetWriter, node: Node, ins):
    raise UnsupportedError(f"{where(node)}: GroupNormalization-18 (per-group scale and bias) "
                           "has no OpenVINO counterpart")


@exporter("GroupNormalization", since=21)
def _group_norm(w: NetWriter, node: Node, ins):
    data = {"num_groups": int(node.attrs["num_groups"]),
            "epsilon": float(attr_or_default(node, "epsilon"))}
    return w.one("GroupNormalization", "opset12", ins[:3], data, dtype=ins[0].dtype,
                 shape=ins[0].shape)
