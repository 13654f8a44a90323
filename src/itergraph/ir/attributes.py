"""Reading node attributes and constant inputs, shared by both backends.

Attributes arrive as the readers left them in ``node.attrs``: ints, floats, ``str``, lists of
those, NumPy arrays (tensor attributes), IR types and graphs. ``bytes`` are still accepted and
decoded here for graphs built by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ModelError, where
from .defaults import defaults
from .types import DataType


def attr(node, name: str, default: Any = None) -> Any:
    """The attribute `name` of `node`, or `default` when absent."""
    v = node.attrs.get(name)
    return default if v is None else v


def attr_or_default(node, name: str) -> Any:
    """The attribute `name` of `node`, or its default in the op's schema (`ir.defaults`); a
    `ModelError` naming the node where it leaves out an attribute that has none."""
    v = node.attrs.get(name)
    if v is None:
        v = defaults(node.domain, node.op_type, node.version).get(name)
        if v is None:
            raise ModelError(f"{where(node)}: attribute '{name}' is required (it has no "
                             "default)")
    return list(v) if isinstance(v, list) else v


def attr_str(node, name: str, default: str | None = None) -> str | None:
    """A string attribute, decoded to ``str``."""
    v = node.attrs.get(name)
    if v is None:
        return default
    return v.decode() if isinstance(v, bytes) else str(v)


def attr_strs(node, name: str) -> list[str] | None:
    v = node.attrs.get(name)
    if v is None:
        return None
    return [s.decode() if isinstance(s, bytes) else str(s) for s in v]


def attr_ints(node, name: str) -> list[int] | None:
    v = node.attrs.get(name)
    if v is None:
        return None
    if isinstance(v, np.ndarray):
        return [int(x) for x in v.reshape(-1)]
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    return [int(x) for x in v]


def attr_floats(node, name: str) -> list[float] | None:
    v = node.attrs.get(name)
    if v is None:
        return None
    if isinstance(v, (int, float, np.number)):
        return [float(v)]
    return [float(x) for x in v]


def const_input(node, i: int) -> np.ndarray | None:
    """The value of input `i` when it is a compile-time constant (initializer), else None."""
    if i >= len(node.inputs):
        return None
    v = node.inputs[i]
    if v is None or v.const is None:
        return None
    c = v.const
    return c if isinstance(c, np.ndarray) else None


def has_input(node, i: int) -> bool:
    return i < len(node.inputs) and node.inputs[i] is not None


def np_dtype(to: Any, node=None) -> np.dtype:
    """A NumPy dtype from a ``to``/``dtype`` attribute: ONNX enum int, `DataType`, or name."""
    if isinstance(to, np.dtype):
        return to
    if isinstance(to, DataType):
        return to.numpy
    if isinstance(to, (int, np.integer)):
        try:
            dt = DataType.from_onnx(int(to))
        except KeyError:
            dt = None
        if dt is None:
            raise ModelError(f"{where(node)}: unknown element type {to}")
        return dt.numpy
    if isinstance(to, bytes):
        to = to.decode()
    if isinstance(to, str):
        try:
            return DataType(to.lower()).numpy
        except ValueError:
            pass
        try:
            return np.dtype(to)
        except TypeError as e:
            raise ModelError(f"{where(node)}: unknown element type {to!r}") from e
    raise ModelError(f"{where(node)}: unknown element type {to!r}")


_SCALAR_ATTRS = {
    "value_float": np.float32, "value_floats": np.float32,
    "value_int": np.int64, "value_ints": np.int64,
    "value_string": object, "value_strings": object,
}


def _strings(v):
    if isinstance(v, (list, tuple)):
        return [_strings(s) for s in v]
    return v.decode() if isinstance(v, bytes) else v


def fill_value(node) -> np.ndarray:
    """A ``ConstantOfShape`` node's fill: its one-element ``value`` as a 0-d array (float32
    zero when absent)."""
    v = node.attrs.get("value")
    if v is None:
        return np.zeros((), dtype=np.float32)
    v = np.asarray(v)
    if v.size != 1:
        raise ModelError(f"{where(node)}: 'value' must hold one element, has {v.size}")
    return v.reshape(())


def constant_value(node) -> np.ndarray:
    """The tensor a Constant node produces, from whichever attribute form it uses."""
    for name in ("value", "sparse_value"):
        v = node.attrs.get(name)
        if v is not None:
            if isinstance(v, np.ndarray):
                return v
            if hasattr(v, "todense"):
                return np.asarray(v.todense())
            raise ModelError(f"{where(node)}: attribute '{name}' is not a tensor")
    for name, dt in _SCALAR_ATTRS.items():
        v = node.attrs.get(name)
        if v is not None:
            if dt is object:
                return np.array(_strings(v), dtype=object)
            return np.array(v, dtype=dt)
    raise ModelError(f"{where(node)}: Constant has no value attribute")
