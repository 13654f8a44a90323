"""More OpenVINO IR mutation operators, registered in `mutate_ir.OPS`: the values a Const
holds in the ``.bin`` (NaN, infinities, extreme integers as shapes, axes and indices), Consts
whose data overlaps another's, float ``data`` attributes, attributes a layer does not have, a
Convert put on an edge (element types that disagree between layers), TensorIterator and Loop
slicing changed consistently (reversed, in parts of 2, from an offset), and a DOCTYPE with
entities in the document.

Each operator edits an `IR` in place with the given `numpy.random.Generator` and returns a
description; `NotApplicable` when the IR has nothing of its kind.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from .common import INTS, NotApplicable, pick
from .mutate_ir import OPS, _label, _loop_biased, layers

NUMPY_OF = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i8": np.int8,
            "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
            "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
FLOATS = ("nan", "inf", "-inf", "-0", "0", "-1", "1e-38", "1e39", "3.4e38")


def _const_data(ir, layer):
    d = layer.find("data")
    dt = NUMPY_OF.get(d.get("element_type", ""))
    try:
        off, size = int(d.get("offset")), int(d.get("size"))
    except (TypeError, ValueError):
        return None
    if dt is None or off < 0 or size <= 0 or off + size > len(ir.weights):
        return None
    return d, dt, off, size


@OPS.register("ir_const_values")
def ir_const_values(ir, rng):
    """Some values of a Const (weights, shapes, axes, indices, trip counts) set in the .bin to
    NaN, an infinity, -0 or an extreme integer; its offset, size and type kept."""
    cands = [(x, c) for x in layers(ir, ("Const",)) if (c := _const_data(ir, x))]
    layer, (_, dt, off, size) = pick(rng, cands)
    arr = np.frombuffer(ir.weights[off:off + size], dt).copy()
    old = arr[:4].tolist()
    idx = rng.integers(0, arr.size, max(1, arr.size // int(pick(rng, [1, 1, 2, 10]))))
    if arr.dtype.kind == "f":
        arr[idx] = pick(rng, [np.nan, np.inf, -np.inf, -0.0, 1e30, -1e30])
    else:
        info = np.iinfo(arr.dtype)
        v = int(pick(rng, [v for v in INTS if info.min <= v <= info.max]
                     + [int(arr[idx[0]]) + 1 if arr[idx[0]] < info.max else 0]))
        arr[idx] = v
    b = bytearray(ir.weights)
    b[off:off + size] = arr.tobytes()
    ir.weights = bytes(b)
    return f"{_label(layer)} values {old} -> {arr[:4].tolist()}"


@OPS.register("ir_const_overlap")
def ir_const_overlap(ir, rng):
    """A Const's data made to overlap another's: its offset set to the other's (its own size
    kept), inside it, or both its offset and size the other's (another type or shape read
    from the same bytes)."""
    cands = [(x, c) for x in layers(ir, ("Const",)) if (c := _const_data(ir, x))]
    if len(cands) < 2:
        raise NotApplicable("fewer than two Consts")
    i, j = (int(x) for x in rng.choice(len(cands), 2, replace=False))
    (layer, (d, _, _, size)), (other, (_, _, o_off, o_size)) = cands[i], cands[j]
    how = pick(rng, ["offset", "inside", "both"])
    if how == "offset":
        d.set("offset", str(o_off))
    elif how == "inside":
        d.set("offset", str(o_off + int(rng.integers(max(1, o_size)))))
    else:
        d.set("offset", str(o_off))
        d.set("size", str(o_size))
    return f"{_label(layer)} (size {size}) data on {_label(other)}'s ({how})"


@OPS.register("ir_float_attr")
def ir_float_attr(ir, rng):
    """A float ``data`` attribute (eps, clip, alpha, beta, value...) set to NaN, an infinity,
    -0, 0, a negative, a tiny value or one past float32."""
    cands = []
    for x in layers(ir):
        for d in x.findall("data"):
            for k, v in d.attrib.items():
                try:
                    float(v)
                except ValueError:
                    continue
                if "." in v or "e" in v.lower() or k in ("eps", "clip", "alpha", "beta"):
                    cands.append((x, d, k))
    layer, d, key = pick(rng, cands)
    old = d.get(key)
    d.set(key, pick(rng, FLOATS))
    return f"{_label(layer)} {key} {old!r} -> {d.get(key)!r}"


@OPS.register("ir_attr_add")
def ir_attr_add(ir, rng):
    """A ``data`` attribute the layer does not have added (one of another layer type's, or a
    name no layer has), or a layer's ``data`` element removed altogether."""
    layer = _loop_biased(ir, rng)
    d = layer.find("data")
    if d is not None and rng.random() < 0.3:
        layer.remove(d)
        return f"{_label(layer)} data removed"
    if d is None:
        d = ET.Element("data")
        layer.insert(0, d)
    name = pick(rng, ["axis", "keep_dims", "special_zero", "auto_broadcast", "batch_dims",
                      "mode", "fuzz_unknown", "output_type", "clip", "direction"])
    if name in d.attrib:
        raise NotApplicable(f"the layer has {name}")
    d.set(name, pick(rng, ["1", "-1", "true", "numpy", "x", "2147483648"]))
    return f"{_label(layer)} attribute {name}={d.get(name)!r} added"


