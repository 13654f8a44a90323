"""Checking and converting the inputs given to `Model.run` against the graph's declared types."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InputError
from .ir import Graph, Value
from .ir.types import DataType, MapType, OptionalType, SequenceType, TensorType


def _check_tensor(v: Value, t: TensorType, x: Any, what: str) -> np.ndarray:

    want = DataType(t.dtype).numpy if t.dtype is not None else None
    if isinstance(x, np.ndarray) and type(x) is not np.ndarray:  # np.matrix, a masked array
        if np.ma.is_masked(x):
            raise InputError(f"{what}: a masked array with masked elements (a model reads "
                             "every element: pass arr.filled(value))")
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        if isinstance(x, np.generic | int | float | bool | list | tuple):
            x = _from_python(x, want, what)
        else:
            raise InputError(f"{what}: expected an array, got {type(x).__name__}")
    if want is not None and x.dtype != want:
        strings = want == np.dtype(object) and x.dtype.kind in "OUS"
        if not strings:
            raise InputError(f"{what}: expected element type {t.dtype}, got {x.dtype}")
    if t.shape is not None:
        if x.ndim != len(t.shape):
            raise InputError(f"{what}: expected rank {len(t.shape)} (shape {_shape(t)}), "
                             f"got shape {x.shape}")
        for i, (d, n) in enumerate(zip(t.shape, x.shape)):
            if isinstance(d, int) and d >= 0 and d != n:
                raise InputError(f"{what}: dimension {i} must be {d} (shape {_shape(t)}), "
                                 f"got shape {x.shape}")
    return x


def _from_python(x: Any, want: np.dtype | None, what: str) -> np.ndarray:
    """An array from a Python/NumPy scalar or (nested) list: a ragged list, an element that is
    not a number, a value out of the element type's range, or a conversion of another kind
    (floats to an integer type, numbers to bool) is the caller's error, never a silent cast."""
    try:
        a = np.asarray(x)
        if a.dtype == object:
            raise ValueError("the elements are not numbers of one kind")
        if want is None or a.dtype == want:
            return a
        if want != np.dtype(object) and not np.can_cast(a.dtype, want, "same_kind"):
            raise ValueError(f"{a.dtype} values do not convert to {want} without loss")
        out = np.asarray(x, dtype=want)
    except (ValueError, TypeError, OverflowError) as e:
        raise InputError(f"{what}: cannot make an array of element type {want} from the "
                         f"given {type(x).__name__}: {e}") from None
    if a.dtype.kind in "iu" and want.kind in "iu" and a.size and not np.array_equal(out, a):
        raise InputError(f"{what}: values out of the range of {want}")
    return out


def _shape(t: TensorType) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in t.shape or ()) + "]"


def check_value(v: Value, t, x: Any, what: str) -> Any:
    if t is None:
        return x
    if isinstance(t, TensorType):
        return _check_tensor(v, t, x, what)
    if isinstance(t, SequenceType):
        if not isinstance(x, list | tuple):
            raise InputError(f"{what}: expected a sequence (list), got {type(x).__name__}")
        return [check_value(v, t.elem, e, f"{what}[{i}]") for i, e in enumerate(x)]
    if isinstance(t, OptionalType):
        return None if x is None else check_value(v, t.elem, x, what)
    if isinstance(t, MapType) and not isinstance(x, dict):
        raise InputError(f"{what}: expected a map (dict), got {type(x).__name__}")
    return x


def check_feeds(graph: Graph, feeds: dict[str, Any]) -> dict[str, Any]:
    """Validate `feeds` against `graph.inputs`; returns the converted feeds."""
    if not isinstance(feeds, dict):
        raise InputError(f"feeds must be a dict name -> value, got {type(feeds).__name__}")
    known = {v.name: v for v in graph.inputs}
    extra = [k for k in feeds if k not in known]
    if extra:
        raise InputError(f"unknown input(s) {extra}; the model's inputs are {list(known)}")
    missing = [v for v in graph.inputs if v.name not in feeds and v.const is None]
    if missing:
        what = ", ".join(f"'{v.name}' ({v.type})" for v in missing)
        raise InputError(f"missing input{'s' if len(missing) > 1 else ''} {what}")
    out: dict[str, Any] = {}
    for v in graph.inputs:
        if v.name not in feeds:
            continue
        out[v.name] = check_value(v, v.type, feeds[v.name], f"input '{v.name}'")
    return out


class FeedCheck:
    """`check_feeds` for one graph, remembering the signatures it has passed: feeds that are
    host arrays of a signature (names, dtypes, shapes) already checked are taken as they are."""

    MAX_SIGNATURES = 256

    def __init__(self, graph: Graph):
        self.graph = graph
        self._passed: set[tuple] = set()

    @staticmethod
    def key(feeds: Any) -> tuple | None:
        """The signature of `feeds` (names, dtypes, shapes in the dict's order), or None when
        a value is not a host array (or `feeds` not a dict)."""
        if type(feeds) is not dict:
            return None
        parts = []
        for k, x in feeds.items():
            if type(x) is not np.ndarray:
                return None
            parts.append((k, x.dtype, x.shape))
        return tuple(parts)

    def passed(self, key: tuple | None) -> bool:
        """Have feeds of this signature (`key`) passed as they are?"""
        return key is not None and key in self._passed

    def __call__(self, feeds: dict[str, Any]) -> dict[str, Any]:
        sig = self.key(feeds)
        if sig is not None and sig in self._passed:
            return feeds
        out = check_feeds(self.graph, feeds)
        if (sig is not None and len(self._passed) < self.MAX_SIGNATURES
                and all(out[k] is x for k, x in feeds.items())):
            self._passed.add(sig)
        return out
