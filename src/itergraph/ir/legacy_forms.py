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
  ``spatial=0`` (before opset 9: parameters and statistics per element of ``[C, D1, ...]``)
  is the opset 15 node on X flattened to ``[N, C * D1 * ...]`` (``Flatten``) and the
  parameters as vectors, its results reshaped back. The fourth and fifth outputs (which
  opset 14 dropped) are spelled out: in training, the batch mean and
  ``1 / sqrt(var + epsilon)`` (as ONNX Runtime gives them: ``ReduceMean`` over every axis
  but the channel axis); in inference (``is_test`` 1), as every output after ``Y``, the
  input statistics (``mean``, ``var``, ``mean``, ``1 / sqrt(var + epsilon)``).
- ``Dropout`` before opset 12 has its ``ratio`` as an attribute and (before opset 10) a mask
  of the input's type; it becomes the opset 13 node, the mask cast back to that type.
- ``Upsample`` (7: ``scales`` an attribute; 9 and the deprecated 10: an input) is the opset 13
  ``Resize`` with ``asymmetric`` coordinates, ``nearest`` taking the floor: each output
  position ``o`` reads the input at ``o / scale`` (as ONNX Runtime computes it). Its modes are
  ``nearest`` and ``linear``; another mode is kept as read.
- ``Tile`` before opset 6 repeats along one ``axis`` (inputs ``tiles`` and ``axis``, of the
  data's float type): the opset 6 node with ``repeats`` 1 but at ``axis``. ONNX has no later
  form that writes back to opset 1, and ONNX Runtime runs none: it is written at opset 6.

Each rewritten or added node of the newer op remembers the version read (``READ_AS``) when
the writer can write it back at the file's opset (`frontends.onnx.versioning`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .attributes import attr_or_default
from .builder import Builder
from .graph import Graph, Node, Value
from .static_values import const_value
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
    spatial = int(attrs.pop("spatial", 1))
    is_test = attrs.pop("is_test", None)
    attrs.pop("consumed_inputs", None)
    if len(node.inputs) != 5 or None in node.inputs:
        return None
    old, x = node.version, node.inputs[0]
    outs = [*node.outputs, *(Value("") for _ in range(5 - len(node.outputs)))]
    training = not is_test if is_test is not None else len(node.outputs) > 1
    if training:
        attrs["training_mode"] = 1
    xin, params = (x, node.inputs[1:]) if spatial else _flattened(b, node, old)
    kept = outs[:3] if training else outs[:1]
    core = kept if spatial else [Value(b.fresh("per_activation") if o.name else "")
                                 for o in kept]
    new = b.add("BatchNormalization", [xin, *params], core, attrs, name=node.name,
                version=15)
    new.meta.update(node.meta)
    if not spatial:
        for i, (c, o) in enumerate(zip(core, kept)):
            if o.name:  # back to the shape of X (Y) or of the statistics (the running ones)
                like = x if i == 0 else node.inputs[3]
                b.add("Reshape", [c, b.node("Shape", [like], version=1)], [o],
                      version=max(old, 5))
    _saved_statistics(b, node, outs, xin, training, spatial)
    if not training and old >= 6:  # the writer brings back inference nodes of opset 6 on
        new.meta.setdefault(READ_AS, old)
    return b.nodes


def _flattened(b: Builder, node: Node, old: int) -> tuple[Value, list[Value]]:
    """``spatial=0``: X as ``[N, C * D1 * ...]`` and the parameters as vectors, so that the
    opset 15 node's per-channel statistics are the per-activation ones."""
    x = node.inputs[0]
    flat = b.i64([-1], "flat")
    xin = b.node("Flatten", [x], {"axis": 1}, version=old,
                 type=TensorType(_dtype(x), (None, None)))
    return xin, [b.node("Reshape", [p, flat], version=max(old, 5),
                        type=TensorType(_dtype(p), (None,))) for p in node.inputs[1:]]


def _saved_statistics(b: Builder, node: Node, outs: list[Value], xin: Value, training: bool,
                      spatial: int) -> None:
    """The outputs after the opset 15 node's: the training form's saved batch mean and
    ``1 / sqrt(var + epsilon)`` (as ONNX Runtime gives them) over every axis of `xin` but the
    channel axis; an inference node's repeat the input statistics (``mean``, ``var``,
    ``mean``, ``1 / sqrt(var + epsilon)``)."""
    mean, var = node.inputs[3], node.inputs[4]
    eps = float(attr_or_default(node, "epsilon"))
    if not training:
        for o, v in zip(outs[1:4], (mean, var, mean)):
            if o.name:
                b.add("Identity", [v], [o], version=16)
        if outs[4].name:
            _inv_std(b, var, eps, outs[4])
        return
    if not (outs[3].name or outs[4].name):
        return
    dt = TensorType(_dtype(xin), None)
    x3 = b.node("Reshape", [xin, b.i64([0, 0, -1], "n_c_rest")], version=14, type=dt)
    axes = b.i64([0, 2], "axes")

    def mean_of(v: Value, keep: int, out: Value | None = None) -> Value:
        return b.node("ReduceMean", [v, axes], {"keepdims": keep}, version=18, type=dt,
                      out=out)

    def back(o: Value) -> Value | None:  # spatial=0: reshaped to the statistics' shape after
        return o if spatial else None

    if outs[3].name:
        m = mean_of(x3, 0, back(outs[3]))
        if not spatial:
            b.add("Reshape", [m, b.node("Shape", [mean], version=1)], [outs[3]], version=14)
    if outs[4].name:
        d = b.node("Sub", [x3, mean_of(x3, 1)], version=14, type=dt)
        inv = _inv_std(b, mean_of(b.node("Mul", [d, d], version=14, type=dt), 0), eps,
                       back(outs[4]))
        if not spatial:
            b.add("Reshape", [inv, b.node("Shape", [var], version=1)], [outs[4]], version=14)


def _inv_std(b: Builder, var: Value, eps: float, out: Value | None) -> Value:
    """``1 / sqrt(var + eps)``, `eps` of `var`'s element type."""
    dt = _dtype(var)
    e = b.const(np.array(eps, dt.numpy if dt is not None else np.float32), "epsilon")
    if dt is None:
        e = b.node("CastLike", [e, var], version=15, type=TensorType(None, ()))
    t = TensorType(dt, None)
    s = b.node("Sqrt", [b.node("Add", [var, e], version=14, type=t)], version=13, type=t)
    return b.node("Reciprocal", [s], version=13, out=out, type=t)


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


# ---------------------------------------------------------------------------- Tile


def _tile(node: Node, b: Builder) -> list[Node] | None:
    """``Tile``-1 ``(input, tiles, axis)`` as ``Tile``-6 ``(input, repeats)``: ``repeats`` is 1
    for every axis but ``axis`` (counted from the back when negative), which gets ``tiles``
    (both truncated to integers). A constant vector when all three are known at import,
    else ``ScatterElements(ones(rank), [axis], [tiles])``, which refuses an axis out of range
    at run time as the kernels refuse a negative count."""
    if len(node.inputs) != 3 or None in node.inputs:
        return None
    x, tiles, axis = node.inputs
    rank, t, a = _rank(x), const_value(tiles), const_value(axis)
    if rank is not None and t is not None and a is not None and t.size == a.size == 1 \
            and -rank <= int(a.reshape(())) < rank:
        reps = np.ones(rank, np.int64)
        reps[int(a.reshape(()))] = int(t.reshape(()))
        repeats = b.i64(reps, "repeats")
    else:
        vec = TensorType(_I64, (1,))
        ones = b.i64(np.ones(rank, np.int64), "ones") if rank is not None else b.node(
            "ConstantOfShape", [b.node("Shape", [b.node("Shape", [x], version=1)], version=1)],
            {"value": np.ones(1, np.int64)}, version=9, type=TensorType(_I64, (None,)))
        one = b.i64([1], "one")

        def entry(v: Value) -> Value:
            i = b.node("Cast", [v], {"to": _I64.onnx}, version=13, type=TensorType(_I64, None))
            return b.node("Reshape", [i, one], version=13, type=vec)

        repeats = b.node("ScatterElements", [ones, entry(axis), entry(tiles)], {"axis": 0},
                         version=13, type=TensorType(_I64, (rank,)))
    node.inputs, node.version = [x, repeats], 6
    return [*b.nodes, node]


Rule = Callable[[Node, Builder], "list[Node] | None"]

#: op -> (the opset its current form starts at, the rewrite of an older node)
RULES: dict[str, tuple[int, Rule]] = {
    "Softmax": (13, _softmax), "LogSoftmax": (13, _softmax), "Hardmax": (13, _softmax),
    **{op: (7, _broadcast) for op in BROADCAST_OPS},
    "PRelu": (7, _prelu),
    "BatchNormalization": (14, _batch_norm),
    "Dropout": (12, _dropout),
    "Upsample": (11, _upsample),
    "Tile": (6, _tile),  # every version: Resize replaced it (opset 10 deprecates it)
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
