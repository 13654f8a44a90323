"""``org.openvinotoolkit`` ``SparseFillEmptyRows`` -> OpenVINO ``SparseFillEmptyRows-16``."""

from __future__ import annotations

from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter


@exporter("SparseFillEmptyRows", since=1, domain=OPENVINO_DOMAIN)
def _sparse_fill_empty_rows(w: NetWriter, node: Node, ins):
    return w.layer("SparseFillEmptyRows", "opset16", ins[:4], {},
                   [(ins[2].dtype, None), (ins[0].dtype, None), (DataType.BOOL, None)])
