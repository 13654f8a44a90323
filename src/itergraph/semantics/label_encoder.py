"""``ai.onnx.ml`` ``LabelEncoder`` (versions 1, 2 and 4): the key -> value table its attributes
describe, as ONNX Runtime reads them (the oracle; ``onnx.reference`` ignores
``default_tensor``). One table for the NumPy kernel and the OpenVINO writer.

- Version 1: ``classes_strings`` maps an int64 input ``i`` to ``classes_strings[i]`` (else
  ``default_string``, ``"_Unused"``) and a string input to its position (else
  ``default_int64``, -1): which of the two follows from the input's type.
- Versions 2 and 4: ``keys_*`` -> ``values_*`` (``strings``, ``int64s``, ``floats``, or
  version 4's ``*_tensor``); a key not listed gives ``default_tensor`` where given, else
  ``default_<type>`` of the values' type (``"_Unused"``, -1, -0.0). A key listed twice maps
  to the value of its first listing; a NaN key matches a NaN input.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError


def _text(s) -> str:
    return s.decode() if isinstance(s, bytes) else str(s)


def listed(attrs: dict, prefix: str) -> np.ndarray | None:
    """The ``<prefix>_{strings,int64s,floats}`` or ``<prefix>_tensor`` attribute as an array
    (strings: an object array of ``str``); None where none is given."""
    for suffix, dtype in (("strings", object), ("int64s", np.int64), ("floats", np.float32)):
        v = attrs.get(f"{prefix}_{suffix}")
        if v is not None and len(v):
            if dtype is object:
                return np.array([_text(s) for s in v], object)
            return np.asarray(v, dtype)
    v = attrs.get(f"{prefix}_tensor")
    if v is None:
        return None
    v = np.asarray(v).reshape(-1)
    if v.dtype.kind in "SUO":
        return np.array([_text(s) for s in v], object)
    return v


def _default(attrs: dict, values: np.ndarray):
    t = attrs.get("default_tensor")
    if t is not None:
        v = np.asarray(t).reshape(-1)[0]
        return _text(v) if isinstance(v, bytes | str) else v
    if values.dtype == object:
        return _text(attrs.get("default_string", "_Unused"))
    if values.dtype.kind == "f":
        return attrs.get("default_float", -0.0)
    return attrs.get("default_int64", -1)


def _first_listings(keys: np.ndarray, values: np.ndarray):
    seen, ks, vs = set(), [], []
    for k, v in zip(keys.tolist(), values.tolist()):
        token = "nan" if isinstance(k, float) and np.isnan(k) else k
        if token not in seen:
            seen.add(token)
            ks.append(k)
            vs.append(v)
    return np.array(ks, keys.dtype), np.array(vs, values.dtype)


def encoder_table(attrs: dict, version: int | None, string_input: bool, where: str):
    """``(keys, values, default)`` of a LabelEncoder: `keys` and `values` 1-D arrays of one
    length, each key listed once (strings as object arrays of ``str``)."""
    if version is not None and version < 2:
        classes = listed(attrs, "classes")
        if classes is None:
            raise ModelError(f"{where}: a LabelEncoder-1 without classes_strings")
        ints = np.arange(len(classes), dtype=np.int64)
        if string_input:
            return classes, ints, attrs.get("default_int64", -1)
        return ints, classes, _text(attrs.get("default_string", "_Unused"))
    keys, values = listed(attrs, "keys"), listed(attrs, "values")
    if keys is None or values is None or len(keys) != len(values) or len(keys) == 0:
        raise ModelError(f"{where}: a LabelEncoder needs as many keys as values, at least one "
                         f"(it has {0 if keys is None else len(keys)} keys and "
                         f"{0 if values is None else len(values)} values)")
    keys, values = _first_listings(keys, values)
    return keys, values, _default(attrs, values)


def encode(x: np.ndarray, keys: np.ndarray, values: np.ndarray, default) -> np.ndarray:
    """Each element of `x` mapped through the table (a plain Python lookup)."""
    def token(k):
        return "nan" if isinstance(k, float) and np.isnan(k) else k

    table = {token(k): v for k, v in zip(keys.tolist(), values.tolist())}
    flat = [table.get(token(k), default) for k in np.asarray(x).reshape(-1).tolist()]
    out = np.array(flat, dtype=values.dtype) if values.dtype != object else \
        np.array(flat + [None], object)[:-1]
    return out.reshape(np.shape(x))
