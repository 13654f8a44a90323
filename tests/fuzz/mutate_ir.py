"""Mutation operators on an OpenVINO IR (the ``.xml`` as an ElementTree and the ``.bin``
bytes): port ids, TensorIterator/Loop ``port_map`` and ``back_edges`` entries, element types
and precisions, port shapes, Const offsets and sizes, edges, layer versions and types,
numeric ``data`` attributes, layers removed, and the ``.bin`` cut short.

Each operator edits an `IR` in place with the given `numpy.random.Generator` and returns a
description; `NotApplicable` when the IR has nothing of its kind.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from .common import (
    CONTROL_REF,
    CONTROL_REF_BYTES,
    DIMS,
    INTS,
    NAME_TAILS,
    NOT_UTF8,
    NOT_UTF8_BYTES,
    NotApplicable,
    Registry,
    pick,
)

OPS = Registry()
ELEMENT_TYPES = ("f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "u1", "u4",
                 "u64", "boolean", "string", "dynamic", "undefined", "f8e4m3", "x99", "")
PRECISIONS = ("FP32", "FP16", "FP64", "I32", "I64", "U8", "BOOL", "BF16", "UNSPECIFIED", "Q78")


@dataclass
class IR:
    root: ET.Element
    weights: bytes
    prolog: bytes = b""  # what comes between the XML declaration and the root (a DOCTYPE)

    def xml(self) -> bytes:
        """The document, the markers of `ir_name_text` made the bytes they stand for."""
        data = b'<?xml version="1.0"?>\n' + self.prolog + ET.tostring(self.root,
                                                                      encoding="utf-8")
        return data.replace(NOT_UTF8.encode(), NOT_UTF8_BYTES).replace(
            CONTROL_REF.encode(), CONTROL_REF_BYTES)


def layers(ir: IR, types=None) -> list[ET.Element]:
    return [x for x in ir.root.iter("layer") if types is None or x.get("type") in types]


def _label(layer: ET.Element) -> str:
    return f"layer {layer.get('id')} '{layer.get('name')}' ({layer.get('type')})"


def _loop_biased(ir: IR, rng, types=None) -> ET.Element:
    """A layer; half of the time one of a TensorIterator/Loop or inside a body."""
    everything = layers(ir, types)
    loops = [x for x in everything if x.get("type") in ("TensorIterator", "Loop", "If")]
    bodies = [b for b in ir.root.iter("body")] + [b for b in ir.root.iter("then_body")] \
        + [b for b in ir.root.iter("else_body")]
    inside = [x for b in bodies for x in b.iter("layer") if types is None
              or x.get("type") in types]
    if rng.random() < 0.5 and (loops or inside):
        return pick(rng, pick(rng, [p for p in (loops, inside) if p]))
    return pick(rng, everything)


def _int_variant(rng, old: str | None) -> str:
    try:
        v = int(old)
        return str(pick(rng, INTS[:12] + (v + 1, v - 1, -v)))
    except (TypeError, ValueError):
        return str(pick(rng, INTS[:12]))


@OPS.register("ir_port_id")
def ir_port_id(ir, rng):
    """A layer's input or output port id changed (its edges now miss or hit another port)."""
    layer = _loop_biased(ir, rng)
    ports = [p for side in ("input", "output") for s in layer.findall(side)
             for p in s.findall("port")]
    p = pick(rng, ports)
    old = p.get("id")
    p.set("id", _int_variant(rng, old))
    return f"{_label(layer)} port {old} -> {p.get('id')}"


@OPS.register("ir_name_text")
def ir_name_text(ir, rng):
    """A tensor name (a port's ``names``) or a layer name given a NUL, a control character
    (raw or as a reference), or a byte that is not UTF-8. Parameters keep theirs (the feeds
    name them)."""
    layer = _loop_biased(ir, rng)
    if layer.get("type") == "Parameter":
        raise NotApplicable("a Parameter's name is the feed's")
    tail = pick(rng, NAME_TAILS + (CONTROL_REF,))
    named = [p for p in layer.iter("port") if p.get("names")]
    if named and rng.random() < 0.75:
        p = pick(rng, named)
        old = p.get("names")
        p.set("names", ",".join(n + tail for n in old.split(",")))
        return f"{_label(layer)} port {p.get('id')} names {old!r} -> {p.get('names')!r}"
    old = layer.get("name", "")
    layer.set("name", old + tail)
    return f"{_label(layer)} renamed from {old!r}"


@OPS.register("ir_edge")
def ir_edge(ir, rng):
    """An edge's end changed, removed, duplicated, or an edge added from a layer to itself."""
    nets = [e for e in ir.root.iter("edges")]
    edges_el = pick(rng, nets)
    edges = edges_el.findall("edge")
    e = pick(rng, edges)
    how = pick(rng, ["from-layer", "from-port", "to-layer", "to-port", "remove", "duplicate",
                     "self"])
    if how == "remove":
        edges_el.remove(e)
    elif how == "duplicate":
        edges_el.append(ET.fromstring(ET.tostring(e)))
    elif how == "self":
        e.set("from-layer", e.get("to-layer"))
    else:
        ids = [x.get("id") for x in layers(ir)]
        e.set(how, pick(rng, ids) if how.endswith("layer") and rng.random() < 0.7
              else _int_variant(rng, e.get(how)))
    return f"edge {dict(e.attrib)} {how}"


