"""``org.openvinotoolkit`` ops -> OpenVINO layers: ``FakeQuantize`` is ``FakeQuantize-1``,
``GatherTree`` ``GatherTree-1``, ``Inverse`` ``Inverse-14``."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from ...export_table import exporter
from ...net_writer import NetWriter
from ..basic.write import V1


@exporter("FakeQuantize", since=1, domain=OPENVINO_DOMAIN)
def _fake_quantize(w: NetWriter, node: Node, ins):
    return w.one("FakeQuantize", V1, ins[:5], {"levels": int(node.attrs["levels"]),
                                               "auto_broadcast": "numpy"},
                 dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("GatherTree", since=1, domain=OPENVINO_DOMAIN)
def _gather_tree(w: NetWriter, node: Node, ins):
    return w.one("GatherTree", V1, ins[:4], dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("Inverse", since=1, domain=OPENVINO_DOMAIN)
def _inverse(w: NetWriter, node: Node, ins):
    adjoint = "true" if int(node.attrs.get("adjoint", 0)) else "false"
    return w.one("Inverse", "opset14", ins[:1], {"adjoint": adjoint}, dtype=ins[0].dtype,
                 shape=ins[0].shape)
