"""OpenVINO IR (v10, v11) ``.xml`` + ``.bin`` -> IR graph.

``read(xml, bin=None)``: `xml` is a path, or the document itself (``bytes``, or a ``str``
starting with ``<``); `bin` a path or the weights as ``bytes``; by default the ``.bin`` beside
the ``.xml`` (none when the document is given as text and a constant needs weights: error).

Each layer becomes ONNX-standard IR nodes through the import table (`import_table`):
``Parameter`` -> graph input, ``Const`` -> initializer (offset/size checked against the
``.bin`` and against shape x element size), ``Result`` -> graph output (in XML order); every
other layer, ``TensorIterator``/``Loop`` (-> the canonical `Loop`) and ``If`` included, goes
through the table (their bodies come back here through `Builder.body`, at most
`MAX_BODY_DEPTH` deep). An op without a translator is an `UnsupportedError` naming the layer
id, name, type and version.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from ...errors import Error, InputError, ModelError, UnsupportedError
from ...ir.graph import Graph, Value
from ...ir.state import variables
from ...ir.types import TensorType
from ..onnx.schema_check import check_shared_types
from . import ops, xmlsafe
from .builder import OPSET, Builder, dtype_of
from .elements import ELEMENT_TYPES, byte_size, decode, element_type_name, from_element_type
from .import_table import IMPORTERS
from .netparse import Layer, LayerRef, Net, NetworkBuilder, parse_net, parse_shape_attr

ops.load("read")  # every family's importers into IMPORTERS

SUPPORTED_VERSIONS = (10, 11)
MAX_OPSET = 16  # the newest opset OpenVINO's IR reader accepts
MAX_BODY_DEPTH = 32


@dataclass
class Built:
    """A network converted to a graph, with its Parameter and Result layers by id."""

    graph: Graph
    params: dict[int, Value] = field(default_factory=dict)
    results: dict[int, Value] = field(default_factory=dict)
    layers: dict[int, Layer] = field(default_factory=dict)


def read(xml, bin=None) -> Graph:
    """Read an OpenVINO IR model into an IR `Graph` (see the module docstring)."""
    source, xml_path = _open_xml(xml)
    try:
        weights = _load_bin(bin, xml_path)
        root = xmlsafe.parse(_chunks(source, xml_path) if xml_path else source,
                             what=xml_path or "OpenVINO IR", builder=NetworkBuilder())
    finally:
        if xml_path:
            source.close()
    if root.tag != "net":
        raise ModelError(f"OpenVINO IR: the root element is <{root.tag}>, expected <net>")
    try:
        version = int(root.get("version", ""))
    except ValueError:
        raise ModelError(f"OpenVINO IR: bad IR version '{root.get('version')}'") from None
    if version not in SUPPORTED_VERSIONS:
        raise UnsupportedError(f"OpenVINO IR version {version} is not supported (only 10 and 11)")
    missing = (os.path.splitext(xml_path)[0] + ".bin"
               if weights is None and bin is None and xml_path else None)
    reader = Reader(weights, missing)
    try:
        built = reader.build(parse_net(root), root.get("name") or "openvino_model", top=True)
    except RecursionError:
        raise ModelError("OpenVINO IR: the model nests too deeply") from None
    g = built.graph
    variables(g)  # a state layer's errors name it now, not at the first run
    g.opset_imports = {"": OPSET, "itergraph": 1}
    g.meta["openvino_ir_version"] = version
    return g


def _open_xml(xml):
    """(the document as bytes, None), or (an open binary file, its path)."""
    if isinstance(xml, bytes | bytearray | memoryview):
        return bytes(xml), None
    if isinstance(xml, str) and xml.lstrip().startswith("<"):
        return xml.encode("utf-8"), None
    try:
        path = os.fspath(xml)
    except TypeError:
        raise InputError(f"an OpenVINO model is a path, bytes or XML text, not "
                         f"{type(xml).__name__}") from None
    try:
        return open(path, "rb"), path  # closed by `read`
    except OSError as e:
        raise ModelError(f"cannot read OpenVINO IR '{path}': {e.strerror}") from None


def _chunks(f, path: str):
    """The file's bytes, `xmlsafe.CHUNK` at a time (the document is never held whole)."""
    while True:
        try:
            chunk = f.read(xmlsafe.CHUNK)
        except OSError as e:
            raise ModelError(f"cannot read OpenVINO IR '{path}': {e.strerror}") from None
        if not chunk:
            return
        yield chunk


