"""``org.openvinotoolkit`` random ops -> OpenVINO layers: ``RandomUniform`` is
``RandomUniform-8``, ``Multinomial`` ``Multinomial-13``, attributes as OpenVINO spells them."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from .....ir.types import DataType
from ...elements import to_element_type
from ...export_table import exporter
from ...net_writer import NetWriter, value_shape


def _type(node: Node, name: str) -> DataType:
    return DataType.from_onnx(int(node.attrs[name]))


@exporter("RandomUniform", since=1, domain=OPENVINO_DOMAIN)
def _random_uniform(w: NetWriter, node: Node, ins):
    dt = _type(node, "output_type")
    data = {"output_type": to_element_type(dt, node.name),
            "global_seed": int(node.attrs.get("global_seed", 0)),
            "op_seed": int(node.attrs.get("op_seed", 0)),
            "alignment": str(node.attrs.get("alignment", "tensorflow"))}
    return w.one("RandomUniform", "opset8", ins[:3], data, dtype=dt,
                 shape=value_shape(node.outputs[0]))


@exporter("Multinomial", since=1, domain=OPENVINO_DOMAIN)
def _multinomial(w: NetWriter, node: Node, ins):
    dt = _type(node, "convert_type")
    flag = {0: "false", 1: "true"}
    data = {"convert_type": to_element_type(dt, node.name),
            "with_replacement": flag[int(node.attrs.get("with_replacement", 0))],
            "log_probs": flag[int(node.attrs.get("log_probs", 0))],
            "global_seed": int(node.attrs.get("global_seed", 0)),
            "op_seed": int(node.attrs.get("op_seed", 0))}
    return w.one("Multinomial", "opset13", ins[:2], data, dtype=dt,
                 shape=value_shape(node.outputs[0]))
