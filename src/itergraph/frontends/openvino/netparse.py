"""The structure of an OpenVINO IR network: layers, ports, edges (no op semantics here).

A network (the ``<net>`` root or a loop's ``<body>``) is a list of ``<layer>`` elements and a
list of ``<edge>`` elements. Each layer has ``<input>`` and ``<output>`` port lists; port ids
are unique within the layer (conventionally the inputs first, the outputs continuing the
count, but any ids are accepted). An edge connects output port ``from-port`` of layer
``from-layer`` to input port ``to-port`` of ``to-layer``. Every input port must be fed by
exactly one edge; the edges must not form a cycle (loops iterate through back edges, which
are not edges of the network).

Port types: ``precision`` (``FP32``...) and ``<dim>`` children; ``-1``, ``?`` and ranges
(``1..10``) are unknown dims (``None``).
"""

from __future__ import annotations

import heapq
import re
import xml.etree.ElementTree as ET
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ...errors import ModelError
from ...ir.types import DataType, Dim
from .elements import from_precision
from .port_names import split_names

INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Port:
    """One port of a layer; equal ports are one shared object (`NetParts.ports`)."""

    id: int
    dtype: DataType | None
    shape: tuple[Dim, ...]
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LayerRef:
    """Names one OpenVINO layer in messages about the IR nodes it became (``node.meta
    ["element"]``): small, shared by those nodes, formatted only when a message needs it."""

    scope: str
    id: int
    name: str
    type: str
    version: str

    def __str__(self) -> str:
        v = f"-{self.version}" if self.version else ""
        return f"OpenVINO {self.scope}layer {self.id} '{self.name}' ({self.type}{v})"