@OPS.register("ir_port_map")
def ir_port_map(ir, rng):
    """A TensorIterator/Loop port_map entry: an attribute (external_port_id,
    internal_layer_id, axis, start, end, stride, part_size, purpose) changed, removed or added,
    or the entry removed or duplicated."""
    loop = pick(rng, layers(ir, ("TensorIterator", "Loop")))
    pm = loop.find("port_map")
    if pm is None:
        raise NotApplicable("no port_map")
    entries = list(pm)
    e = pick(rng, entries)
    how = pick(rng, ["attr", "attr", "attr", "drop_attr", "remove", "duplicate"])
    if how == "remove":
        pm.remove(e)
        return f"{_label(loop)} port_map entry {dict(e.attrib)} removed"
    if how == "duplicate":
        pm.append(ET.fromstring(ET.tostring(e)))
        return f"{_label(loop)} port_map entry {dict(e.attrib)} duplicated"
    name = pick(rng, ["external_port_id", "internal_layer_id", "axis", "start", "end",
                      "stride", "part_size", "purpose"])
    if how == "drop_attr":
        e.attrib.pop(name, None)
        return f"{_label(loop)} port_map entry: {name} removed"
    if name == "purpose":
        e.set(name, pick(rng, ["current_iteration", "execution_condition", "bogus", ""]))
    else:
        e.set(name, _int_variant(rng, e.get(name)))
    return f"{_label(loop)} port_map entry {name} -> {e.get(name)}"


@OPS.register("ir_back_edge")
def ir_back_edge(ir, rng):
    """A back_edges entry changed, removed, duplicated or added (a body result fed to a body
    parameter)."""
    loop = pick(rng, layers(ir, ("TensorIterator", "Loop")))
    be = loop.find("back_edges")
    if be is None:
        be = ET.SubElement(loop, "back_edges")
    edges = list(be)
    how = pick(rng, ["attr", "remove", "duplicate", "add"])
    if how in ("attr", "remove", "duplicate") and not edges:
        how = "add"
    if how == "add":
        body = loop.find("body")
        ids = [x.get("id") for x in body.iter("layer")] if body is not None else ["0"]
        ET.SubElement(be, "edge", {"from-layer": pick(rng, ids), "from-port": "0",
                                   "to-layer": pick(rng, ids), "to-port": "0"})
        return f"{_label(loop)} back edge added"
    e = pick(rng, edges)
    if how == "remove":
        be.remove(e)
    elif how == "duplicate":
        be.append(ET.fromstring(ET.tostring(e)))
    else:
        name = pick(rng, ["from-layer", "from-port", "to-layer", "to-port"])
        e.set(name, _int_variant(rng, e.get(name)))
    return f"{_label(loop)} back edge {dict(e.attrib)} {how}"


@OPS.register("ir_special_ports")
def ir_special_ports(ir, rng):
    """A Loop's special_body_ports (current_iteration_input_idx,
    body_condition_output_idx) changed or removed."""
    loop = pick(rng, layers(ir, ("Loop",)))
    sbp = loop.find("port_map/../special_body_ports")
    if sbp is None:
        sbp = ET.SubElement(loop, "special_body_ports")
    name = pick(rng, ["current_iteration_input_idx", "body_condition_output_idx"])
    if rng.random() < 0.2:
        sbp.attrib.pop(name, None)
    else:
        sbp.set(name, _int_variant(rng, sbp.get(name)))
    return f"{_label(loop)} special_body_ports {name} -> {sbp.get(name)}"


@OPS.register("ir_element_type")
def ir_element_type(ir, rng):
    """An element type (Parameter, Const, Convert destination_type, ...) or a port's
    precision changed."""
    cands = [(x, "data", k) for x in layers(ir) for d in x.findall("data") for k in d.attrib
             if k in ("element_type", "destination_type", "output_type", "index_element_type")]
    cands += [(x, "port", p) for x in layers(ir) for p in x.iter("port") if p.get("precision")]
    layer, where, key = pick(rng, cands)
    if where == "data":
        d = layer.find("data")
        old = d.get(key)
        d.set(key, pick(rng, ELEMENT_TYPES))
        return f"{_label(layer)} {key} {old} -> {d.get(key)}"
    old = key.get("precision")
    key.set("precision", pick(rng, PRECISIONS))
    return f"{_label(layer)} port {key.get('id')} precision {old} -> {key.get('precision')}"


