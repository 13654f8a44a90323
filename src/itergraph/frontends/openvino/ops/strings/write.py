"""``org.openvinotoolkit`` string-tensor ops -> OpenVINO layers: ``StringTensorUnpack`` is
``StringTensorUnpack-15`` (outputs i32, i32, u8), ``StringTensorPack`` ``StringTensorPack-15``."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter, value_shape


@exporter("StringTensorUnpack", since=1, domain=OPENVINO_DOMAIN)
def _unpack(w: NetWriter, node: Node, ins):
    shape = value_shape(node.outputs[0])
    return w.layer("StringTensorUnpack", "opset15", ins[:1], None,
                   [(DataType.INT32, shape), (DataType.INT32, shape), (DataType.UINT8, None)])


@exporter("StringTensorPack", since=1, domain=OPENVINO_DOMAIN)
def _pack(w: NetWriter, node: Node, ins):
    return w.one("StringTensorPack", "opset15", ins[:3], None, dtype=DataType.STRING,
                 shape=value_shape(node.outputs[0]))
