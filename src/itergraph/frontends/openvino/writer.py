"""IR graph -> OpenVINO IR v11 (``.xml`` + ``.bin``).

``write(graph, xml_path, bin_path=None)``: the ``.bin`` goes beside the ``.xml`` by default.
Graph inputs become ``Parameter`` layers (their element type must be known), initializers and
ONNX ``Constant`` nodes ``Const`` layers, graph outputs ``Result`` layers; every other node is
translated by the export table (`export_table`: ONNX op -> OpenVINO layers) through a
`net_writer.NetWriter`. Canonical loops
become ``TensorIterator-1`` or ``Loop-5`` and ONNX ``If`` becomes ``If-8`` (`export_loops`).
Values a loop body or branch takes from an enclosing graph become extra body inputs, since
OpenVINO bodies see nothing but their Parameters.

Port precisions come from the IR value types, or from the op's type rule when the IR does not
say (OpenVINO re-derives types itself, but the precision must name a type).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from ...errors import ModelError
from ...ir.graph import Graph
from ...passes.pipelines import OPENVINO_WRITE, rewritten_copy

# the translator modules register their ops in the export table when imported
from . import (  # noqa: F401
    export_conv,
    export_ctc_loss,
    export_deform,
    export_detect,
    export_detect_post,
    export_dft,
    export_istft,
    export_loops,
    export_masks,
    export_nms,
    export_norm,
    export_ops,
    export_psroi,
    export_quant,
    export_quant_onnx,
    export_random,
    export_resize,
    export_rnn,
    export_same,
    export_sparse,
    export_state,
    export_strings,
)
from .net_writer import NetWriter, Weights, used_weights, value_dtype, value_shape


def write(graph: Graph, xml_path, bin_path=None) -> None:
    """Write `graph` as OpenVINO IR v11 to `xml_path` (and `bin_path`, default beside it)."""
    xml_path = os.fspath(xml_path)
    bin_path = os.fspath(bin_path) if bin_path is not None else \
        os.path.splitext(xml_path)[0] + ".bin"
    xml_bytes, weights = to_bytes(graph)
    with open(bin_path, "wb") as f:
        f.write(weights)
    with open(xml_path, "wb") as f:
        f.write(xml_bytes)


def _rewritten(graph: Graph) -> Graph:
    """`graph`, or a copy rewritten by `passes.pipelines.OPENVINO_WRITE` where a pass applies
    (lists built in loops become scan outputs, as OpenVINO's own ONNX frontend makes them)."""
    return rewritten_copy(OPENVINO_WRITE, graph)


def to_bytes(graph: Graph) -> tuple[bytes, bytes]:
    """The ``.xml`` document and the ``.bin`` contents for `graph`."""
    graph = _rewritten(graph)
    weights = Weights()
    nw = NetWriter(weights)
    if graph.captures():
        names = [v.name for v in graph.captures()]
        raise ModelError(f"graph '{graph.name}' uses values it does not define: {names}")
    for v in graph.inputs:
        out = nw.parameter(v.name, value_dtype(v), value_shape(v), f"graph input '{v.name}'")
        nw.name_port(out, v.name)
        nw.bind(v, out)
    for v in graph.initializers:
        nw.get(v)
    nw.write_nodes(graph)
    for v in graph.outputs:
        out = nw.get(v)
        nw.name_port(out, v.name)
        nw.result(out, name=f"{v.name}/sink_port_0")
    net = nw.element("net")
    net.set("name", graph.name or "model")
    net.set("version", "11")
    data = used_weights(net, weights)
    ET.indent(net, "\t")
    xml_bytes = b'<?xml version="1.0"?>\n' + ET.tostring(net, encoding="utf-8")
    return xml_bytes, data
