"""Bringing a node written under one opset to the model's opset.

The IR lets every node carry its own opset version; an ONNX model has one version per
domain. A node whose operator did not change between its version and the target is written
as is. Otherwise the node is converted with ``onnx.version_converter`` applied to a one-node
model (that covers the attribute-to-input moves of Slice, Squeeze, Unsqueeze, Reduce*, Split,
Pad, ... both upwards and, where ONNX has an adapter, downwards). Nodes holding subgraphs
(If, ...) only changed their type constraints and are written as is.

Where the converter has no downward adapter, `OLDER` writes the forms `ir.legacy_forms` reads
older nodes into back in their older spelling when that means the same: a ``Softmax``,
``LogSoftmax`` or ``Hardmax`` over the last axis (``axis=-1`` at any opset), an inference
``BatchNormalization`` (opset 6 on; ``is_test=1`` before 7), an inference ``Dropout`` whose
ratio is a constant (opset 7 on; its mask is bool from opset 10 only) and a ``Resize`` of
``Upsample``'s meaning (``asymmetric``, ``nearest`` by the floor or ``linear``, by scales:
``Upsample`` before opset 10, its scales an attribute before 9; ``Resize``-10 at 10).
"""

from __future__ import annotations

import onnx
from onnx import helper

from ...errors import UnsupportedError


def unchanged(op: str, domain: str, from_v: int, to_v: int) -> bool:
    """Whether `op` means the same under opsets `from_v` and `to_v` (unknown ops: assume so;
    an op that opset `to_v` does not have yet does not)."""
    if from_v == to_v:
        return True
    try:
        a = onnx.defs.get_schema(op, from_v, domain).since_version
    except onnx.defs.SchemaError:
        return True
    try:
        return onnx.defs.get_schema(op, to_v, domain).since_version == a
    except onnx.defs.SchemaError:
        return False


#: converted one-node models by their canonical bytes (names replaced by positions):
#: onnx.version_converter takes tens of milliseconds per call, and a generated graph holds
#: many nodes of the same form
_CONVERTED: dict[bytes, onnx.ModelProto] = {}
_CONVERTED_MAX = 512


def _converted(node: onnx.NodeProto, ins: list[str], from_v: int, to_v: int,
               types: dict[str, onnx.TypeProto],
               consts: dict[str, onnx.TensorProto]) -> onnx.ModelProto:
    """`node` as a one-node model converted to opset `to_v`, with its input and output
    names as they are (the conversion itself runs on positional names and is cached)."""
    pos = {n: f"i{k}" for k, n in enumerate(ins)}
    pos.update({n: f"o{k}" for k, n in enumerate(node.output) if n})
    canon = onnx.NodeProto()
    canon.CopyFrom(node)
    canon.name = "n"
    canon.input[:] = [pos.get(n, n) for n in node.input]
    canon.output[:] = [pos.get(n, n) for n in node.output]
    g = helper.make_graph(
        [canon], "adapt",
        [onnx.ValueInfoProto(name=pos[n], type=types[n]) if n in types else
         onnx.ValueInfoProto(name=pos[n]) for n in ins],
        [onnx.ValueInfoProto(name=pos[n]) for n in node.output if n],
    )
    for n in ins:
        if n in consts:
            t = onnx.TensorProto()
            t.CopyFrom(consts[n])
            t.name = pos[n]
            g.initializer.append(t)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", from_v)])
    key = m.SerializeToString(deterministic=True) + to_v.to_bytes(2, "little")
    conv = _CONVERTED.get(key)
    if conv is None:
        try:
            from onnx import version_converter

            conv = version_converter.convert_version(m, to_v)
        except Exception as e:  # noqa: BLE001 - the converter raises plain RuntimeErrors
            raise UnsupportedError(
                f"{node.op_type} node '{node.name}': cannot convert it from opset {from_v} to "
                f"the model's opset {to_v} "
                f"({str(e).strip().splitlines()[0] if str(e) else e})") from e
        if len(_CONVERTED) >= _CONVERTED_MAX:
            _CONVERTED.pop(next(iter(_CONVERTED)))
        _CONVERTED[key] = conv
    back = {v: k for k, v in pos.items()}
    out = onnx.ModelProto()
    out.CopyFrom(conv)
    for t in out.graph.initializer:
        t.name = back.get(t.name, t.name)
    for n in out.graph.node:
        if n.name == "n":
            n.name = node.name
        n.input[:] = [back.get(i, i) for i in n.input]
        n.output[:] = [back.get(o, o) for o in n.output]
    return out


