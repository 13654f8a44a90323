"""One OpenVINO network being written: layers, edges, weights, and the IR values they carry.

`NetWriter` writes the model or one loop/If body as ``<layers>`` and ``<edges>``: it appends
layers (`layer`, `one`, `const`, `parameter`, `result`), maps IR values to the ports that carry
them (`get`, `bind`), and writes IR nodes through the export table (`write_nodes`). `Weights`
assembles the ``.bin`` that every network of a model shares. `Out` is one output port of a
written layer.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from ...errors import ModelError, UnsupportedError, where, writing
from ...ir.graph import Graph, Node, Value
from ...ir.types import DataType, TensorType
from ...passes.inline_if import inline_if
from ..onnx.contrib_expand import expansion as contrib_expansion
from ..onnx.schema_functions import expansion
from .elements import encode, from_numpy, to_element_type, to_precision
from .export_table import EXPORTERS
from .port_names import join_names, split_names


@dataclass(frozen=True)
class Out:
    """An output port of a written layer, with the element type and shape it carries."""

    layer: int
    port: int
    dtype: DataType | None
    shape: tuple | None  # dims (None entries unknown), or None for unknown rank
    net: int  # id() of the NetWriter it belongs to


class Weights:
    """The ``.bin`` being assembled; identical constants share their bytes."""

    def __init__(self):
        self.chunks: list[bytes] = []
        self.size = 0
        self.index: dict[bytes, int] = {}

    def add(self, data: bytes) -> int:
        off = self.index.get(data)
        if off is not None:
            return off
        off = self.size
        self.chunks.append(data)
        self.size += len(data)
        if len(data) >= 8:
            self.index[data] = off
        return off


def used_weights(root: ET.Element, weights: Weights) -> bytes:
    """The ``.bin`` holding only the bytes the ``Const`` layers under `root` (at any depth)
    read; their offsets are rewritten to match."""
    blob = b"".join(weights.chunks)
    chunks: list[bytes] = []
    moved: dict[tuple[int, int], int] = {}
    size = 0
    for el in root.iter("layer"):
        data = el.find("data")
        if el.get("type") != "Const" or data is None:
            continue
        key = (int(data.get("offset")), int(data.get("size")))
        if key not in moved:
            moved[key] = size
            chunks.append(blob[key[0]:key[0] + key[1]])
            size += key[1]
        data.set("offset", str(moved[key]))
    return b"".join(chunks)


def dims_attr(shape) -> str:
    if shape is None:
        return "..."
    return ",".join("?" if not isinstance(d, int) else str(d) for d in shape)


def value_dtype(v: Value | None) -> DataType | None:
    t = v.type if v is not None else None
    return t.dtype if isinstance(t, TensorType) else None


def value_shape(v: Value | None):
    t = v.type if v is not None else None
    if isinstance(t, TensorType) and t.shape is not None:
        return tuple(d if isinstance(d, int) else None for d in t.shape)
    return None


class NetWriter:
    """Writes one network (the model, or a loop/If body) as ``<layers>`` and ``<edges>``."""

    def __init__(self, weights: Weights, parent: NetWriter | None = None, scope: str = ""):
        self.weights = weights
        self.parent = parent
        self.scope = scope
        self.layers: list[ET.Element] = []
        self.edges: list[tuple[int, int, int, int]] = []
        self.env: dict[int, Out] = {}  # Value uid -> the port carrying it
        #: what shape inference found for the graph written (`known_shapes`; the root's)
        self.inferred = parent.inferred if parent else None
        self.used_names: set[str] = set()
        self._next = 0
        self.consts: dict[tuple, Out] = {}
        self.port_el: dict[tuple[int, int], ET.Element] = {}

    # -- tentative writes ------------------------------------------------------------------
    def mark(self) -> tuple:
        """A point to `rollback` to: what has been written so far."""
        return len(self.layers), len(self.edges), set(self.used_names)

    def rollback(self, mark: tuple) -> None:
        """Forget every layer, edge and tensor name written since `mark` (`used_weights`
        leaves their weights out of the ``.bin``)."""
        n_layers, n_edges, names = mark
        first = int(self.layers[n_layers].get("id")) if n_layers < len(self.layers) \
            else self._next
        del self.layers[n_layers:], self.edges[n_edges:]
        self._next = first
        self.used_names = names
        self.consts = {k: o for k, o in self.consts.items() if o.layer < first}
        self.port_el = {k: e for k, e in self.port_el.items() if k[0] < first}
        self.env = {k: o for k, o in self.env.items() if o.layer < first}

    # -- layers ----------------------------------------------------------------------------
    def layer(self, type_: str, version: str, inputs: list[Out], data: dict | None = None,
              outputs: list[tuple[DataType | None, tuple | None]] | None = None,
              name: str = "") -> list[Out]:
        """Append a layer fed by `inputs`; returns its output ports."""
        lid = self._next
        self._next += 1
        el = ET.Element("layer", {"id": str(lid), "name": name or f"{type_}_{lid}",
                                  "type": type_, "version": version})
        if data:
            ET.SubElement(el, "data", {k: _attr_str(v) for k, v in data.items()})
        if inputs:
            inp = ET.SubElement(el, "input")
            for i, src in enumerate(inputs):
                if src.net != id(self):
                    raise ModelError(f"{self.scope}internal: port from another network")
                _port(inp, i, src.dtype, src.shape)
                self.edges.append((src.layer, src.port, lid, i))
        outs = []
        if outputs:
            o_el = ET.SubElement(el, "output")
            for j, (dt, shape) in enumerate(outputs):
                pid = len(inputs) + j
                self.port_el[(lid, pid)] = _port(o_el, pid, dt, shape)
                outs.append(Out(lid, pid, dt, shape, id(self)))
        self.layers.append(el)
        return outs

    def one(self, type_: str, version: str, inputs: list[Out], data: dict | None = None,
            dtype: DataType | None = None, shape=None, name: str = "") -> Out:
        return self.layer(type_, version, inputs, data, [(dtype, shape)], name=name)[0]

    def const(self, arr, dtype: DataType | None = None, name: str = "") -> Out:
        a = np.asarray(arr)
        dt = dtype or from_numpy(a.dtype)
        element_type = to_element_type(dt, f"constant '{name}'")
        key = (dt, a.shape, a.tobytes()) if a.size <= 64 and a.dtype != object else None
        if key is not None and key in self.consts:
            return self.consts[key]
        data = encode(dt, a)
        off = self.weights.add(data)
        out = self.one("Const", "opset1", [], {
            "element_type": element_type,
            "shape": dims_attr(a.shape), "offset": off, "size": len(data)},
            dtype=dt, shape=a.shape, name=name)
        if key is not None:
            self.consts[key] = out
        return out

    def scalar(self, x: Out) -> Out:
        """`x` as a scalar: ONNX Runtime and ONNX's reference take a one-element vector where
        a scalar is due (Range's bounds, Pad's value), OpenVINO does not."""
        if x.shape == ():
            return x
        return self.one("Reshape", "opset1", [x, self.const(np.zeros(0, np.int64))],
                        {"special_zero": False}, dtype=x.dtype, shape=())

    def i64(self, values) -> Out:
        return self.const(np.asarray(values, dtype=np.int64))

    def parameter(self, name: str, dtype: DataType | None, shape, where_: str) -> Out:
        if dtype is None:
            raise UnsupportedError(f"{where_}: the element type of '{name}' is unknown; "
                                   "OpenVINO parameters need one")
        return self.one("Parameter", "opset1", [], {
            "shape": dims_attr(shape), "element_type": to_element_type(dtype, where_)},
            dtype=dtype, shape=shape, name=name)

    def result(self, src: Out, name: str = "") -> int:
        lid = self._next
        self.layer("Result", "opset1", [src], name=name or f"Result_{lid}")
        return lid

    def name_port(self, out: Out, name: str) -> None:
        """Give the tensor on `out` the name `name` (OpenVINO ``names`` attribute)."""
        p = self.port_el.get((out.layer, out.port))
        if p is None or not name or name in self.used_names:
            return
        self.used_names.add(name)
        p.set("names", join_names(split_names(p.get("names")) + (name,)))

    # -- values ----------------------------------------------------------------------------
    def get(self, v: Value | None, node: Node | None = None) -> Out | None:
        """The port carrying IR value `v` in this network."""
        if v is None:
            return None
        out = self.env.get(v.uid)
        if out is not None:
            return out
        if v.const is not None:
            out = self.const(v.const, value_dtype(v) if value_dtype(v) in _CONST_OK else None,
                             name=v.name)
            self.env[v.uid] = out
            return out
        raise ModelError(f"{where(node)}: value '{v.name}' is not available in "
                         f"{self.scope or 'the model'} (not a graph input, initializer, "
                         "earlier output, or body input)")

    def bind(self, v: Value, out: Out) -> Out:
        dt = value_dtype(v) or out.dtype
        shape = value_shape(v) if value_shape(v) is not None else out.shape
        if out.shape is None and shape is not None and v.meta.get("value_info"):
            # a shape that infer-shapes found: the port states it (shapes.infer_shapes)
            el = self.port_el.get((out.layer, out.port))
            if el is not None and el.find("dim") is None:
                for d in shape:
                    ET.SubElement(el, "dim").text = str(d) if isinstance(d, int) else "-1"
        out = Out(out.layer, out.port, dt, shape, out.net)
        self.env[v.uid] = out
        return out

    # -- graphs ----------------------------------------------------------------------------
    def write_nodes(self, graph: Graph, nodes: list[Node] | None = None) -> None:
        """Write `nodes` (default: all) of `graph`, in graph order."""
        for node in (graph.nodes if nodes is None else nodes):
            fn = EXPORTERS.lookup(node.op_type, node.version, node.domain)
            if fn is None and self._write_expanded(node):
                continue
            if fn is None:
                raise UnsupportedError(
                    f"{where(node)}: the OpenVINO writer cannot express op "
                    f"{(node.domain + '.') if node.domain else ''}{node.op_type}"
                    f"{'-' + str(node.version) if node.version else ''}"
                )
            with writing(node, "OpenVINO IR"):
                ins = [self.get(v, node) for v in node.inputs]
                outs = fn(self, node, ins)
            if isinstance(outs, Out):
                outs = [outs]
            if len(outs) != len(node.outputs):
                raise ModelError(f"{where(node)}: internal: {len(outs)} ports for "
                                 f"{len(node.outputs)} outputs")
            for v, o in zip(node.outputs, outs):
                if o is not None:
                    self.bind(v, o)

    def _write_expanded(self, node: Node) -> bool:
        """Write `node` as the nodes of ONNX's function body for it (`schema_functions`), or
        an ONNX Runtime contrib op as standard nodes (`contrib_expand`); False when there is
        no such form. A branch on the node's static shapes
        (``AffineGrid``'s rank) is taken here: OpenVINO checks both branches' shapes."""
        body = expansion(node) or contrib_expansion(node)
        if body is None:
            return False
        inline_if(body)
        present = [v for v in node.inputs if v is not None]
        for formal, actual in zip(body.inputs, present):
            self.env[formal.uid] = self.get(actual, node)
        self.write_nodes(body)
        for v, o in zip(node.outputs, body.outputs):
            self.bind(v, self.get(o, node))
        return True

    def eval_cone(self, graph: Graph, target: Value, subst: dict[int, Out]) -> Out:
        """Write again the nodes of `graph` that `target` depends on, with the values in
        `subst` (uid -> port) in place of theirs; returns the port carrying `target`."""
        producers = {v.uid: n for n in graph.nodes for v in n.outputs}
        needed: set[int] = set()
        stack = [target]
        while stack:
            v = stack.pop()
            n = producers.get(v.uid) if v is not None and v.uid not in subst else None
            if n is None or id(n) in needed:
                continue
            needed.add(id(n))
            stack.extend(n.reads())
        saved = self.env
        self.env = {**saved, **subst}
        try:
            self.write_nodes(graph, [n for n in graph.nodes if id(n) in needed])
            return self.get(target)
        finally:
            self.env = saved

    def element(self, tag: str = "body") -> ET.Element:
        """The network as an element; ``Const`` layers nothing reads are left out (translators
        may materialise a constant and then use a rearranged copy of it)."""
        read = {fl for fl, _, _, _ in self.edges}
        root = ET.Element(tag)
        layers = ET.SubElement(root, "layers")
        layers.extend(el for el in self.layers
                      if el.get("type") != "Const" or int(el.get("id")) in read)
        edges = ET.SubElement(root, "edges")
        for fl, fp, tl, tp in sorted(self.edges, key=lambda e: (e[2], e[3])):
            ET.SubElement(edges, "edge", {"from-layer": str(fl), "from-port": str(fp),
                                          "to-layer": str(tl), "to-port": str(tp)})
        return root


_CONST_OK = {dt for dt in DataType if dt not in (DataType.STRING, DataType.COMPLEX64,
                                                    DataType.COMPLEX128)}


def _attr_str(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return ",".join(_attr_str(x) for x in v)
    if isinstance(v, float):
        return repr(float(v))
    return str(v)


def _port(parent: ET.Element, pid: int, dt: DataType | None, shape) -> ET.Element:
    p = ET.SubElement(parent, "port", {"id": str(pid), "precision": to_precision(dt)})
    if shape is not None:
        for d in shape:
            ET.SubElement(p, "dim").text = str(d) if isinstance(d, int) else "-1"
    return p
