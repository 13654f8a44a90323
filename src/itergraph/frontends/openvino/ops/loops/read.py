"""OpenVINO ``TensorIterator-1`` and ``Loop-5`` -> the canonical `Loop`.

The body is converted like any network (its Parameters and Results by layer id). The
``port_map`` entries, taken in ``external_port_id`` order as OpenVINO does, bind the ports:

- input with ``axis`` -> `Sliced` (``keep_axis=True``, ``part_size``; ``start``/``end`` are
  fence posts where -1 is the end of the axis; a negative ``stride`` walks backwards);
- input whose Parameter is the target of a back edge -> `Carried` (the back edge's Result);
  every Parameter an input feeds must declare that input's type (`ports`);
- other inputs -> `Invariant`;
- Loop input with ``purpose="current_iteration"`` -> ``iteration_param``;
- output with ``axis`` -> `Concat` (``new_axis=False``, reversed for a negative ``stride``);
- other outputs -> `Last`; Loop output with ``purpose="execution_condition"`` ->
  ``condition_result``. Outputs with ``external_port_id="-1"`` are not loop outputs.

Loop inputs 0 and 1 are the trip count (-1: unbounded) and the initial execution condition.
A TensorIterator's sliced inputs must give one number of iterations (``equal_slices``, as
OpenVINO's CPU plugin requires). A TensorIterator without sliced inputs runs the number of
iterations OpenVINO derives from its
first concatenated output (``|end - start| / part_size`` pieces of ``stride``), else once: it
becomes a loop with a constant trip count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .....errors import ModelError
from .....ir.graph import Graph, Node, Value
from .....ir.loop import Carried, Concat, Invariant, Last, Loop, Sliced
from .....ir.traversal import replace_all_uses
from .....ir.types import TensorType
from ...builder import OPSET, Builder
from ...import_table import importer
from ...netparse import Layer, parse_net
from .ports import check_bound_parameter, check_current_iteration, check_loop_layer, port_int


def _entries(layer: Layer, section: str, kind: str) -> list[dict]:
    pm = layer.elem.find(section)
    if pm is None:
        raise ModelError(f"{layer.where()}: missing <{section}>")
    out = []
    for e in pm.findall(kind):
        d = dict(e.attrib)
        for key in ("external_port_id", "internal_layer_id"):
            if key not in d:
                raise ModelError(f"{layer.where()}: port_map {kind} without {key}")
        out.append(d)
    return out


def _int(layer: Layer, d: dict, key: str, default=None) -> int:
    return port_int(layer, d, key, default, required=True)


@importer("TensorIterator", since=1)
@importer("Loop", since=1)  # an older version is refused by name below
def import_loop(b: Builder, layer: Layer, ins: list[Value]) -> list[Value]:
    is_loop = layer.type == "Loop"
    if is_loop and layer.opset is not None and layer.opset < 5:
        raise ModelError(f"{layer.where()}: Loop exists from opset5")
    check_loop_layer(layer, ins)
    body = _Body.convert(b, layer)
    back = _back_edges(layer, body.kinds)
    ports, iteration_param = _input_ports(body, ins, back, is_loop)
    out_entries, condition_result = _output_entries(body, is_loop)
    out_ports = [_output_port(layer, i, d, r) for i, (_ext, d, r) in enumerate(out_entries)]
    trip_count = initial_condition = None
    origin_attrs: dict = {}
    if is_loop:
        trip_count, initial_condition = ins[0], ins[1]
    elif not any(isinstance(p, Sliced) for p in ports):
        n = _ti_count_without_slices(layer, out_entries)
        trip_count = b.i64(n)
        origin_attrs["implied_trip_count"] = n
    # a TensorIterator's sliced inputs must give one number of iterations (OpenVINO's CPU
    # plugin refuses others: "numIterations == currentNumIterations")
    equal = not is_loop and sum(isinstance(p, Sliced) for p in ports) > 1
    loop = Loop(body.graph, ports, out_ports, trip_count=trip_count,
                initial_condition=initial_condition, condition_result=condition_result,
                iteration_param=iteration_param, name=layer.name, equal_slices=equal,
                origin="openvino.Loop" if is_loop else "openvino.TensorIterator",
                origin_attrs=origin_attrs, negative_trip_count="unbounded")
    b.graph.add(loop)
    return list(loop.outputs)


@dataclass
class _Body:
    """The converted body of a TensorIterator or Loop layer, with its Parameter and Result
    values by layer id, for binding the port map."""

    layer: Layer
    graph: Graph
    params: dict[int, Value]
    results: dict[int, Value]
    kinds: dict[int, str]  # body layer id -> layer type

    @classmethod
    def convert(cls, b: Builder, layer: Layer) -> _Body:
        body_el = layer.elem.find("body")
        if body_el is None:
            raise ModelError(f"{layer.where()}: missing <body>")
        net = parse_net(body_el, scope=f"{layer.where()} body: ")
        built = b.body(net, f"{layer.name or layer.type}_body", layer.where())
        return cls(layer, built.graph, built.params, built.results,
                   {lid: lay.type for lid, lay in net.layers.items()})

    def param(self, d: dict) -> Value:
        return self._value(d, self.params, "input", "Parameter")

    def result(self, d: dict) -> Value:
        return self._value(d, self.results, "output", "Result")

    def _value(self, d: dict, table: dict, entry: str, kind: str) -> Value:
        lid = _int(self.layer, d, "internal_layer_id")
        if lid not in table:
            kinds = self.kinds
            raise ModelError(f"{self.layer.where()}: port_map {entry} names body layer {lid}, "
                             f"which {'is a ' + kinds[lid] if lid in kinds else 'does not exist'}"
                             f"; expected a {kind}")
        return table[lid]


def _back_edges(layer: Layer, kinds: dict[int, str]) -> dict[int, int]:
    """The ``<back_edges>``: body Parameter layer id -> the Result layer id feeding it."""
    back: dict[int, int] = {}
    be = layer.elem.find("back_edges")
    for e in (be.findall("edge") if be is not None else []):
        try:
            src, dst = int(e.get("from-layer", "")), int(e.get("to-layer", ""))
        except ValueError:
            raise ModelError(f"{layer.where()}: back edge with a missing or bad layer id") \
                from None
        if kinds.get(src) != "Result":
            raise ModelError(f"{layer.where()}: back edge from layer {src}: "
                             f"{'no such layer' if src not in kinds else kinds[src]}, "
                             "expected a Result of the body")
        if kinds.get(dst) != "Parameter":
            raise ModelError(f"{layer.where()}: back edge to layer {dst}: "
                             f"{'no such layer' if dst not in kinds else kinds[dst]}, "
                             "expected a Parameter of the body")
        if dst in back:
            raise ModelError(f"{layer.where()}: body Parameter {dst} has two back edges")
        back[dst] = src
    return back


def _input_ports(body: _Body, ins: list[Value], back: dict[int, int],
                 is_loop: bool) -> tuple[list, Value | None]:
    """The input ports from the port_map inputs, in external port order, and the Loop's
    iteration parameter; every body Parameter read must be bound exactly once (an unread one
    no entry binds is dropped, as OpenVINO runs it)."""
    layer = body.layer
    if is_loop and len(ins) < 2:
        raise ModelError(f"{layer.where()}: a Loop needs the trip count and execution "
                         "condition inputs")
    ports = []
    iteration_param = None
    bound: set[int] = set()
    for d in sorted(_entries(layer, "port_map", "input"),
                    key=lambda d: _int(layer, d, "external_port_id")):
        ext = _int(layer, d, "external_port_id")
        p = body.param(d)
        lid = _int(layer, d, "internal_layer_id")
        if lid in bound:
            raise ModelError(f"{layer.where()}: body Parameter {lid} is bound twice in port_map")
        bound.add(lid)
        if d.get("purpose") == "current_iteration":
            if not is_loop:
                raise ModelError(f"{layer.where()}: current_iteration exists only in Loop")
            check_current_iteration(layer, lid, p)
            iteration_param = p
            continue
        if ext < 0:
            raise ModelError(f"{layer.where()}: body Parameter {lid} has external_port_id "
                             f"{ext} and no purpose: it would never get a value")
        if ext >= len(ins):
            raise ModelError(f"{layer.where()}: port_map input external_port_id {ext}, but the "
                             f"layer has {len(ins)} inputs")
        # ext 0 and 1 of a Loop (its trip count and execution condition) may also feed body
        # Parameters, as in the Loop-5 specification's Example 1
        value = ins[ext]
        if "axis" in d:
            if lid in back:
                raise ModelError(f"{layer.where()}: body Parameter {lid} is both sliced and "
                                 "the target of a back edge")
            port = _sliced(layer, d, value, p, ext)
            check_bound_parameter(layer, ext, lid, p, value, port)
            ports.append(port)
            continue
        check_bound_parameter(layer, ext, lid, p, value)
        if lid in back:
            ports.append(Carried(value, p, body.results[back[lid]]))
        else:
            ports.append(Invariant(value, p))
    read = {u.uid for n in body.graph.nodes for u in n.reads()} | \
        {u.uid for u in body.graph.outputs}
    for lid, v in list(body.params.items()):
        if lid in bound:
            continue
        if v.uid in read or lid in back:
            raise ModelError(f"{layer.where()}: body Parameter {lid} ('{v.name}') is read but "
                             "not bound by port_map: it would never get a value")
        # an unread Parameter no port_map entry binds: OpenVINO runs the body without it
        body.graph.inputs = [u for u in body.graph.inputs if u is not v]
        del body.params[lid]
    for lid in back:
        if lid not in bound:
            raise ModelError(f"{layer.where()}: back edge to Parameter {lid}, which has no "
                             "port_map input for its initial value")
    return ports, iteration_param


def _output_entries(body: _Body, is_loop: bool) -> tuple[list, Value | None]:
    """The port_map outputs that are layer outputs, as (external port id, entry, body Result)
    in external port order, and the Loop's execution condition Result."""
    layer = body.layer
    out_entries = []
    condition_result = None
    for d in _entries(layer, "port_map", "output"):
        ext = _int(layer, d, "external_port_id")
        r = body.result(d)
        if d.get("purpose") == "execution_condition":
            if not is_loop:
                raise ModelError(f"{layer.where()}: execution_condition exists only in Loop")
            condition_result = r
            continue
        if ext >= 0:
            out_entries.append((ext, d, r))
    out_entries.sort(key=lambda e: e[0])
    if len(out_entries) != len(layer.outputs):
        raise ModelError(f"{layer.where()}: port_map maps {len(out_entries)} outputs, the layer "
                         f"has {len(layer.outputs)} output ports")
    if len({e[0] for e in out_entries}) != len(out_entries):
        raise ModelError(f"{layer.where()}: two port_map outputs share an external_port_id")
    return out_entries, condition_result


