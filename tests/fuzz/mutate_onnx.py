"""Mutation operators on an ONNX `ModelProto`, at the level of the format: attributes (axes,
trip counts, directions, ``num_scan_inputs``, ``to=`` types, ``hidden_size`` removed), node
inputs and outputs (deleted, duplicated, reordered, renamed to dangling names), op types,
declared element types and shapes, Loop/Scan body signatures and conditions, initializers
(truncated, retyped, reshaped), the opset and IR versions, and a few raw byte flips.

Each operator edits the model in place with the given `numpy.random.Generator` and returns a
description of what it did; `NotApplicable` when the model has nothing of its kind.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto
from onnx import helper as h

from .common import DIMS, INTS, NAME_TAILS, NOT_UTF8, NOT_UTF8_BYTES, NotApplicable, Registry, pick

OPS = Registry()
LOOP_OPS = ("Loop", "Scan", "If")
RNN_OPS = ("LSTM", "GRU", "RNN")
# element types: every valid one, and a few that are not
ELEM_TYPES = tuple(range(0, 24)) + (99, -1)


def graphs(g: onnx.GraphProto, path: str = "main"):
    """`g` and every subgraph in it, depth first, with a path naming where it is."""
    yield g, path
    for n in g.node:
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from graphs(a.g, f"{path}/{n.name or n.op_type}.{a.name}")
            elif a.type == AttributeProto.GRAPHS:
                for i, sub in enumerate(a.graphs):
                    yield from graphs(sub, f"{path}/{n.name or n.op_type}.{a.name}[{i}]")


def nodes(m: onnx.ModelProto, ops=None):
    """(graph, node) for every node (of `ops`, if given) in every graph."""
    return [(g, n) for g, _ in graphs(m.graph) for n in g.node
            if ops is None or n.op_type in ops]


def _loop_biased_node(m, rng, ops=None):
    """A node, half of the time one of a loop (Loop, Scan, If, RNNs) or inside a body."""
    everything = nodes(m, ops)
    loops = [(g, n) for g, n in everything if n.op_type in LOOP_OPS + RNN_OPS]
    inside = [(g, n) for g, n in everything if g is not m.graph]
    pool = pick(rng, [p for p in (loops, inside) if p] or [everything]) \
        if rng.random() < 0.5 else everything
    return pick(rng, pool)


def _label(n) -> str:
    return f"{n.op_type} '{n.name}'"


# -- attributes ----------------------------------------------------------------------------------

@OPS.register("attr_int")
def attr_int(m, rng):
    """An INT attribute set to an extreme or off-by-one value."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute if a.type == AttributeProto.INT]
    n, a = pick(rng, cands)
    old = a.i
    a.i = int(pick(rng, INTS + (old + 1, old - 1, -old)))
    return f"{_label(n)}.{a.name}: {old} -> {a.i}"


@OPS.register("attr_ints")
def attr_ints(m, rng):
    """An INTS attribute (axes, perm, directions, shapes): an element changed, dropped,
    duplicated, or the list emptied."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute if a.type == AttributeProto.INTS]
    n, a = pick(rng, cands)
    old = list(a.ints)
    new = list(old)
    how = pick(rng, ["set", "drop", "dup", "empty", "append"])
    if how == "set" and new:
        new[int(rng.integers(len(new)))] = int(pick(rng, INTS))
    elif how == "drop" and new:
        new.pop(int(rng.integers(len(new))))
    elif how == "dup" and new:
        new.append(new[int(rng.integers(len(new)))])
    elif how == "empty":
        new = []
    else:
        new.append(int(pick(rng, INTS)))
    del a.ints[:]
    a.ints.extend(new)
    return f"{_label(n)}.{a.name}: {old} -> {new}"


@OPS.register("attr_remove")
def attr_remove(m, rng):
    """An attribute removed (``hidden_size``, ``body``, ``num_scan_inputs``, ``to``, ...)."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute]
    n, a = pick(rng, cands)
    n.attribute.remove(a)
    return f"{_label(n)}: attribute {a.name} removed"


