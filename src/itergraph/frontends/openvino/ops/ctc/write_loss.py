"""``org.openvinotoolkit`` ``CTCLoss`` -> OpenVINO ``CTCLoss-4``."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from ...export_table import exporter
from ...net_writer import NetWriter


@exporter("CTCLoss", since=1, domain=OPENVINO_DOMAIN)
def _ctc_loss(w: NetWriter, node: Node, ins):
    attrs = {k: "true" if int(node.attrs.get(k, d)) else "false" for k, d in
             (("preprocess_collapse_repeated", 0), ("ctc_merge_repeated", 1), ("unique", 0))}
    shape = ins[0].shape[:1] if ins[0].shape is not None else None
    return w.one("CTCLoss", "opset4", ins, attrs, dtype=ins[0].dtype, shape=shape)