def _output_port(layer: Layer, i: int, d: dict, r: Value) -> Concat | Last:
    """Output `i` of the layer, fed by body Result `r`: `Concat` with an ``axis``, else `Last`."""
    port = layer.outputs[i]
    out = Value(port.names[0] if port.names else f"{layer.name}:{i}",
                TensorType(port.dtype, port.shape or None))
    if "axis" not in d:
        return Last(r, out)
    stride = _int(layer, d, "stride", 1)
    if stride == 0:
        raise ModelError(f"{layer.where()}: output {i} has stride 0")
    return Concat(r, out, axis=_int(layer, d, "axis"), reverse=stride < 0, new_axis=False)


def _sliced(layer: Layer, d: dict, value: Value, param: Value, ext: int) -> Sliced:
    axis = _int(layer, d, "axis")
    start = _int(layer, d, "start", 0)
    end = _int(layer, d, "end", -1)
    stride = _int(layer, d, "stride", 1)
    part = _int(layer, d, "part_size", 1)
    if stride == 0:
        raise ModelError(f"{layer.where()}: sliced input {ext} has stride 0 (it would never "
                         "advance)")
    if part < 1:
        raise ModelError(f"{layer.where()}: sliced input {ext} has part_size {part}")
    s = Sliced(value, param, axis=axis, start=start, end=end, stride=stride, part_size=part,
               keep_axis=True)
    shape = layer.inputs[ext].shape if ext < len(layer.inputs) else ()
    if shape and -len(shape) <= axis < len(shape) and isinstance(shape[axis], int):
        dim = shape[axis]
        lo, hi = s.bounds(dim)
        span = hi - lo
        if span > 0 and (span < part or (span - part) % abs(stride)):
            raise ModelError(
                f"{layer.where()}: sliced input {ext}: the range [{lo}, {hi}) of axis {axis} "
                f"(length {dim}) does not divide into pieces of {part} every {abs(stride)}"
            )
    elif shape and not -len(shape) <= axis < len(shape):
        raise ModelError(f"{layer.where()}: sliced input {ext} has axis {axis}, out of range "
                         f"for rank {len(shape)}")
    return s