def _load_bin(bin, xml_path: str | None) -> bytes | None:
    if isinstance(bin, bytes | bytearray | memoryview):
        return bytes(bin)
    if bin is None:
        if xml_path is None:
            return None
        path = os.path.splitext(xml_path)[0] + ".bin"
        if not os.path.exists(path):
            return None
    else:
        try:
            path = os.fspath(bin)
        except TypeError:
            raise InputError(f"OpenVINO weights must be a path or bytes, not "
                             f"{type(bin).__name__}") from None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ModelError(f"cannot read OpenVINO weights '{path}': {e.strerror}") from None


class Reader:
    """Converts parsed networks into graphs; holds the weights and the body nesting depth."""

    def __init__(self, weights: bytes | None, bin_path: str | None = None):
        self.weights = weights
        self.bin_path = bin_path  # where the weights were looked for, when they were not found
        self.depth = 0

    def build(self, net: Net, name: str, top: bool = False) -> Built:
        graph = Graph(name)
        built = Built(graph, layers=net.layers)
        b = Builder(graph, prefix=f"{name}/" if not top else "", reader=self)
        values: dict[tuple[int, int], Value] = {}
        claimed: set[int] = set()
        result_order: list[tuple[int, Value]] = []
        for layer in net.order():
            ins = [values[s] for s in net.sources[layer.id]]
            t = layer.type
            self._known_opset(layer)
            if t == "Parameter":
                v = self._parameter(layer)
                graph.inputs.append(v)
                built.params[layer.id] = v
                outs = [v]
            elif t == "Const":
                outs = [self._const(b, layer)]
            elif t == "Result":
                if len(ins) != 1:
                    raise ModelError(f"{layer.where()}: a Result has exactly one input")
                v = ins[0]
                if not top and any(v is r for r in built.results.values()):
                    # each body Result gets its own value: a loop binds ports to Results, and
                    # two ports must not be confused through a shared value
                    v = b.op("Identity", [v], dtype=dtype_of(v), name=f"{layer.name}/copy")
                    v.type = ins[0].type
                built.results[layer.id] = v
                result_order.append((layer.id, v))
                continue
            else:
                outs = self._translate(b, layer, ins)
            for i, v in enumerate(outs):
                if v.uid in claimed or any(v is x for x in ins):
                    v = b.op("Identity", [v], dtype=dtype_of(v))
                claimed.add(v.uid)
                self._label(layer, i, v)
                values[(layer.id, i)] = v
        outputs = []
        position = {lid: i for i, lid in enumerate(net.layers)}
        for lid, v in sorted(result_order, key=lambda e: position[e[0]]):
            if top and (v.producer is None or any(v is o for o in outputs)):
                # a graph output that is an input, a constant, or listed twice: give it its own
                # value so that every output has its own name
                w = b.op("Identity", [v], dtype=dtype_of(v), name=net.layers[lid].name)
                w.type = v.type
                w.name = net.layers[lid].name or w.name
                v = w
                built.results[lid] = v
            outputs.append(v)
        graph.outputs = outputs
        return built

    def body(self, net: Net, name: str, where: str) -> Built:
        """Convert a loop body or If branch of the layer at `where` (see `Builder.body`)."""
        if self.depth >= MAX_BODY_DEPTH:
            raise ModelError(f"{where}: loop bodies and If branches nest deeper than "
                             f"{MAX_BODY_DEPTH} levels")
        self.depth += 1
        try:
            return self.build(net, name)
        finally:
            self.depth -= 1

    # -- layers ----------------------------------------------------------------------------
    def _parameter(self, layer: Layer) -> Value:
        if len(layer.outputs) != 1 or layer.inputs:
            raise ModelError(f"{layer.where()}: a Parameter has no inputs and one output")
        port = layer.outputs[0]
        et = layer.attr("element_type")
        dt = from_element_type(element_type_name(et), layer.where()) if et else port.dtype
        shape_attr = layer.attr("shape")
        shape = (parse_shape_attr(shape_attr, layer.where()) if shape_attr is not None
                 else (port.shape or None))
        name = port.names[0] if port.names else (layer.name or f"param_{layer.id}")
        return Value(name, TensorType(dt, shape))

    def _const(self, b: Builder, layer: Layer) -> Value:
        where = layer.where()
        if len(layer.outputs) != 1 or layer.inputs:
            raise ModelError(f"{where}: a Const has no inputs and one output")
        port = layer.outputs[0]
        et = layer.attr("element_type")
        if et is None:  # legacy form: the type is the port precision
            if port.dtype is None:
                raise ModelError(f"{where}: no element_type and no port precision")
            name = next(k for k, (dt, _) in ELEMENT_TYPES.items() if dt == port.dtype)
        else:
            name = element_type_name(et)
        dt = from_element_type(name, where)  # validates the name
        shape_attr = layer.attr("shape")
        shape = parse_shape_attr(shape_attr, where) if shape_attr is not None else port.shape
        if shape is None or any(not isinstance(d, int) for d in shape):
            raise ModelError(f"{where}: a constant needs a static shape, got '{shape_attr}'")
        offset = layer.int_attr("offset", required=True)
        size = layer.int_attr("size", required=True)
        if offset < 0 or size < 0:
            raise ModelError(f"{where}: negative offset {offset} or size {size}")
        count = math.prod(shape)  # Python integers: no int64 overflow to hide a huge shape
        need = byte_size(name, count)
        if need == 0 and size <= 8:  # OpenVINO stores an empty constant with a byte or so
            size = 0
        if need is not None and size != need:
            raise ModelError(f"{where}: size {size} bytes does not match shape {list(shape)} "
                             f"of element type {name} ({need} bytes)")
        if self.weights is None:
            looked = (f": '{self.bin_path}' does not exist" if self.bin_path
                      else ", and none was given")
            raise ModelError(f"{where}: the constant needs a .bin file{looked}")
        if offset + size > len(self.weights):
            raise ModelError(f"{where}: bytes {offset}..{offset + size} lie beyond the end of "
                             f"the .bin ({len(self.weights)} bytes)")
        arr = decode(name, self.weights[offset:offset + size], tuple(shape), where)
        if port.dtype is not None and dt is not None and port.dtype != dt:
            # OpenVINO goes by element_type; a reader of the port would take another type
            raise ModelError(f"{where}: element_type '{name}' but its output port says "
                             f"{port.dtype.value}")
        v = b.const(arr, name=port.names[0] if port.names else (layer.name or f"const_{layer.id}"))
        v.type = TensorType(v.type.dtype, tuple(shape))
        return v

    def _translate(self, b: Builder, layer: Layer, ins: list[Value]) -> list[Value]:
        first = len(b.graph.nodes)
        outs = self._translate_layer(b, layer, ins)
        element = LayerRef(layer.scope, layer.id, layer.name, layer.type, layer.version)
        for node in b.graph.nodes[first:]:  # every node the layer became names the layer
            node.meta.setdefault("element", element)
            if node.domain == "" and node.version is not None:
                # OpenVINO's spec wants one element type where ONNX's binds one (Add, Select's
                # branches, Concat, MatMul...): OpenVINO refuses such a mix, NumPy promotes
                check_shared_types(node.op_type, node.version, node.inputs, layer.where(),
                                   node.outputs)
        return outs

    @staticmethod
    def _known_opset(layer: Layer) -> None:
        """Every layer's version (Parameter, Const and Result too) is an opset OpenVINO has."""
        if layer.opset is not None and layer.opset > MAX_OPSET:
            raise UnsupportedError(f"{layer.where()}: OpenVINO has no {layer.version} (this "
                                   f"reader knows opset1 to opset{MAX_OPSET})")

    def _translate_layer(self, b: Builder, layer: Layer, ins: list[Value]) -> list[Value]:
        self._known_opset(layer)
        opset = layer.opset
        fn = IMPORTERS.lookup(layer.type, opset) if opset is not None else None
        if fn is None:
            raise UnsupportedError(
                f"{layer.where()}: no translation for OpenVINO op {layer.type} "
                f"(version '{layer.version or 'opset1'}')"
            )
        try:
            outs = fn(b, layer, ins)
        except Error:
            raise
        except (IndexError, ValueError, TypeError, KeyError) as e:
            raise ModelError(f"{layer.where()}: cannot translate: {e}") from None
        if isinstance(outs, Value):
            outs = [outs]
        outs = list(outs)
        if len(outs) != len(layer.outputs):
            raise ModelError(f"{layer.where()}: the layer declares {len(layer.outputs)} output "
                             f"ports, the op has {len(outs)} outputs")
        return outs

    @staticmethod
    def _label(layer: Layer, i: int, v: Value) -> None:
        port = layer.outputs[i] if i < len(layer.outputs) else None
        if port is not None:
            if port.names:
                v.name = port.names[0]
            elif layer.type not in ("Parameter", "Const"):
                v.name = layer.name if len(layer.outputs) == 1 else f"{layer.name}:{i}"
            dt = port.dtype or dtype_of(v)
            old = v.type if isinstance(v.type, TensorType) else TensorType()
            shape = port.shape if port.shape else old.shape
            if layer.type in ("Parameter", "Const"):
                shape = old.shape
            v.type = TensorType(dt or old.dtype, shape)
