"""Mutation operators on what defines a value or a layer, registered in `mutate_onnx.OPS` and
`mutate_ir.OPS`: names defined twice and names a loop body shadows (ONNX), a loop body's
structure and ``data`` attributes written as text of another kind (OpenVINO IR).

- `dup_definition` (ONNX): an initializer repeated under its name with other values, a graph
  input listed twice with another type, an initializer named as a node's output (a value
  with two producers), a ``value_info`` entry of another element type for a graph input.
- `body_shadow` (ONNX): a loop or branch body's input or node output renamed to a value of
  the graph around it (ONNX wants every name defined once, bodies included).
- `ir_body` (IR): a TensorIterator/Loop/If body's Parameter or Result removed, its layer ids
  shifted onto the outer net's ids (valid: a body is a scope of its own), its edges emptied,
  an edge of it pointed at a layer id only the outer net has, or the body repeated.
- `ir_attr_text` (IR): a ``data`` attribute written as text of another kind: a list where a
  number is due, a float, hexadecimal, padded with spaces, a fullwidth digit, a boolean word,
  the empty string, another case.
"""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import numpy as np
from onnx import TensorProto
from onnx import numpy_helper as nh

from .common import NotApplicable, pick
from .mutate_ir import OPS as IR_OPS
from .mutate_ir import _label as _ir_label
from .mutate_ir import layers
from .mutate_onnx import LOOP_OPS, graphs
from .mutate_onnx import OPS as ONNX_OPS

# -- ONNX ----------------------------------------------------------------------------------------


@ONNX_OPS.register("dup_definition")
def dup_definition(m, rng):
    g, path = pick(rng, [(g, p) for g, p in graphs(m.graph) if g.initializer or g.input])
    how = pick(rng, ["initializer", "input", "init_as_output", "value_info"])
    if how == "initializer" and g.initializer:
        t = pick(rng, g.initializer)
        a = nh.to_array(t)
        twin = nh.from_array(np.asarray(a + 1 if a.dtype.kind in "iuf" else a), t.name)
        g.initializer.append(twin)
        return f"{path} initializer '{t.name}' defined twice, with other values"
    if how == "input" and g.input:
        v = pick(rng, g.input)
        twin = copy.deepcopy(v)
        tt = twin.type.tensor_type
        tt.elem_type = TensorProto.INT64 if tt.elem_type != TensorProto.INT64 else TensorProto.FLOAT
        g.input.append(twin)
        return f"{path} input '{v.name}' listed twice, the second of another type"
    if how == "init_as_output" and g.node and g.initializer:
        n = pick(rng, [n for n in g.node if n.output and n.output[0]])
        t = pick(rng, g.initializer)
        twin = copy.deepcopy(t)
        twin.name = n.output[0]
        g.initializer.append(twin)
        return f"{path} initializer named as the output '{n.output[0]}' of {n.op_type} '{n.name}'"
    if not g.input:
        raise NotApplicable("no input")
    v = pick(rng, g.input)
    vi = g.value_info.add()
    vi.CopyFrom(v)
    tt = vi.type.tensor_type
    tt.elem_type = TensorProto.DOUBLE if tt.elem_type != TensorProto.DOUBLE else TensorProto.INT32
    return f"{path} value_info for input '{v.name}' of another element type"


@ONNX_OPS.register("body_shadow")
def body_shadow(m, rng):
    spots = []
    for g, path in graphs(m.graph):
        outer = [v.name for v in g.input] + [t.name for t in g.initializer] + [
            o for n in g.node for o in n.output if o]
        for n in g.node:
            if n.op_type not in LOOP_OPS:
                continue
            for a in n.attribute:
                if a.g.node and outer:
                    spots.append((path, n, a.g, outer))
    path, n, body, outer = pick(rng, spots)
    name = pick(rng, outer)
    if rng.random() < 0.5 and len(body.input):
        v = pick(rng, body.input)
        old = v.name
        v.name = name
        for k in body.node:
            for i, x in enumerate(k.input):
                if x == old:
                    k.input[i] = name
        return f"{path} {n.op_type} '{n.name}' body input '{old}' renamed to outer '{name}'"
    k = pick(rng, [k for k in body.node if k.output and k.output[0]])
    old = k.output[0]
    k.output[0] = name
    for j in body.node:
        for i, x in enumerate(j.input):
            if x == old:
                j.input[i] = name
    for o in body.output:
        if o.name == old:
            o.name = name
    return f"{path} {n.op_type} '{n.name}' body value '{old}' renamed to outer '{name}'"


