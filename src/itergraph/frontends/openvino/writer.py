"""IR graph -> OpenVINO IR v11 (``.xml`` + ``.bin``).

``write(graph, xml_path, bin_path=None)``: the ``.bin`` goes beside the ``.xml`` by default.
Graph inputs become ``Parameter`` layers (their element type must be known), initializers and
ONNX ``Constant`` nodes ``Const`` layers, graph outputs ``Result`` layers; every other node is
translated by the export table (`export_table`: ONNX op -> OpenVINO layers) through a
`net_writer.NetWriter`. Canonical loops
become ``TensorIterator-1`` or ``Loop-5`` and ONNX ``If`` becomes ``If-8`` (`ops.loops.write`).
Values a loop body or branch takes from an enclosing graph become extra body inputs, since
OpenVINO bodies see nothing but their Parameters.

Port precisions come from the IR value types, or from the op's type rule when the IR does not
say (OpenVINO re-derives types itself, but the precision must name a type).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from ...errors import ModelError
from ...ir.graph import Graph
from ...ir.types import DataType
from ...passes.pipelines import OPENVINO_WRITE, rewritten_copy
from . import ops
from .elements import to_element_type
from .known_shapes import Inferred, known_shapes
from .net_writer import NetWriter, Out, Weights, used_weights, value_dtype, value_shape
from .xml_chars import escape_controls, escape_nul_in_labels, nul_text

ops.load("write")  # every family's exporters into EXPORTERS


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


def _rewritten(graph: Graph) -> tuple[Graph, Inferred]:
    """`graph`, or a copy rewritten by `passes.pipelines.OPENVINO_WRITE` where a pass applies
    (lists built in loops become scan outputs, as OpenVINO's own ONNX frontend makes them),
    with the shapes of values the file left untyped where ONNX's inference finds them, and
    the ranks that inference finds for the ``If`` check (`known_shapes`)."""
    copy = rewritten_copy(OPENVINO_WRITE, graph)
    return known_shapes(copy, copied=copy is not graph)


def to_bytes(graph: Graph) -> tuple[bytes, bytes]:
    """The ``.xml`` document and the ``.bin`` contents for `graph`."""
    graph, inferred = _rewritten(graph)
    weights = Weights()
    nw = NetWriter(weights)
    nw.inferred = inferred
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
    outs = [nw.get(v) for v in graph.outputs]
    kept = _keep_loop_outputs(nw, outs)
    for i, v in enumerate(graph.outputs):
        out = outs[i] if i in kept else nw.get(v)  # (a repeated output: a port of its own)
        nw.name_port(out, v.name)
        nw.result(out, name=f"{v.name}/sink_port_0")
    net = nw.element("net")
    net.set("name", graph.name or "model")
    net.set("version", "11")
    data = used_weights(net, weights)
    escape_nul_in_labels(net)
    found = nul_text(net)
    if found is not None:
        layer, what, text = found
        raise ModelError(f"{layer.get('type')} layer '{layer.get('name')}': {what} {text!r} "
                         "holds a NUL character, which OpenVINO IR cannot hold (no XML "
                         "document can; OpenVINO's own writer cuts the name there)")
    ET.indent(net, "\t")
    xml_bytes = b'<?xml version="1.0"?>\n' + ET.tostring(net, encoding="utf-8")
    return escape_controls(xml_bytes), data


def _keep_loop_outputs(nw: NetWriter, outs: list[Out]) -> set[int]:
    """Keep every unread Loop/TensorIterator output of dynamic shape read, by a model output.

    OpenVINO 2026.4's CPU plugin, on static input shapes, computes a loop wrong from its
    second iteration on when a carried value that grows (a K/V cache grown by ``Concat``) is
    not read after the loop: the body reads garbage for it (its ONNX reader alike). Reading
    the value's shape is enough: the first numeric model output `o` becomes
    ``o - Convert(ReduceMin(ShapeOf(v)) * 0)`` (exact: ``-0.0 - 0`` stays ``-0.0``). Returns
    the positions of `outs` it replaced."""
    read = {(e[0], e[1]) for e in nw.edges} | {(o.layer, o.port) for o in outs if o is not None}
    loose = []
    for lid, el in enumerate(nw.layers):
        if el.get("type") not in ("Loop", "TensorIterator") or el.find("output") is None:
            continue
        for port in el.find("output"):
            pid = int(port.get("id"))
            dims = [d.text for d in port.findall("dim")]
            if (lid, pid) not in read and any(d is None or int(d) < 0 for d in dims):
                loose.append(Out(lid, pid, None, tuple([None] * len(dims)), id(nw)))
    target = next((j for j, o in enumerate(outs) if o is not None and o.dtype is not None
                   and o.dtype not in (DataType.BOOL, DataType.STRING)), None)
    if not loose or target is None:
        return set()
    zero = None
    for v in loose:
        shape = nw.one("ShapeOf", "opset3", [v], {"output_type": "i64"}, dtype=DataType.INT64,
                       shape=(len(v.shape),))
        low = nw.one("ReduceMin", "opset1", [shape, nw.i64([0])], {"keep_dims": False},
                     dtype=DataType.INT64, shape=())
        zero = low if zero is None else nw.one("Add", "opset1", [zero, low],
                                               {"auto_broadcast": "numpy"},
                                               dtype=DataType.INT64, shape=())
    zero = nw.one("Multiply", "opset1", [zero, nw.const(np.array(0, np.int64))],
                  {"auto_broadcast": "numpy"}, dtype=DataType.INT64, shape=())
    o = outs[target]
    if o.dtype != DataType.INT64:
        zero = nw.one("Convert", "opset1", [zero], {"destination_type": to_element_type(o.dtype)},
                      dtype=o.dtype, shape=())
    outs[target] = nw.one("Subtract", "opset1", [o, zero], {"auto_broadcast": "numpy"},
                          dtype=o.dtype, shape=o.shape)
    return {target}