def _next_id(ir) -> int:
    return 1 + max(int(x.get("id")) for x in ir.root.iter("layer")
                   if (x.get("id") or "").lstrip("-").isdigit())


@OPS.register("ir_convert_between")
def ir_convert_between(ir, rng):
    """A Convert to another element type put on one edge (the reader then gets a type its
    layer's other inputs or its declared port precision do not have)."""
    nets = [n for n in ir.root.iter() if n.find("edges") is not None and n.find("layers")
            is not None]
    net = pick(rng, nets)
    by_id = {x.get("id"): x for x in net.find("layers").findall("layer")}
    edges = [e for e in net.find("edges").findall("edge") if e.get("from-layer") in by_id]
    e = pick(rng, edges)
    src = by_id[e.get("from-layer")]
    port = next((p for p in src.iter("port") if p.get("id") == e.get("from-port")), None)
    if port is None:
        raise NotApplicable("an edge from a port that does not exist")
    to = pick(rng, ["f32", "f16", "f64", "i32", "i64", "u8", "boolean", "i8"])
    cid = str(_next_id(ir))
    conv = ET.SubElement(net.find("layers"), "layer",
                         {"id": cid, "name": f"fuzz_convert_{cid}", "type": "Convert",
                          "version": "opset1"})
    ET.SubElement(conv, "data", {"destination_type": to})
    dims = [x.text for x in port.findall("dim")]
    for side, pid in (("input", "0"), ("output", "1")):
        p = ET.SubElement(ET.SubElement(conv, side), "port", {"id": pid})
        if side == "output":
            p.set("precision", {"f32": "FP32", "f16": "FP16", "f64": "FP64", "i32": "I32",
                                "i64": "I64", "u8": "U8", "boolean": "BOOL", "i8": "I8"}[to])
        for t in dims:
            ET.SubElement(p, "dim").text = t
    ET.SubElement(net.find("edges"), "edge", {"from-layer": e.get("from-layer"),
                                              "from-port": e.get("from-port"),
                                              "to-layer": cid, "to-port": "0"})
    e.set("from-layer", cid)
    e.set("from-port", "1")
    return f"a Convert to {to} on the edge into layer {e.get('to-layer')} port {e.get('to-port')}"


@OPS.register("ir_slicing")
def ir_slicing(ir, rng):
    """A sliced TensorIterator/Loop port_map entry (one with an ``axis``) made to iterate in
    reverse, in parts of 2, from an offset, to an end before the last, or with a stride of 2
    or 0, its other attributes made consistent with that."""
    loops = layers(ir, ("TensorIterator", "Loop"))
    entries = [(x, e) for x in loops for pm in x.findall("port_map") for e in pm
               if e.get("axis") is not None]
    loop, e = pick(rng, entries)
    how = pick(rng, ["reverse", "part2", "from1", "end-2", "stride2", "stride0"])
    new = {"reverse": {"start": "-1", "end": "0", "stride": "-1", "part_size": "1"},
           "part2": {"start": "0", "end": "-1", "stride": "2", "part_size": "2"},
           "from1": {"start": "1", "end": "-1", "stride": "1", "part_size": "1"},
           "end-2": {"start": "0", "end": "-2", "stride": "1", "part_size": "1"},
           "stride2": {"start": "0", "end": "-1", "stride": "2", "part_size": "1"},
           "stride0": {"start": "0", "end": "-1", "stride": "0", "part_size": "1"}}[how]
    old = dict(e.attrib)
    for k, v in new.items():
        e.set(k, v)
    return f"{_label(loop)} port_map entry {old} sliced {how}"


DOCTYPES = (
    b'<!DOCTYPE net [<!ENTITY a "1">]>\n',
    b'<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n',
    b'<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>\n',
    b'<!DOCTYPE net SYSTEM "http://127.0.0.1:9/net.dtd">\n',
)


@OPS.register("ir_doctype")
def ir_doctype(ir, rng):
    """A DOCTYPE put in the document: an internal entity, an external (file) entity, nested
    entities that expand a thousandfold, or an external DTD."""
    ir.prolog = pick(rng, DOCTYPES)
    return f"DOCTYPE {ir.prolog[:40]!r}"