# -- OpenVINO IR ---------------------------------------------------------------------------------


def _bodies(ir) -> list[tuple[ET.Element, ET.Element]]:
    return [(x, b) for x in layers(ir, ("TensorIterator", "Loop", "If"))
            for b in x if b.tag in ("body", "then_body", "else_body")]


@IR_OPS.register("ir_body")
def ir_body(ir, rng):
    owner, body = pick(rng, _bodies(ir))
    inner = body.find("layers")
    edges = body.find("edges")
    if inner is None:
        raise NotApplicable("a body without layers")
    how = pick(rng, ["remove_io", "shift_ids", "no_edges", "outer_edge", "twice"])
    if how == "remove_io":
        ios = [x for x in inner if x.get("type") in ("Parameter", "Result")]
        x = pick(rng, ios)
        inner.remove(x)
        return f"{_ir_label(owner)} {body.tag}: {_ir_label(x)} removed"
    if how == "shift_ids":
        outer_ids = sorted(int(x.get("id")) for x in ir.root.find("layers"))
        ids = {x.get("id"): str(outer_ids[k % len(outer_ids)]) for k, x in enumerate(inner)}
        if len(set(ids.values())) != len(ids):
            raise NotApplicable("fewer outer ids than body layers")
        for x in inner:
            x.set("id", ids[x.get("id")])
        for e in edges if edges is not None else ():
            for end in ("from-layer", "to-layer"):
                e.set(end, ids.get(e.get(end), e.get(end)))
        port_map = body.tag.replace("body", "port_map")  # then_body -> then_port_map
        for pm in [c for c in owner if c.tag in (port_map, "back_edges")]:
            for e in pm:
                for key in ("internal_layer_id", "from-layer", "to-layer"):
                    if e.get(key) in ids:
                        e.set(key, ids[e.get(key)])
        return f"{_ir_label(owner)} {body.tag}: layer ids moved onto the outer net's"
    if how == "no_edges":
        if edges is None:
            raise NotApplicable("no edges")
        for e in list(edges):
            edges.remove(e)
        return f"{_ir_label(owner)} {body.tag}: every edge removed"
    if how == "outer_edge":
        if edges is None or not len(edges):
            raise NotApplicable("no edges")
        inner_ids = {x.get("id") for x in inner}
        outer = [x.get("id") for x in ir.root.find("layers") if x.get("id") not in inner_ids]
        e = pick(rng, list(edges))
        end = pick(rng, ["from-layer", "to-layer"])
        e.set(end, pick(rng, outer))
        return f"{_ir_label(owner)} {body.tag}: an edge's {end} -> an outer layer id"
    owner.append(copy.deepcopy(body))
    return f"{_ir_label(owner)} {body.tag} given twice"


_TEXTS = ("1,2", "1.0", "0x1", " 1", "1 ", "\uff11", "true", "True", "", "-0", "1e3", "nan",
          "+1", "١")


@IR_OPS.register("ir_attr_text")
def ir_attr_text(ir, rng):
    cands = [(x, d, k) for x in layers(ir) for d in x.findall("data") for k in d.attrib]
    x, d, k = pick(rng, cands)
    old = d.get(k)
    if rng.random() < 0.3 and old:
        new = old.swapcase() if old.lower() != old.upper() else old + ","
    else:
        new = pick(rng, _TEXTS)
    d.set(k, new)
    return f"{_ir_label(x)} {k}: {old!r} -> {new!r}"
