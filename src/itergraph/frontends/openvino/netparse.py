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
from dataclasses import dataclass, field

from ...errors import ModelError
from ...ir.types import DataType, Dim
from .elements import from_precision

INT64_MAX = 2**63 - 1


@dataclass
class Port:
    id: int
    dtype: DataType | None
    shape: tuple[Dim, ...]
    names: list[str] = field(default_factory=list)


@dataclass
class Layer:
    id: int
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: list[Port]
    outputs: list[Port]
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
class Edge:
    from_layer: int
    from_port: int
    to_layer: int
    to_port: int


@dataclass
class Net:
    layers: dict[int, Layer]
    edges: list[Edge]
    scope: str = ""
    # to_layer -> [ (from_layer, output index) per input index ]
    sources: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

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
    if t in ("-1", "?", ""):
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


def _ports(elem: ET.Element | None, what: str) -> list[Port]:
    if elem is None:
        return []
    out = []
    seen = set()
    for p in elem.findall("port"):
        pid = _int(p.get("id"), f"{what}: port id")
        if pid in seen:
            raise ModelError(f"{what}: port id {pid} appears twice")
        seen.add(pid)
        dims = tuple(parse_dim(d.text or "", f"{what} port {pid}") for d in p.findall("dim"))
        names = [n.strip() for n in (p.get("names") or "").split(",") if n.strip()]
        out.append(Port(pid, from_precision(p.get("precision"), f"{what} port {pid}"), dims, names))
    return out


def parse_net(root: ET.Element, scope: str = "") -> Net:
    """Parse the ``<layers>``/``<edges>`` of `root` (a ``<net>`` or ``<body>`` element)."""
    layers: dict[int, Layer] = {}
    layers_elem = root.find("layers")
    for el in (layers_elem.findall("layer") if layers_elem is not None else []):
        lid = _int(el.get("id"), f"{scope}layer id")
        if lid in layers:
            raise ModelError(f"{scope}layer id {lid} appears twice")
        what = f"{scope}layer {lid}"
        data_el = el.find("data")
        data = dict(data_el.attrib) if data_el is not None else {}
        port_ids = set()
        ins = _ports(el.find("input"), what)
        outs = _ports(el.find("output"), what)
        for p in ins + outs:
            if p.id in port_ids:
                raise ModelError(f"{what}: port id {p.id} is used by an input and an output")
            port_ids.add(p.id)
        layers[lid] = Layer(lid, el.get("name") or "", el.get("type") or "",
                            el.get("version") or "", data, ins, outs, el, scope)
        if not layers[lid].type:
            raise ModelError(f"{what}: layer has no type")
    edges = []
    edges_elem = root.find("edges")
    for e in (edges_elem.findall("edge") if edges_elem is not None else []):
        edges.append(Edge(_int(e.get("from-layer"), f"{scope}edge from-layer"),
                          _int(e.get("from-port"), f"{scope}edge from-port"),
                          _int(e.get("to-layer"), f"{scope}edge to-layer"),
                          _int(e.get("to-port"), f"{scope}edge to-port")))
    net = Net(layers, edges, scope)
    _connect(net)
    return net


def _connect(net: Net) -> None:
    """Resolve edges to (layer, output index) per input index, checking every end."""
    scope = net.scope
    slots: dict[int, list[tuple[int, int] | None]] = {
        lid: [None] * len(layer.inputs) for lid, layer in net.layers.items()
    }
    for e in net.edges:
        desc = f"{scope}edge {e.from_layer}:{e.from_port} -> {e.to_layer}:{e.to_port}"
        src = net.layers.get(e.from_layer)
        dst = net.layers.get(e.to_layer)
        if src is None:
            raise ModelError(f"{desc}: no layer with id {e.from_layer}")
        if dst is None:
            raise ModelError(f"{desc}: no layer with id {e.to_layer}")
        out_idx = next((i for i, p in enumerate(src.outputs) if p.id == e.from_port), None)
        if out_idx is None:
            raise ModelError(f"{desc}: {src.where()} has no output port {e.from_port}")
        in_idx = next((i for i, p in enumerate(dst.inputs) if p.id == e.to_port), None)
        if in_idx is None:
            raise ModelError(f"{desc}: {dst.where()} has no input port {e.to_port}")
        if slots[e.to_layer][in_idx] is not None:
            raise ModelError(f"{desc}: input port {e.to_port} of {dst.where()} is fed twice")
        slots[e.to_layer][in_idx] = (e.from_layer, out_idx)
    for lid, srcs in slots.items():
        for i, s in enumerate(srcs):
            if s is None:
                layer = net.layers[lid]
                raise ModelError(f"{layer.where()}: input port {layer.inputs[i].id} has no "
                                 "incoming edge")
    net.sources = {lid: list(s) for lid, s in slots.items()}  # type: ignore[arg-type]