def adapt(node: onnx.NodeProto, from_v: int, to_v: int, types: dict[str, onnx.TypeProto],
          fresh, consts: dict[str, onnx.TensorProto] | None = None,
          node_name=None) -> list[onnx.NodeProto]:
    """`node` (valid under default-domain opset `from_v`) as nodes valid under `to_v`.

    `types` gives known input types by name, `consts` the inputs whose value is a known
    constant (down-conversions turn some of those into attributes); `fresh(hint)` makes a new
    unique value name for the intermediate values the conversion introduces, `node_name(hint)`
    (when given) a unique node name for the nodes it adds.
    """
    consts = consts or {}
    if node.domain not in ("", "ai.onnx"):
        return [node]
    older = OLDER.get(node.op_type)
    if older is not None and to_v < from_v:  # first: the op may not exist at `to_v`
        same = older(node, to_v, consts)
        if same is not None:
            return [same]
    if unchanged(node.op_type, "", from_v, to_v):
        return [node]
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
           for a in node.attribute):
        return [node]
    ins = list(dict.fromkeys(n for n in node.input if n))
    conv = _converted(node, ins, from_v, to_v, types, consts)
    keep = set(ins) | set(node.output) | {""}
    rename = {}
    out: list[onnx.NodeProto] = []
    for t in conv.graph.initializer:  # adapters may add initializers: make them Constants
        if t.name in consts:
            continue
        rename[t.name] = fresh(t.name or "const")
        c = onnx.TensorProto()
        c.CopyFrom(t)
        c.name = ""
        out.append(helper.make_node("Constant", [], [rename[t.name]], value=c))
    for n in conv.graph.node:
        for o in n.output:
            if o not in keep and o not in rename:
                rename[o] = fresh(o)
    for n in conv.graph.node:
        new = onnx.NodeProto()
        new.CopyFrom(n)
        new.input[:] = [rename.get(i, i) for i in n.input]
        new.output[:] = [rename.get(o, o) for o in n.output]
        if not new.name:
            new.name = node.name
        out.append(new)
    if node_name is not None:  # node names must be unique in a model: number the extras
        for n in out:
            if n.name == node.name and n.op_type != node.op_type or not n.name:
                n.name = node_name(f"{node.name}_{n.op_type}")
    return out


def _attr(node: onnx.NodeProto, name: str):
    a = next((a for a in node.attribute if a.name == name), None)
    return None if a is None else helper.get_attribute_value(a)


def _copy(node: onnx.NodeProto, drop: tuple[str, ...] = (), **attrs) -> onnx.NodeProto:
    new = onnx.NodeProto()
    new.CopyFrom(node)
    keep = [a for a in new.attribute if a.name not in drop and a.name not in attrs]
    del new.attribute[:]
    new.attribute.extend(keep)
    new.attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
    return new


def _normalize_older(node, to_v, consts):
    if to_v >= 13 or _attr(node, "axis") not in (None, -1):
        return None
    return _copy(node, axis=-1)  # before 13 the default axis is 1


def _batch_norm_older(node, to_v, consts):
    if to_v >= 14 or to_v < 6 or _attr(node, "training_mode") or \
            any(node.output[1:]):
        return None
    new = _copy(node, ("training_mode",), **({"is_test": 1} if to_v < 7 else {}))
    del new.output[1:]
    return new


def _dropout_older(node, to_v, consts):
    if to_v >= 12 or to_v < 7 or any(node.input[2:]) or \
            (to_v < 10 and any(node.output[1:])):
        return None
    ratio = node.input[1] if len(node.input) > 1 else ""
    if ratio and ratio not in consts:
        return None
    extra = {"ratio": float(onnx.numpy_helper.to_array(consts[ratio]))} if ratio else {}
    new = _copy(node, **extra)
    del new.input[1:]
    return new


def _text(node, name: str):
    v = _attr(node, name)
    return v.decode() if isinstance(v, bytes) else v


def _resize_older(node, to_v, consts):
    ins = list(node.input) + [""] * (4 - len(node.input))
    mode = _text(node, "mode")
    if (to_v >= 11 or ins[1] or not ins[2] or ins[3] or mode not in ("nearest", "linear")
            or _text(node, "coordinate_transformation_mode") != "asymmetric"
            or (mode == "nearest" and _text(node, "nearest_mode") != "floor")
            or any(a.name not in ("mode", "coordinate_transformation_mode", "nearest_mode")
                   for a in node.attribute)
            or (to_v < 9 and ins[2] not in consts)):
        return None
    if to_v < 9:  # the scales an attribute
        scales = onnx.numpy_helper.to_array(consts[ins[2]]).reshape(-1)
        return helper.make_node("Upsample", [ins[0]], list(node.output), name=node.name,
                                mode=mode, scales=[float(s) for s in scales])
    return helper.make_node("Upsample" if to_v < 10 else "Resize", [ins[0], ins[2]],
                            list(node.output), name=node.name, mode=mode)


#: op -> (node, opset, constant inputs) -> the node as written at that older opset, or None
OLDER = {"Softmax": _normalize_older, "LogSoftmax": _normalize_older,
         "Hardmax": _normalize_older, "BatchNormalization": _batch_norm_older,
         "Dropout": _dropout_older, "Resize": _resize_older}
