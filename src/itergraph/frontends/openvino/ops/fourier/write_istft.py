"""``org.openvinotoolkit`` ``ISTFT`` -> OpenVINO ``ISTFT-16``, inputs and attributes kept."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...export_table import exporter
from ...net_writer import NetWriter


@exporter("ISTFT", since=1, domain=DOMAIN)
def _istft(w: NetWriter, node: Node, ins):
    data = {k: bool(int(node.attrs.get(k, 0))) for k in ("center", "normalized")}
    ports = [p for p in ins[:5] if p is not None]
    return w.one("ISTFT", "opset16", ports, data, dtype=ins[0].dtype)