def _ti_count_without_slices(layer: Layer, out_entries) -> int:
    """Iterations of a TensorIterator without sliced inputs, as OpenVINO derives them."""
    for _ext, d, _r in out_entries:
        if "axis" not in d:
            continue
        start, end = _int(layer, d, "start", 0), _int(layer, d, "end", -1)
        stride, part = _int(layer, d, "stride", 1), _int(layer, d, "part_size", 1)
        if part < 1:
            raise ModelError(f"{layer.where()}: output part_size {part}")
        dim = abs(end - start) // part * part
        s = start + dim + 1 if start < 0 else start
        e = end + dim + 1 if end < 0 else end
        lo, hi = (e, s) if stride < 0 else (s, e)
        if lo < 0 or lo >= hi or hi > dim or (hi - lo) % abs(stride):
            raise ModelError(f"{layer.where()}: the concatenated output range start={start} "
                             f"end={end} stride={stride} gives no whole number of iterations")
        return int(np.int64((hi - lo) // abs(stride)))
    return 1


@importer("If", since=1)
def import_if(b: Builder, layer: Layer, ins: list[Value]) -> list[Value]:
    """OpenVINO ``If-8`` -> ONNX ``If``: branch Parameters become the outer values they map."""
    if not ins:
        raise ModelError(f"{layer.where()}: If needs a condition input")
    branches = [_branch(b, layer, ins, tag) for tag in ("then", "else")]
    node = Node("If", [ins[0]], len(layer.outputs),
                {"then_branch": branches[0], "else_branch": branches[1]}, version=OPSET,
                name=layer.name)
    b.graph.add(node)
    return list(node.outputs)


def _branch(b: Builder, layer: Layer, ins: list[Value], tag: str) -> Graph:
    """The ``then`` or ``else`` branch of an If layer as a graph without inputs: its
    Parameters are replaced by the layer inputs they map, its outputs follow the port_map."""
    body_el = layer.elem.find(f"{tag}_body")
    if body_el is None:
        raise ModelError(f"{layer.where()}: missing <{tag}_body>")
    net = parse_net(body_el, scope=f"{layer.where()} {tag}_body: ")
    built = b.body(net, f"{layer.name or 'If'}_{tag}", layer.where())
    g = built.graph
    kinds = {lid: lay.type for lid, lay in net.layers.items()}
    bound: dict[int, Value] = {}  # Parameter uid -> the outer value replacing it
    for d in _entries(layer, f"{tag}_port_map", "input"):
        ext, lid = _int(layer, d, "external_port_id"), _int(layer, d, "internal_layer_id")
        if lid not in built.params:
            what = f"is a {kinds[lid]}" if lid in kinds else "does not exist"
            raise ModelError(f"{layer.where()}: {tag}_port_map input names body layer {lid}, "
                             f"which {what}; expected a Parameter")
        if not 1 <= ext < len(ins):
            raise ModelError(f"{layer.where()}: {tag}_port_map input external_port_id {ext} "
                             f"is not a data input (1..{len(ins) - 1})")
        p = built.params.pop(lid)
        bound[p.uid] = ins[ext]
        replace_all_uses(g, p, ins[ext])
        g.inputs = [v for v in g.inputs if v is not p]
    if built.params:
        lid = next(iter(built.params))
        raise ModelError(f"{layer.where()}: {tag} branch Parameter {lid} is not bound by "
                         f"{tag}_port_map")
    outs = []
    for d in _entries(layer, f"{tag}_port_map", "output"):
        ext, lid = _int(layer, d, "external_port_id"), _int(layer, d, "internal_layer_id")
        if lid not in built.results:
            raise ModelError(f"{layer.where()}: {tag}_port_map output names body layer "
                             f"{lid}, which is not a Result")
        v = built.results[lid]  # a Result fed straight by a Parameter: the outer value
        outs.append((ext, bound.get(v.uid, v)))
    outs.sort(key=lambda e: e[0])
    if len(outs) != len(layer.outputs):
        raise ModelError(f"{layer.where()}: {tag}_port_map maps {len(outs)} outputs, the "
                         f"layer has {len(layer.outputs)}")
    defined = g.defined()
    values = []
    for _, v in outs:
        if v.uid not in defined:  # an outer value passed straight through
            w = Value(f"{g.name}/{v.name}", v.type)
            g.add(Node("Identity", [v], [w], version=OPSET, name=w.name))
            v = w
        values.append(v)
    g.outputs = values
    return g