@OPS.register("attr_retype")
def attr_retype(m, rng):
    """An attribute given a value of another type (an INT as a FLOAT, a STRING as INTS...)."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute if a.type != AttributeProto.GRAPH]
    n, a = pick(rng, cands)
    name = a.name
    value = pick(rng, [1.5, 3, "reverse", [1, 2], [0.5], b"\xff\xfe"])
    n.attribute.remove(a)
    n.attribute.append(h.make_attribute(name, value))
    return f"{_label(n)}.{name}: retyped as {value!r}"


@OPS.register("cast_to")
def cast_to(m, rng):
    """A Cast/CastLike/EyeLike/RandomX ``to=``/``dtype=`` set to another (or no) element type."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute if a.name in ("to", "dtype")]
    n, a = pick(rng, cands)
    old = a.i
    a.i = int(pick(rng, ELEM_TYPES))
    return f"{_label(n)}.{a.name}: {old} -> {a.i}"


@OPS.register("rnn_attrs")
def rnn_attrs(m, rng):
    """An LSTM/GRU/RNN's direction, hidden_size, activations or layout changed."""
    _, n = pick(rng, nodes(m, RNN_OPS))
    what = pick(rng, ["direction", "hidden_size", "activations", "layout", "clip",
                      "linear_before_reset", "input_forget"])
    for a in list(n.attribute):
        if a.name == what:
            n.attribute.remove(a)
    value = {"direction": pick(rng, ["forward", "reverse", "bidirectional", "sideways", ""]),
             "hidden_size": pick(rng, [0, -1, 1, 2**31, None]),
             "activations": pick(rng, [["Tanh"], ["Relu", "Tanh", "Sigmoid", "Elu"], ["Nope"]]),
             "layout": pick(rng, [0, 1, 2, -1]),
             "clip": pick(rng, [0.0, -1.0, 1e-30, float("nan")]),
             "linear_before_reset": pick(rng, [0, 1, 5]),
             "input_forget": pick(rng, [0, 1, 3])}[what]
    if value is not None:
        n.attribute.append(h.make_attribute(what, value))
    return f"{_label(n)}.{what} -> {value!r}"


@OPS.register("scan_attrs")
def scan_attrs(m, rng):
    """A Scan's num_scan_inputs, scan axes or directions changed."""
    _, n = pick(rng, nodes(m, ("Scan",)))
    what = pick(rng, ["num_scan_inputs", "scan_input_axes", "scan_input_directions",
                      "scan_output_axes", "scan_output_directions"])
    for a in list(n.attribute):
        if a.name == what:
            n.attribute.remove(a)
    if what == "num_scan_inputs":
        value = int(pick(rng, [-1, 0, 1, 2, 3, 100]))
    else:
        value = [int(pick(rng, [-3, -1, 0, 1, 2, 5])) for _ in range(int(rng.integers(0, 4)))]
    n.attribute.append(h.make_attribute(what, value))
    return f"{_label(n)}.{what} -> {value!r}"


# -- node inputs, outputs, types --------------------------------------------------------------

@OPS.register("input_edit")
def input_edit(m, rng):
    """A node input deleted, duplicated, swapped with another, renamed to a dangling name, or
    made the empty (absent optional) name."""
    g, n = _loop_biased_node(m, rng)
    if not n.input:
        raise NotApplicable("no inputs")
    ins = list(n.input)
    i = int(rng.integers(len(ins)))
    how = pick(rng, ["delete", "duplicate", "swap", "dangle", "empty", "self"])
    if how == "delete":
        ins.pop(i)
    elif how == "duplicate":
        ins.insert(i, ins[i])
    elif how == "swap":
        j = int(rng.integers(len(ins)))
        ins[i], ins[j] = ins[j], ins[i]
    elif how == "dangle":
        ins[i] = "fuzz_dangling"
    elif how == "empty":
        ins[i] = ""
    else:  # a node reading its own output: a cycle
        ins[i] = n.output[0] if n.output else "fuzz_dangling"
    del n.input[:]
    n.input.extend(ins)
    return f"{_label(n)} input {i} {how}: {ins}"


@OPS.register("output_edit")
def output_edit(m, rng):
    """A node output deleted, duplicated, renamed (its readers dangle) or given the name of
    another value (defined twice)."""
    g, n = _loop_biased_node(m, rng)
    if not n.output:
        raise NotApplicable("no outputs")
    outs = list(n.output)
    i = int(rng.integers(len(outs)))
    how = pick(rng, ["delete", "duplicate", "rename", "clash", "empty"])
    if how == "delete":
        outs.pop(i)
    elif how == "duplicate":
        outs.append(outs[i])
    elif how == "rename":
        outs[i] = "fuzz_renamed"
    elif how == "clash":
        others = [o for _, x in nodes(m) for o in x.output if o and o not in outs]
        others += [v.name for v in g.input]
        outs[i] = pick(rng, others) if others else outs[i]
    else:
        outs[i] = ""
    del n.output[:]
    n.output.extend(outs)
    return f"{_label(n)} output {i} {how}: {outs}"


