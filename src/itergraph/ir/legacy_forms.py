"""Older forms of ops whose meaning changed, rewritten into the newest one (`ir.canonical`).

`ir.canonical.FORMS` covers ops whose operands moved from attributes to inputs. The ops here
changed what they compute, so their older form is rewritten into nodes of the newer one
that compute the same thing; after that no backend asks these nodes' version:

- ``Softmax``, ``LogSoftmax``, ``Hardmax`` before opset 13 coerce the input into a matrix
  (rows: the axes before ``axis``, default 1) and normalise each row. When that row is the
  last axis alone (``axis`` -1, or the last axis of an input of known rank) the node is the
  opset 13 one with ``axis=-1``; otherwise it becomes ``Flatten(axis)`` -> the opset 13 op
  over the last axis -> ``Reshape`` to ``Shape`` of the input.
- ``Add``, ``Sub``, ``Mul``, ``Div``, ``Pow``, ``And``, ``Or``, ``Xor``, ``Equal``,
  ``Greater``, ``Less`` before opset 7 broadcast only with ``broadcast=1``; with an ``axis``,
  B lines up with A from that axis. They become the opset 7 op (NumPy broadcasting) with B
  given trailing 1-dims (a reshaped constant, an ``Unsqueeze``, or, when ranks are known only
  at run time, a ``Reshape`` to ``Shape(B)`` followed by ``rank(A) - axis - rank(B)`` ones).
- ``PRelu`` before opset 7 applies a 1-D slope per channel (axis 1): the same alignment.
- ``BatchNormalization`` before opset 14 trains when it has more than one output (before
  opset 7: when ``is_test`` is 0): it becomes the opset 15 node with ``training_mode`` set.
  Kept as read: ``spatial=0`` (statistics per activation, no later form) and the training
  form's fourth and fifth outputs (the saved batch statistics, which opset 14 dropped).
- ``Dropout`` before opset 12 has its ``ratio`` as an attribute and (before opset 10) a mask
  of the input's type; it becomes the opset 13 node, the mask cast back to that type.
- ``Upsample`` (7: ``scales`` an attribute; 9 and the deprecated 10: an input) is the opset 13
  ``Resize`` with ``asymmetric`` coordinates, ``nearest`` taking the floor: each output
  position ``o`` reads the input at ``o / scale`` (as ONNX Runtime computes it). Its modes are
  ``nearest`` and ``linear``; another mode is kept as read.

Each rewritten or added node of the newer op remembers the version read (``READ_AS``) when
the writer can write it back at the file's opset (`frontends.onnx.versioning`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .builder import Builder
from .graph import Graph, Node, Value
from .types import DataType, TensorType

#: ``node.meta`` key: the version the node was read with (shared with `ir.canonical`)
READ_AS = "read_as_version"

BROADCAST_OPS = ("Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater",
                 "Less")
_I64 = DataType.INT64


def _rank(v: Value | None) -> int | None:
    t = getattr(v, "type", None)
    return t.rank if isinstance(t, TensorType) else None


def _dtype(v: Value) -> DataType | None:
    t = v.type
    return t.dtype if isinstance(t, TensorType) else None


def _marked(node: Node, old: int, since: int) -> Node:
    node.meta.setdefault(READ_AS, old)
    node.version = since
    return node


# ---------------------------------------------------------------------------- Softmax family


def _softmax(node: Node, b: Builder) -> list[Node] | None:
    x, old = node.inputs[0], node.version
    axis = int(node.attrs.get("axis", 1))
    rank = _rank(x)
    attrs = {**node.attrs, "axis": -1}
    if axis == -1 or (rank and axis % rank == rank - 1):
        node.attrs = attrs
        return [_marked(node, old, 13)]
    dt = _dtype(x)
    flat = b.node("Flatten", [x], {"axis": axis}, version=old if axis >= 0 else max(old, 11),
                  type=TensorType(dt, (None, None)))
    shape = b.node("Shape", [x], version=old, type=TensorType(_I64, (rank,)))
    y = Value(b.fresh(node.op_type.lower()), TensorType(dt, (None, None)))
    _marked(b.add(node.op_type, [flat], [y], attrs, name=node.name), old, 13)
    b.add("Reshape", [y, shape], list(node.outputs), version=max(old, 5))
    return b.nodes


# ---------------------------------------------------------------------------- broadcasting


def _trailing_ones(b: Builder, a: Value, x: Value, axis: int) -> Value:
    """`x` with as many trailing 1-dims as make it line up with `a` from `axis`."""
    ra, rx = _rank(a), _rank(x)
    k = -axis - rx if axis < 0 and rx is not None else \
        ra - axis - rx if ra is not None and rx is not None else None
    if k is not None:
        if k <= 0:
            return x
        if x.const is not None:
            c = np.asarray(x.const)
            return b.const(c.reshape(c.shape + (1,) * k), f"{x.name}_aligned")
        return b.node("Unsqueeze", [x, b.i64(list(range(rx, rx + k)), "axes")], version=13,
                      type=TensorType(_dtype(x), None))
    vec = TensorType(_I64, (1,))

    def rank_of(v: Value) -> Value:
        return b.node("Shape", [b.node("Shape", [v], version=1)], version=1, type=vec)

    if axis < 0:  # the rank of x is unknown
        k_v = b.node("Sub", [b.i64([-axis], "neg_axis"), rank_of(x)], version=7, type=vec)
    else:
        base = rank_of(x) if rx is None else b.i64([axis + rx], "end")
        if rx is None:
            base = b.node("Sub", [base, b.i64([-axis], "neg_axis")], version=7, type=vec)
        k_v = b.node("Sub", [rank_of(a), base], version=7, type=vec)
    ones = b.node("ConstantOfShape", [k_v], {"value": np.ones(1, np.int64)}, version=9,
                  type=TensorType(_I64, (None,)))
    x_shape = b.i64(list(np.shape(x.const)), "shape") if x.const is not None else \
        b.node("Shape", [x], version=1, type=TensorType(_I64, (rx,)))
    shape = b.node("Concat", [x_shape, ones], {"axis": 0}, version=4,
                   type=TensorType(_I64, (None,)))
    return b.node("Reshape", [x, shape], version=5, type=TensorType(_dtype(x), None))


def _broadcast(node: Node, b: Builder) -> list[Node] | None:
    attrs = dict(node.attrs)
    flag, axis = attrs.pop("broadcast", 0), attrs.pop("axis", None)
    attrs.pop("consumed_inputs", None)
    inputs = list(node.inputs)
    if flag and axis is not None and len(inputs) == 2 and None not in inputs:
        inputs[1] = _trailing_ones(b, inputs[0], inputs[1], int(axis))
    node.inputs, node.attrs, node.version = inputs, attrs, 7
    return [*b.nodes, node]


def _prelu(node: Node, b: Builder) -> list[Node] | None:
    x, slope = node.inputs[0], node.inputs[1]
    rs = _rank(slope)
    if rs is None:
        return None  # per channel only when the slope is 1-D: unknown until run time
    dims = slope.type.shape
    size = int(np.prod(dims)) if all(isinstance(d, int) for d in dims) else None
    inputs = [x, slope]
    if rs == 1 and size != 1:
        inputs[1] = _trailing_ones(b, x, slope, 1)
    node.inputs, node.version = inputs, 7
    node.attrs.pop("consumed_inputs", None)
    return [*b.nodes, node]


# ---------------------------------------------------------------------------- BatchNorm, Dropout


def _batch_norm(node: Node, b: Builder) -> list[Node] | None:
    attrs = dict(node.attrs)
    if int(attrs.pop("spatial", 1)) != 1 or any(o.name for o in node.outputs[3:]):
        return None
    is_test = attrs.pop("is_test", None)
    attrs.pop("consumed_inputs", None)
    training = not is_test if is_test is not None else len(node.outputs) > 1
    if training:
        attrs["training_mode"] = 1
    node.attrs = attrs
    node.outputs = node.outputs[:3]
    old = node.version
    _marked(node, old, 15)
    if training or old < 6:  # the writer brings back inference nodes of opset 6 and later
        node.meta.pop(READ_AS)
    return [node]


def _dropout(node: Node, b: Builder) -> list[Node] | None:
    attrs = dict(node.attrs)
    ratio = attrs.pop("ratio", None)
    for gone in ("is_test", "consumed_inputs"):
        attrs.pop(gone, None)
    x, old = node.inputs[0], node.version
    inputs = [x] if ratio is None else [x, b.const(np.array(ratio, np.float32), "ratio")]
    outputs = list(node.outputs[:2])
    if len(outputs) > 1 and outputs[1].name and old < 10:  # the mask had the input's type
        mask = Value(b.fresh("mask"), TensorType(DataType.BOOL, None))
        dt = _dtype(x)
        if dt is not None:
            b.add("Cast", [mask], [outputs[1]], {"to": dt.onnx}, version=max(old, 6))
        else:
            b.add("CastLike", [mask, x], [outputs[1]], version=15)
        outputs[1] = mask
    new = b.add("Dropout", inputs, outputs, attrs, name=node.name, version=13)
    if len(outputs) < 2 or old >= 10:
        new.meta[READ_AS] = old
    return [new, *b.nodes[:-1]]


def _upsample(node: Node, b: Builder) -> list[Node] | None:
    mode = node.attrs.get("mode", "nearest")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    old = node.version
    if mode not in ("nearest", "linear") or old < 7 or not node.inputs:
        return None
    if old < 9:
        if node.attrs.get("scales") is None or len(node.inputs) != 1:
            return None
        scales = b.const(np.asarray(node.attrs["scales"], np.float32), "scales")
    elif len(node.inputs) == 2 and node.inputs[1] is not None:
        scales = node.inputs[1]
    else:
        return None
    attrs = {"mode": mode, "coordinate_transformation_mode": "asymmetric",
             **({"nearest_mode": "floor"} if mode == "nearest" else {})}
    new = b.add("Resize", [node.inputs[0], None, scales], list(node.outputs), attrs,
                name=node.name, version=13)
    new.meta[READ_AS] = old
    return [new]


Rule = Callable[[Node, Builder], "list[Node] | None"]

#: op -> (the opset its current form starts at, the rewrite of an older node)
RULES: dict[str, tuple[int, Rule]] = {
    "Softmax": (13, _softmax), "LogSoftmax": (13, _softmax), "Hardmax": (13, _softmax),
    **{op: (7, _broadcast) for op in BROADCAST_OPS},
    "PRelu": (7, _prelu),
    "BatchNormalization": (14, _batch_norm),
    "Dropout": (12, _dropout),
    "Upsample": (11, _upsample),  # every version: Resize replaced it (opset 10 deprecates it)
}


def rewrite_legacy(owner: Graph, node: Node, counter: Iterator[int]) -> bool:
    """Rewrite `node` (a node of `owner`) when it has an older form of `RULES`; returns
    whether it did. The nodes replacing it take its place in ``owner.nodes``, in order; the
    values they add are numbered by `counter` (one per graph read: fresh names)."""
    rule = RULES.get(node.op_type)
    if rule is None or node.domain != "" or node.version is None or node.version >= rule[0]:
        return False
    b = Builder(owner, node.name or node.op_type.lower(), "/", counter=counter)
    new = rule[1](node, b)
    if new is None:
        return False
    i = next(k for k, n in enumerate(owner.nodes) if n is node)
    owner.nodes[i:i + 1] = new
    return True