@dataclass(slots=True)
class Layer:
    """One ``<layer>``: its attributes, ``<data>`` and ports. `data`, `inputs` and `outputs`
    are read-only and shared between layers that have equal ones (`NetParts`). `elem` is the
    layer's element when it has other children (a loop's port maps and body), else the
    shared empty element `LEAF`."""

    id: int
    name: str
    type: str
    version: str
    data: Mapping[str, str]
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    elem: ET.Element
    scope: str = ""

    @property
    def opset(self) -> int | None:
        """The opset number of ``version="opsetN"`` (``1`` when the version is missing)."""
        if not self.version:
            return 1
        m = re.fullmatch(r"opset(\d+)", self.version)
        return int(m.group(1)) if m else None

    def where(self) -> str:
        v = f"-{self.version}" if self.version else ""
        return f"{self.scope}layer {self.id} '{self.name}' ({self.type}{v})"

    def attr(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        if key in self.data:
            return self.data[key]
        if required:
            raise ModelError(f"{self.where()}: missing attribute '{key}'")
        return default

    def int_attr(self, key: str, default: int | None = None, *, required: bool = False) -> int:
        s = self.attr(key, None, required=required)
        if s is None:
            return default  # type: ignore[return-value]
        try:
            return int(s.strip())
        except ValueError:
            raise ModelError(f"{self.where()}: attribute {key}='{s}' is not an integer") from None

    def float_attr(self, key: str, default: float | None = None) -> float:
        s = self.attr(key)
        if s is None:
            return default  # type: ignore[return-value]
        try:
            return float(s.strip())
        except ValueError:
            raise ModelError(f"{self.where()}: attribute {key}='{s}' is not a number") from None

    def bool_attr(self, key: str, default: bool = False) -> bool:
        s = self.attr(key)
        if s is None:
            return default
        v = s.strip().lower()
        if v in ("true", "1"):
            return True
        if v in ("false", "0"):
            return False
        raise ModelError(f"{self.where()}: attribute {key}='{s}' is not a boolean")

    def ints_attr(self, key: str, default: list[int] | None = None) -> list[int]:
        s = self.attr(key)
        if s is None:
            return list(default or [])
        try:
            return [int(x) for x in s.replace(" ", "").split(",") if x != ""]
        except ValueError:
            raise ModelError(f"{self.where()}: attribute {key}='{s}' is not a list of integers") \
                from None

    def strs_attr(self, key: str, default: list[str] | None = None) -> list[str]:
        s = self.attr(key)
        if s is None:
            return list(default or [])
        return [x.strip() for x in s.split(",") if x.strip()]


@dataclass
class Net:
    layers: dict[int, Layer]
    scope: str = ""
    # to_layer -> ( (from_layer, output index) per input index )
    sources: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def order(self) -> list[Layer]:
        """Layers in topological order (stable: XML order among ready layers)."""
        position = {lid: i for i, lid in enumerate(self.layers)}
        users: dict[int, list[int]] = {lid: [] for lid in self.layers}
        missing = {lid: 0 for lid in self.layers}
        for lid, srcs in self.sources.items():
            for src, _ in srcs:
                users[src].append(lid)
                missing[lid] += 1
        ready = [(position[lid], lid) for lid, n in missing.items() if n == 0]
        heapq.heapify(ready)
        out: list[Layer] = []
        while ready:
            _, lid = heapq.heappop(ready)
            out.append(self.layers[lid])
            for u in users[lid]:
                missing[u] -= 1
                if missing[u] == 0:
                    heapq.heappush(ready, (position[u], u))
        if len(out) != len(self.layers):
            stuck = [self.layers[lid] for lid, n in missing.items() if n > 0]
            raise ModelError(
                f"{self.scope}network has a cycle through {stuck[0].where()} "
                f"({len(stuck)} layers in or behind the cycle); only loop back edges may "
                "feed values back"
            )
        return out


def _int(s: str | None, what: str) -> int:
    if s is None:
        raise ModelError(f"{what} is missing")
    try:
        return int(s.strip())
    except ValueError:
        raise ModelError(f"{what}='{s}' is not an integer") from None


def parse_dim(text: str, what: str) -> Dim:
    t = (text or "").strip()
    if not t:  # OpenVINO: "dimension () ... must be greater or equal to -1"
        raise ModelError(f"{what}: an empty dimension")
    if t in ("-1", "?"):
        return None
    if ".." in t:
        lo, _, hi = t.partition("..")
        return int(lo) if lo and lo == hi and lo.isdigit() else None
    try:
        d = int(t)
    except ValueError:
        raise ModelError(f"{what}: dimension '{text}' is not an integer") from None
    if d < -1:
        raise ModelError(f"{what}: dimension {d} is negative")
    if d > INT64_MAX:
        raise ModelError(f"{what}: dimension {d} does not fit in int64")
    return None if d == -1 else d


def parse_shape_attr(text: str, what: str) -> tuple[Dim, ...] | None:
    """A ``shape="2,?,-1"`` attribute; ``"..."`` (or ``"?"`` alone for rank) is unknown rank."""
    t = text.strip()
    if t == "...":
        return None
    if t == "":
        return ()
    return tuple(parse_dim(x, what) for x in t.split(","))


_CONVERTED = frozenset({"data", "input", "output"})  # the children a Layer converts
LEAF = ET.Element("layer")  # `Layer.elem` of every layer with no other children


class NetParts:
    """The layers and edges of one network, turned into `Layer`s and edges one element at a
    time (as a streamed document delivers them), before the edges are connected.

    The scope of the network's messages is known only when `net` is called (a loop body's
    scope names its loop), so the first error in the layers and the first in the edges are
    kept, without the scope, and raised by `net` with it. After an error, further layers
    (edges) of the same network are not converted.

    Memory: what repeats across layers (type and version strings, ``<data>`` mappings, port
    tuples, short attribute values) is one shared object per distinct value (`shared`, one
    per document); edges are four int64 each in a flat array (a list past int64), dropped
    once `net` has connected them.
    """

    __slots__ = ("layers", "edges", "sources", "error", "edge_error", "shared", "has_layers",
                 "has_edges")

    def __init__(self, shared: dict | None = None):
        self.layers: dict[int, Layer] = {}
        self.edges: array | list[int] | None = array("q")  # from/to layer and port per edge
        self.sources: dict | None = None  # `Net.sources`, once connected (edges then None)
        self.error: ModelError | None = None
        self.edge_error: ModelError | None = None
        self.shared = {} if shared is None else shared  # value -> the one object kept for it
        self.has_layers = self.has_edges = False  # first <layers>/<edges> child seen

    @classmethod
    def of_tree(cls, root: ET.Element) -> NetParts:
        """The parts of a network given as a whole element tree."""
        parts = cls()
        layers_elem = root.find("layers")
        for el in (layers_elem.findall("layer") if layers_elem is not None else []):
            parts.add_layer(el)
        edges_elem = root.find("edges")
        for e in (edges_elem.findall("edge") if edges_elem is not None else []):
            parts.add_edge(e)
        return parts

    def _share(self, value):
        return self.shared.setdefault(value, value)

    def _short(self, s: str | None) -> str | None:
        return s if s is None or len(s) > 32 else self._share(s)

    def add_layer(self, el: ET.Element) -> None:
        if self.error is None:
            try:
                self._add_layer(el)
            except ModelError as e:
                self.error = e

    def add_edge(self, e: ET.Element) -> None:
        if self.edge_error is not None:
            return
        try:
            ends = (_int(e.get("from-layer"), "edge from-layer"),
                    _int(e.get("from-port"), "edge from-port"),
                    _int(e.get("to-layer"), "edge to-layer"),
                    _int(e.get("to-port"), "edge to-port"))
        except ModelError as err:
            self.edge_error = err
            return
        try:
            self.edges.extend(ends)
        except OverflowError:  # an id past int64: no layer has it, `net` says so
            self.edges = [*self.edges, *ends]

    def _add_layer(self, el: ET.Element) -> None:
        lid = _int(el.get("id"), "layer id")
        if lid in self.layers:
            raise ModelError(f"layer id {lid} appears twice")
        what = f"layer {lid} '{el.get('name')}'" if el.get("name") else f"layer {lid}"
        data_el = el.find("data")
        data = _NO_DATA
        if data_el is not None and data_el.attrib:
            items = tuple((k, self._short(v)) for k, v in data_el.attrib.items())
            data = self.shared.get(items)
            if data is None:
                data = self.shared[items] = MappingProxyType(dict(items))
        port_ids = set()
        ins = self._ports(el.find("input"), what)
        outs = self._ports(el.find("output"), what)
        for p in ins + outs:
            if p.id in port_ids:
                raise ModelError(f"{what}: port id {p.id} is used by an input and an output")
            port_ids.add(p.id)
        kept = el if any(c.tag not in _CONVERTED for c in el) else LEAF
        layer = Layer(lid, el.get("name") or "", self._short(el.get("type") or ""),
                      self._short(el.get("version") or ""), data, ins, outs, kept)
        self.layers[lid] = layer
        if not layer.type:
            raise ModelError(f"{what}: layer has no type")

    def _ports(self, elem: ET.Element | None, what: str) -> tuple[Port, ...]:
        if elem is None:
            return ()
        out = []
        seen = set()
        for p in elem.findall("port"):
            pid = _int(p.get("id"), f"{what}: port id")
            if pid in seen:
                raise ModelError(f"{what}: port id {pid} appears twice")
            seen.add(pid)
            dims = tuple(parse_dim(d.text or "", f"{what} port {pid}") for d in p.findall("dim"))
            names = split_names(p.get("names"))
            dtype = from_precision(self._short(p.get("precision")), f"{what} port {pid}")
            out.append(self._share(Port(pid, dtype, dims, names)))
        return self._share(tuple(out))

    def net(self, scope: str = "") -> Net:
        """The connected network, its messages prefixed by `scope`."""
        for err in (self.error, self.edge_error):
            if err is not None:
                raise type(err)(f"{scope}{err}") from None
        for layer in self.layers.values():
            layer.scope = scope
        net = Net(self.layers, scope)
        if self.sources is None:
            _connect(net, self.edges)
            self.sources, self.edges = net.sources, None  # the edges have served
        else:
            net.sources = self.sources
        return net


_NO_DATA: Mapping[str, str] = MappingProxyType({})


def parse_net(root: ET.Element, scope: str = "") -> Net:
    """The network of `root` (a ``<net>`` or ``<body>`` element): its ``<layers>`` and
    ``<edges>``, converted while the document was read (`NetworkBuilder`) or now."""
    parts = getattr(root, "parts", None)
    return (parts if parts is not None else NetParts.of_tree(root)).net(scope)


class NetworkElement(ET.Element):
    """An element that holds a network (`NETWORK_TAGS`): a `NetworkBuilder` puts its layers
    and edges in `parts` instead of keeping their elements as children."""

    __slots__ = ("parts",)


NETWORK_TAGS = frozenset({"net", "body", "then_body", "else_body"})


def _element(tag: str, attrib: dict) -> ET.Element:
    return NetworkElement(tag, attrib) if tag in NETWORK_TAGS else ET.Element(tag, attrib)


class NetworkBuilder:
    """`xmlsafe.parse` events -> the element tree of an IR document, lean.

    The tree is that of `xml.etree.ElementTree`, except that each layer and edge of a
    network (the first ``<layers>``/``<edges>`` of a `NETWORK_TAGS` element) becomes a
    `Layer` or edge of the network's `NetParts` as soon as its element ends, and leaves the
    tree (a layer keeps its element only when it has children other than ``<data>``,
    ``<input>`` and ``<output>``: a loop's port maps and body). Memory then stays near that
    of the layers themselves, a fraction of that of the whole tree.
    """

    def __init__(self):
        self.tree = ET.TreeBuilder(element_factory=_element)
        self.open: list[tuple[ET.Element, tuple[str, NetParts] | None]] = []
        self.shared: dict = {}

    def start(self, tag: str, attrs: dict) -> ET.Element:
        el = self.tree.start(tag, attrs)
        role = None
        parent = self.open[-1][0] if self.open else None
        if tag in ("layers", "edges") and isinstance(parent, NetworkElement):
            parts = getattr(parent, "parts", None)
            if parts is None:
                parts = parent.parts = NetParts(self.shared)
            if tag == "layers" and not parts.has_layers:
                parts.has_layers, role = True, ("layer", parts)
            elif tag == "edges" and not parts.has_edges:
                parts.has_edges, role = True, ("edge", parts)
        self.open.append((el, role))
        return el

    def end(self, tag: str) -> ET.Element:
        el = self.tree.end(tag)
        self.open.pop()
        if self.open:
            parent, role = self.open[-1]
            if role is not None:
                kind, parts = role
                if tag == kind == "layer":
                    parts.add_layer(el)
                elif tag == kind:
                    parts.add_edge(el)
                del parent[-1]  # `el`, the element just ended
        return el

    def data(self, text: str) -> None:
        self.tree.data(text)

    def close(self) -> ET.Element:
        return self.tree.close()


def _connect(net: Net, edges: Iterable[int]) -> None:
    """Resolve `edges` (flat: from-layer, from-port, to-layer, to-port per edge) to
    (layer, output index) per input index, checking every end."""
    scope, layers = net.scope, net.layers
    slots: dict[int, list[tuple[int, int] | None]] = {
        lid: [None] * len(layer.inputs) for lid, layer in layers.items()
    }
    ends = iter(edges)
    for from_layer, from_port, to_layer, to_port in zip(ends, ends, ends, ends):
        src = layers.get(from_layer)
        dst = layers.get(to_layer)
        out_idx = in_idx = None
        if src is not None:
            out_idx = next((i for i, p in enumerate(src.outputs) if p.id == from_port), None)
        if dst is not None:
            in_idx = next((i for i, p in enumerate(dst.inputs) if p.id == to_port), None)
        if out_idx is None or in_idx is None or slots[to_layer][in_idx] is not None:
            desc = f"{scope}edge {from_layer}:{from_port} -> {to_layer}:{to_port}"
            if src is None:
                raise ModelError(f"{desc}: no layer with id {from_layer}")
            if dst is None:
                raise ModelError(f"{desc}: no layer with id {to_layer}")
            if out_idx is None:
                raise ModelError(f"{desc}: {src.where()} has no output port {from_port}")
            if in_idx is None:
                raise ModelError(f"{desc}: {dst.where()} has no input port {to_port}")
            raise ModelError(f"{desc}: input port {to_port} of {dst.where()} is fed twice")
        slots[to_layer][in_idx] = (src.id, out_idx)
    for lid, srcs in slots.items():
        for i, s in enumerate(srcs):
            if s is None:
                layer = layers[lid]
                raise ModelError(f"{layer.where()}: input port {layer.inputs[i].id} has no "
                                 "incoming edge")
    for lid, srcs in slots.items():  # one at a time: each list is freed as it goes
        slots[lid] = tuple(srcs)  # type: ignore[assignment]
    net.sources = slots  # type: ignore[assignment] - every slot is filled