@OPS.register("name_text")
def name_text(m, rng):
    """A value's name (everywhere it appears) or a node's name given a NUL, a control
    character, or a byte that is not UTF-8 (`finish`). The main graph's inputs keep theirs (the
    feeds name them)."""
    fed = {v.name for v in m.graph.input}
    values = sorted({o for _, n in nodes(m) for o in n.output if o and o not in fed})
    tail = pick(rng, NAME_TAILS)
    if rng.random() < 0.25 or not values:
        _, n = _loop_biased_node(m, rng)
        old, n.name = n.name, n.name + tail
        return f"node {old!r} renamed {n.name!r}"
    old = pick(rng, values)
    new = old + tail
    for g, _ in graphs(m.graph):
        for n in g.node:
            for names in (n.input, n.output):
                for i, x in enumerate(names):
                    if x == old:
                        names[i] = new
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            if vi.name == old:
                vi.name = new
    return f"value {old!r} renamed {new!r}"


def finish(data: bytes) -> bytes:
    """A serialized model with the markers of `name_text` made bytes that are not UTF-8."""
    return data.replace(NOT_UTF8.encode(), NOT_UTF8_BYTES)


@OPS.register("op_type")
def op_type(m, rng):
    """A node's op type or domain changed."""
    g, n = _loop_biased_node(m, rng)
    old = (n.domain, n.op_type)
    if rng.random() < 0.2:
        n.domain = pick(rng, ["ai.onnx.ml", "com.microsoft", "fuzz.domain", "ai.onnx"])
    else:
        n.op_type = pick(rng, ["Loop", "Scan", "If", "Add", "Identity", "Concat", "Gather",
                               "LSTM", "GRU", "Reshape", "Squeeze", "Cast", "Slice", "NoSuchOp",
                               "SequenceInsert", "SplitToSequence", "Where", "MatMul"])
    return f"{_label(n)}: {old} -> {(n.domain, n.op_type)}"


@OPS.register("node_remove")
def node_remove(m, rng):
    """A node removed (its readers dangle) or duplicated (its outputs defined twice)."""
    g, n = _loop_biased_node(m, rng)
    if rng.random() < 0.6:
        g.node.remove(n)
        return f"{_label(n)} removed"
    i = list(g.node).index(n)
    g.node.insert(i, n)
    return f"{_label(n)} duplicated"


@OPS.register("node_reorder")
def node_reorder(m, rng):
    """Two nodes of a graph swapped (the order is no longer topological, perhaps)."""
    g, _ = pick(rng, [x for x in graphs(m.graph) if len(x[0].node) > 1])
    i, j = (int(x) for x in rng.choice(len(g.node), 2, replace=False))
    a, b = onnx.NodeProto(), onnx.NodeProto()
    a.CopyFrom(g.node[i])
    b.CopyFrom(g.node[j])
    g.node[i].CopyFrom(b)
    g.node[j].CopyFrom(a)
    return f"nodes {i} and {j} swapped"


# -- declared types and shapes --------------------------------------------------------------

def _value_infos(m, rng, body_bias=True):
    vis = []
    for g, path in graphs(m.graph):
        for kind in ("input", "output", "value_info"):
            vis += [(path, kind, v) for v in getattr(g, kind) if v.type.HasField("tensor_type")]
    return vis


@OPS.register("value_dtype")
def value_dtype(m, rng):
    """A declared element type (graph or body input, output, value_info) changed."""
    path, kind, v = pick(rng, _value_infos(m, rng))
    old = v.type.tensor_type.elem_type
    v.type.tensor_type.elem_type = int(pick(rng, ELEM_TYPES))
    return f"{path} {kind} '{v.name}' elem_type {old} -> {v.type.tensor_type.elem_type}"


