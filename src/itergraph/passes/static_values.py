"""Values known before a run: constants and what small integer/boolean expressions over
constants and static shapes compute (``Shape -> Gather``, ``Size``, ``Equal`` of those...).

Not a pass: `fold_trip_count` and `inline_if` ask `static_value(v)` what `v` is when no
input has been fed. The answer is ``None`` whenever any part of the expression is not known;
only small tensors (at most `MAX_ELEMENTS` elements) are computed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ..ir.graph import Node, Value
from ..ir.types import DataType, TensorType
from .loop_motion import STD, const_value, static_shape

MAX_ELEMENTS = 64

_DIMS: ContextVar[dict[int, tuple] | None] = ContextVar("known_dims", default=None)


@contextmanager
def known_dims(dims: dict[int, tuple]) -> Iterator[None]:
    """Within the block, `static_value` also knows these dimensions: value uid -> a shape
    tuple with None where a dimension is unknown (what a caller has learnt otherwise, e.g. a
    product's width from its weights)."""
    token = _DIMS.set({**(_DIMS.get() or {}), **dims})
    try:
        yield
    finally:
        _DIMS.reset(token)


def _dims(v: Value) -> tuple | None:
    """`v`'s dimensions, None where unknown: static, declared or given by `known_dims`."""
    full = static_shape(v)
    if full is not None:
        return full
    hint = (_DIMS.get() or {}).get(v.uid)
    t = v.type
    declared = t.shape if isinstance(t, TensorType) and t.shape is not None else None
    if hint is None or declared is None:
        return hint if declared is None else tuple(d if isinstance(d, int) else None
                                                   for d in declared)
    if len(hint) != len(declared):
        return None
    return tuple(h if h is not None else (d if isinstance(d, int) else None)
                 for h, d in zip(hint, declared))


def static_value(v: Value | None, _depth: int = 0) -> np.ndarray | None:
    """`v`'s value when it follows from constants and static shapes alone, else None."""
    if v is None or _depth > 64:
        return None
    known = const_value(v)
    if known is not None:
        return known if known.size <= MAX_ELEMENTS else None
    node = v.producer
    if node is None or node.domain not in STD or len(node.outputs) != 1:
        return None
    rule = _RULES.get(node.op_type)
    if rule is None:
        return None
    try:
        out = rule(node, lambda i: _input(node, i, _depth))
    except _Unknown:
        return None
    except (ValueError, IndexError, TypeError, ZeroDivisionError, OverflowError):
        return None  # an expression the run itself would reject: leave it to the run
    if out is None:
        return None
    out = np.asarray(out)
    return out if out.size <= MAX_ELEMENTS else None


class _Unknown(Exception):
    pass


def _input(node: Node, i: int, depth: int) -> np.ndarray:
    if i >= len(node.inputs) or node.inputs[i] is None:
        raise _Unknown
    got = static_value(node.inputs[i], depth + 1)
    if got is None:
        raise _Unknown
    return got


def _opt(get, node: Node, i: int):
    if i >= len(node.inputs) or node.inputs[i] is None:
        return None
    return get(i)


def _shape_dims(node: Node) -> tuple:
    """The dimensions a ``Shape`` node outputs, None where unknown."""
    dims = _dims(node.inputs[0])
    if dims is None:
        value = static_value(node.inputs[0])  # the shape of a small computed tensor
        if value is None:
            raise _Unknown
        dims = value.shape
    start, end = node.attrs.get("start", 0), node.attrs.get("end", None)
    return dims[start:end]


def _shape(node: Node, get):
    dims = _shape_dims(node)
    if None in dims:
        raise _Unknown
    return np.array(dims, dtype=np.int64)


def _size(node: Node, get):
    shape = static_shape(node.inputs[0])
    if shape is None:
        raise _Unknown
    return np.array(int(np.prod(shape)), dtype=np.int64)


def _gather(node: Node, get):
    src = node.inputs[0].producer if node.inputs[0] is not None else None
    if src is not None and src.op_type == "Shape" and src.domain in STD:
        # known dimensions of a partly known shape (``Shape(x)[1]`` of a [batch, width] x)
        dims = np.array([-1 if d is None else d for d in _shape_dims(src)], np.int64)
        out = np.take(dims, get(1), axis=0)
        if (out < 0).any():
            raise _Unknown
        return out
    return np.take(get(0), get(1), axis=node.attrs.get("axis", 0))


def _cast(node: Node, get):
    return get(0).astype(DataType.from_onnx(node.attrs["to"]).numpy)


def _squeeze(node: Node, get):
    x = get(0)
    axes = node.attrs.get("axes")
    if axes is None:
        axes = _opt(get, node, 1)
    return np.squeeze(x) if axes is None else np.squeeze(x, tuple(int(a) for a in
                                                               np.ravel(axes)))


def _unsqueeze(node: Node, get):
    x = get(0)
    axes = node.attrs.get("axes")
    if axes is None:
        axes = get(1)
    rank = x.ndim + len(np.ravel(axes))
    return np.expand_dims(x, tuple(int(a) % rank for a in np.ravel(axes)))


def _reshape(node: Node, get):
    x, shape = get(0), [int(d) for d in get(1)]
    shape = [x.shape[i] if d == 0 and not node.attrs.get("allowzero") else d
             for i, d in enumerate(shape)]
    return x.reshape(shape)


def _slice(node: Node, get):
    x = get(0)
    starts, ends = get(1), get(2)
    axes = _opt(get, node, 3)
    steps = _opt(get, node, 4)
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        index[int(a)] = slice(int(s), int(e), int(st))
    return x[tuple(index)]


def _concat(node: Node, get):
    return np.concatenate([get(i) for i in range(len(node.inputs))],
                          axis=node.attrs.get("axis", 0))


def _constant(node: Node, get):
    for key in ("value", "value_int", "value_ints", "value_float", "value_floats"):
        if key in node.attrs:
            return np.asarray(node.attrs[key])
    raise _Unknown


def _constant_of_shape(node: Node, get):
    value = node.attrs.get("value")
    fill = np.asarray(value).reshape(-1)[:1] if value is not None else np.zeros(1, np.float32)
    shape = tuple(int(d) for d in get(0))
    if int(np.prod(shape)) > MAX_ELEMENTS:
        raise _Unknown
    return np.full(shape, fill[0], dtype=fill.dtype)


def _expand(node: Node, get):
    x = get(0)
    shape = np.broadcast_shapes(x.shape, tuple(int(d) for d in get(1)))
    if int(np.prod(shape)) > MAX_ELEMENTS:
        raise _Unknown
    return np.broadcast_to(x, shape).copy()


def _mod(node: Node, get):
    a, b = get(0), get(1)
    return np.fmod(a, b) if node.attrs.get("fmod", 0) else np.mod(a, b)


def _where(node: Node, get):
    return np.where(get(0), get(1), get(2))


def _binary(fn):
    return lambda node, get: fn(get(0), get(1))


def _unary(fn):
    return lambda node, get: fn(get(0))


def _div(a, b):
    if a.dtype.kind in "iu":
        return np.trunc(a / b).astype(a.dtype)
    return a / b


def _variadic(fn):
    def rule(node, get):
        out = get(0)
        for i in range(1, len(node.inputs)):
            out = fn(out, get(i))
        return out
    return rule


def _reduce(fn):
    def rule(node, get):
        x = get(0)
        axes = node.attrs.get("axes")
        if axes is None:
            axes = _opt(get, node, 1)
        axes = None if axes is None or np.size(axes) == 0 else tuple(int(a) for a in
                                                                     np.ravel(axes))
        return fn(x, axis=axes, keepdims=bool(node.attrs.get("keepdims", 1)))
    return rule


_RULES = {
    "Shape": _shape, "Size": _size, "Gather": _gather, "Cast": _cast, "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze, "Reshape": _reshape, "Slice": _slice, "Concat": _concat,
    "Constant": _constant, "Identity": _unary(lambda x: x), "Neg": _unary(np.negative),
    "Not": _unary(np.logical_not), "Add": _binary(np.add), "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply), "Div": _binary(_div), "Equal": _binary(np.equal),
    "Less": _binary(np.less), "Greater": _binary(np.greater),
    "LessOrEqual": _binary(np.less_equal), "GreaterOrEqual": _binary(np.greater_equal),
    "And": _binary(np.logical_and), "Or": _binary(np.logical_or),
    "Xor": _binary(np.logical_xor), "Min": _variadic(np.minimum), "Max": _variadic(np.maximum),
    "ReduceProd": _reduce(np.prod), "ReduceMin": _reduce(np.min), "ReduceMax": _reduce(np.max),
    "ReduceSum": _reduce(np.sum), "ConstantOfShape": _constant_of_shape, "Expand": _expand,
    "Where": _where, "Mod": _mod,
}


def static_int(v: Value | None) -> int | None:
    """`v`'s value as a Python int when it is a static one-element integer tensor."""
    got = static_value(v)
    if got is None or got.size != 1 or got.dtype.kind not in "iu":
        return None
    return int(got.reshape(()))