@OPS.register("ir_shape")
def ir_shape(ir, rng):
    """A port's dims (negative, zero, huge, one dropped or added) or a Parameter/Const
    ``shape`` attribute changed."""
    layer = _loop_biased(ir, rng)
    d = layer.find("data")
    if d is not None and "shape" in d.attrib and rng.random() < 0.5:
        old = d.get("shape")
        dims = [x for x in old.split(",") if x]
        how = pick(rng, ["dim", "drop", "add", "garbage"])
        if how == "dim" and dims:
            dims[int(rng.integers(len(dims)))] = str(pick(rng, DIMS + ("?", "1..3", "-2")))
        elif how == "drop" and dims:
            dims.pop()
        elif how == "garbage":
            dims = [pick(rng, ["x", "1.5", "[]", "?..?", "3..1"])]
        else:
            dims.append(str(pick(rng, DIMS)))
        d.set("shape", ",".join(dims))
        return f"{_label(layer)} shape {old!r} -> {d.get('shape')!r}"
    ports = [p for p in layer.iter("port")]
    p = pick(rng, ports)
    dims = p.findall("dim")
    how = pick(rng, ["dim", "drop", "add"])
    if how == "dim" and dims:
        e = pick(rng, dims)
        e.text = str(pick(rng, DIMS + ("?", "abc", "")))
    elif how == "drop" and dims:
        p.remove(dims[-1])
    else:
        ET.SubElement(p, "dim").text = str(pick(rng, DIMS))
    return f"{_label(layer)} port {p.get('id')} dims {how}"


@OPS.register("ir_const")
def ir_const(ir, rng):
    """A Const's offset or size changed: past the end of the .bin, negative, misaligned, or
    not the size its shape and type need."""
    layer = pick(rng, layers(ir, ("Const",)))
    d = layer.find("data")
    key = pick(rng, ["offset", "size"])
    old = d.get(key)
    n = len(ir.weights)
    d.set(key, str(pick(rng, [n, n + 1, -1, 1, 3, 0, 2**62, int(old or 0) + 1,
                              int(old or 0) * 2, "x"])))
    return f"{_label(layer)} {key} {old} -> {d.get(key)}"


@OPS.register("ir_version")
def ir_version(ir, rng):
    """A layer's version (opset) or type changed, or the net's IR version."""
    if rng.random() < 0.15:
        old = ir.root.get("version")
        ir.root.set("version", pick(rng, ["7", "10", "11", "12", "99", "", "x"]))
        return f"net version {old} -> {ir.root.get('version')}"
    layer = _loop_biased(ir, rng)
    if rng.random() < 0.5:
        old = layer.get("version")
        layer.set("version", pick(rng, ["opset1", "opset3", "opset5", "opset8", "opset13",
                                        "opset15", "opset99", "extension", ""]))
        return f"{_label(layer)} version {old} -> {layer.get('version')}"
    old = layer.get("type")
    layer.set("type", pick(rng, ["Loop", "TensorIterator", "Add", "Parameter", "Result",
                                 "Const", "Concat", "Convert", "Reshape", "LSTMSequence",
                                 "GRUCell", "NoSuchOp", "Squeeze", "Gather"]))
    return f"{_label(layer)} type {old} -> {layer.get('type')}"


@OPS.register("ir_data_attr")
def ir_data_attr(ir, rng):
    """A numeric (or list) ``data`` attribute of a layer (axis, hidden_size, special ports,
    pads, ...) changed or removed, or a string one (direction, auto_broadcast) set to
    nonsense."""
    cands = [(x, d, k) for x in layers(ir) for d in x.findall("data") for k in d.attrib
             if k not in ("shape", "element_type", "offset", "size")]
    layer, d, key = pick(rng, cands)
    old = d.get(key)
    if rng.random() < 0.2:
        del d.attrib[key]
    elif old and old.lstrip("-").isdigit():
        d.set(key, _int_variant(rng, old))
    elif old and "," in old:
        parts = old.split(",")
        parts[int(rng.integers(len(parts)))] = str(pick(rng, INTS[:12]))
        d.set(key, ",".join(parts if rng.random() < 0.7 else parts[:-1]))
    else:
        d.set(key, pick(rng, ["reverse", "bidirectional", "none", "numpy", "pdpd", "", "x",
                              "true", "-1", "1e9"]))
    return f"{_label(layer)} {key} {old!r} -> {d.get(key)!r}"


@OPS.register("ir_layer_remove")
def ir_layer_remove(ir, rng):
    """A layer removed (its edges dangle), or given the id of another layer."""
    layer = _loop_biased(ir, rng)
    parent = next(p for p in ir.root.iter() if layer in list(p))
    if rng.random() < 0.6:
        parent.remove(layer)
        return f"{_label(layer)} removed"
    old = layer.get("id")
    layer.set("id", pick(rng, [x.get("id") for x in parent]))
    return f"layer {old} id -> {layer.get('id')}"


@OPS.register("ir_bin")
def ir_bin(ir, rng):
    """The .bin cut short, emptied, or a few of its bytes overwritten."""
    if not ir.weights:
        raise NotApplicable("no weights")
    n = len(ir.weights)
    how = pick(rng, ["cut", "cut", "empty", "flip"])
    if how == "cut":
        cut = int(rng.integers(n))
        ir.weights = ir.weights[:cut]
        return f".bin cut at {cut} of {n}"
    if how == "empty":
        ir.weights = b""
        return ".bin emptied"
    b = bytearray(ir.weights)
    for i in rng.integers(0, n, 4):
        b[int(i)] = 0xFF
    ir.weights = bytes(b)
    return ".bin bytes set to 0xFF"