@OPS.register("value_shape")
def value_shape(m, rng):
    """A declared shape changed: a dimension negative, zero or huge, one dropped or added, a
    symbolic name, or the shape removed."""
    path, kind, v = pick(rng, _value_infos(m, rng))
    t = v.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None
            for d in t.shape.dim] if t.HasField("shape") else None
    how = pick(rng, ["dim", "drop", "add", "param", "unshape", "scalar"])
    new = list(dims or [])
    if how == "dim" and new:
        new[int(rng.integers(len(new)))] = int(pick(rng, DIMS))
    elif how == "drop" and new:
        new.pop(int(rng.integers(len(new))))
    elif how == "add":
        new.insert(int(rng.integers(len(new) + 1)), int(pick(rng, DIMS)))
    elif how == "param":
        new.append("fuzz_sym")
    elif how == "scalar":
        new = []
    if how == "unshape":
        t.ClearField("shape")
        return f"{path} {kind} '{v.name}' shape {dims} removed"
    t.ClearField("shape")
    t.shape.SetInParent()
    for d in new:
        dim = t.shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        elif d is not None:
            dim.dim_value = d
    return f"{path} {kind} '{v.name}' shape {dims} -> {new}"


@OPS.register("graph_io")
def graph_io(m, rng):
    """A graph's (or body's) input or output list edited: one removed, duplicated, swapped or
    renamed to a dangling name."""
    g, path = pick(rng, list(graphs(m.graph)))
    kind = pick(rng, ["input", "output"])
    vals = getattr(g, kind)
    if not len(vals):
        raise NotApplicable(f"no {kind}s")
    i = int(rng.integers(len(vals)))
    how = pick(rng, ["remove", "duplicate", "swap", "rename"])
    if how == "remove":
        del vals[i]
    elif how == "duplicate":
        vals.add().CopyFrom(vals[i])
    elif how == "swap":
        j = int(rng.integers(len(vals)))
        a, b = onnx.ValueInfoProto(), onnx.ValueInfoProto()
        a.CopyFrom(vals[i])
        b.CopyFrom(vals[j])
        vals[i].CopyFrom(b)
        vals[j].CopyFrom(a)
    else:
        vals[i].name = "fuzz_dangling"
    return f"{path} {kind} {i} {how}"


# -- loops ----------------------------------------------------------------------------------------

@OPS.register("loop_trip")
def loop_trip(m, rng):
    """A Loop's trip count or condition input replaced by a constant: huge, negative, zero,
    of another type, or not a scalar (or the input made absent)."""
    g, n = pick(rng, nodes(m, ("Loop",)))
    slot = int(pick(rng, [0, 0, 1]))
    ins = list(n.input) + [""] * max(0, 2 - len(n.input))
    name = f"fuzz_{n.name or 'loop'}_{slot}"
    if rng.random() < 0.15:
        value = None
        ins[slot] = ""
    else:
        value = pick(rng, [np.array(2**62, np.int64), np.array(-1, np.int64),
                           np.array(0, np.int64), np.array(3, np.int32),
                           np.array(2.5, np.float32), np.array([2, 3], np.int64),
                           np.array(True), np.array(False), np.array(float("inf"), np.float32),
                           np.array(10**6, np.int64)])
        g.node.insert(0, h.make_node("Constant", [], [name],
                                     value=onnx.numpy_helper.from_array(value), name=name))
        ins[slot] = name
    del n.input[:]
    n.input.extend(ins)
    return f"{_label(n)} input {slot} -> {value!r}"


@OPS.register("body_condition")
def body_condition(m, rng):
    """A Loop body's condition output made a pass-through of its condition input (the loop
    runs to its trip count, or forever without one), a constant, or of another type."""
    _, n = pick(rng, nodes(m, ("Loop",)))
    body = next(a.g for a in n.attribute if a.name == "body")
    if len(body.input) < 2 or not body.output:
        raise NotApplicable("a body without a condition")
    how = pick(rng, ["passthrough", "true", "false", "int", "vector"])
    out = body.output[0].name
    value = {"true": np.array(True), "false": np.array(False), "int": np.array(1, np.int64),
             "vector": np.array([True, False])}.get(how)
    for x in [x for x in body.node if out in x.output]:
        body.node.remove(x)
    if how == "passthrough":
        body.node.append(h.make_node("Identity", [body.input[1].name], [out], name="fuzz_cond"))
    else:
        body.node.append(h.make_node("Constant", [], [out], name="fuzz_cond",
                                     value=onnx.numpy_helper.from_array(value)))
    return f"{_label(n)} body condition -> {how}"


@OPS.register("body_signature")
def body_signature(m, rng):
    """A Loop/Scan body's inputs or outputs: one removed, one added, two swapped, or a
    body output renamed to a value the body does not define."""
    _, n = pick(rng, nodes(m, ("Loop", "Scan")))
    body = next(a.g for a in n.attribute if a.name == "body")
    kind = pick(rng, ["input", "output"])
    vals = getattr(body, kind)
    how = pick(rng, ["remove", "add", "swap", "undefined"])
    if how == "remove" and len(vals):
        del vals[int(rng.integers(len(vals)))]
    elif how == "add":
        vals.add().CopyFrom(h.make_tensor_value_info(f"fuzz_extra_{kind}", TensorProto.FLOAT,
                                                     [2]))
    elif how == "swap" and len(vals) > 1:
        i, j = (int(x) for x in rng.choice(len(vals), 2, replace=False))
        a, b = onnx.ValueInfoProto(), onnx.ValueInfoProto()
        a.CopyFrom(vals[i])
        b.CopyFrom(vals[j])
        vals[i].CopyFrom(b)
        vals[j].CopyFrom(a)
    elif how == "undefined" and kind == "output" and len(vals):
        vals[int(rng.integers(len(vals)))].name = "fuzz_undefined"
    else:
        raise NotApplicable(f"cannot {how} a body {kind}")
    return f"{_label(n)} body {kind} {how}"


@OPS.register("loop_arity")
def loop_arity(m, rng):
    """A Loop/Scan node given one input or output more or fewer than its body declares."""
    _, n = pick(rng, nodes(m, ("Loop", "Scan")))
    field = pick(rng, [n.input, n.output])
    if rng.random() < 0.5 and len(field):
        del field[len(field) - 1]
        return f"{_label(n)}: last {'input' if field is n.input else 'output'} removed"
    field.append(field[len(field) - 1] if len(field) and field is n.input else "fuzz_extra")
    return f"{_label(n)}: an {'input' if field is n.input else 'output'} added"


# -- initializers and constants ---------------------------------------------------------------

def _tensors(m):
    out = [(f"initializer '{t.name}'", t) for g, _ in graphs(m.graph) for t in g.initializer]
    out += [(f"Constant '{n.name}'", a.t) for _, n in nodes(m, ("Constant",))
            for a in n.attribute if a.type == AttributeProto.TENSOR]
    return out


@OPS.register("tensor_bytes")
def tensor_bytes(m, rng):
    """An initializer's or Constant's data truncated, extended, or its element type or dims
    changed while the bytes stay."""
    what, t = pick(rng, _tensors(m))
    if t.data_location == TensorProto.EXTERNAL:
        raise NotApplicable("external data")
    how = pick(rng, ["truncate", "extend", "dtype", "dims", "dims_huge"])
    if how in ("truncate", "extend"):
        arr = onnx.numpy_helper.to_array(t)
        if arr.dtype == object:
            raise NotApplicable("strings")
        raw = arr.tobytes()
        raw = raw[:int(rng.integers(len(raw)))] if how == "truncate" and raw else raw + b"\x01" * 3
        for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            t.ClearField(f)
        t.raw_data = raw
    elif how == "dtype":
        t.data_type = int(pick(rng, ELEM_TYPES))
    elif how == "dims":
        dims = list(t.dims)
        dims = dims[1:] if dims and rng.random() < 0.5 else dims + [int(pick(rng, (0, 2, 3)))]
        del t.dims[:]
        t.dims.extend(dims)
    else:
        del t.dims[:]
        t.dims.extend([2**31, 2**31])
    return f"{what} {how}"


# -- the header and the bytes ---------------------------------------------------------------

@OPS.register("opset")
def opset(m, rng):
    """The default domain's opset version (or the IR version) changed."""
    if rng.random() < 0.25:
        old = m.ir_version
        m.ir_version = int(pick(rng, [0, 1, 3, 7, 13, 99]))
        return f"ir_version {old} -> {m.ir_version}"
    ops = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
    o = ops[0] if ops else m.opset_import.add()
    old = o.version
    o.version = int(pick(rng, [1, 6, 7, 9, 10, 11, 13, 16, 18, 21, 23, 99, 0, -1]))
    return f"opset {old} -> {o.version}"


def flip_bytes(data: bytes, rng) -> tuple[bytes, str]:
    """A few bytes of a serialized model overwritten, or the file cut short."""
    b = bytearray(data)
    if rng.random() < 0.3:
        cut = int(rng.integers(len(b)))
        return bytes(b[:cut]), f"cut at {cut} of {len(b)} bytes"
    where = [int(x) for x in rng.integers(0, len(b), int(rng.integers(1, 5)))]
    for i in where:
        b[i] = int(rng.integers(256))
    return bytes(b), f"bytes {where} overwritten"
