"""ONNX ``AttributeProto`` <-> IR attribute values.

Reading: ints -> int, floats -> float, strings -> str (decoded as UTF-8, so that an attribute
string read from ONNX is always a ``str`` in the IR; bytes that are not UTF-8 are a
`ModelError`), tensors -> NumPy arrays, sparse tensors -> dense arrays, graphs -> IR `Graph`
(through a callback that converts them in the right scope), type protos -> IR types; the
repeated forms give lists. The ONNX attribute kind is remembered in
``node.meta["onnx_attr_types"]`` so that ambiguous values (an empty list) are written back
with the same kind.

Writing: the kind comes from the operator schema when there is one, else from the kind
remembered at reading, else from the Python value. Strings are encoded as UTF-8 (``bytes`` in
a hand-built graph are written as they are).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto

from ...errors import ModelError, UnsupportedError
from ...ir.graph import Graph
from ...ir.types import MapType, OptionalType, SequenceType, TensorType
from .types import sparse_from_onnx, tensor_from_onnx, tensor_to_onnx, type_from_onnx, type_to_onnx

A = AttributeProto


def _str(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModelError(f"string {b[:32]!r} is not valid UTF-8 ({e.reason} at byte "
                         f"{e.start})") from None


def attr_from_onnx(a: AttributeProto, subgraph: Callable[[onnx.GraphProto], Graph],
                   base_dir: str = "") -> Any:
    """Python value of attribute `a`; `subgraph` converts a ``GraphProto`` to an IR graph."""
    if a.ref_attr_name:
        raise ModelError(f"attribute '{a.name}' refers to function attribute '{a.ref_attr_name}' "
                         "outside a function body")
    k = a.type
    if k == A.INT:
        return int(a.i)
    if k == A.FLOAT:
        return float(a.f)
    if k == A.STRING:
        return _str(a.s)
    if k == A.TENSOR:
        return tensor_from_onnx(a.t, base_dir)
    if k == A.SPARSE_TENSOR:
        return sparse_from_onnx(a.sparse_tensor, base_dir)
    if k == A.GRAPH:
        return subgraph(a.g)
    if k == A.TYPE_PROTO:
        return type_from_onnx(a.tp)
    if k == A.INTS:
        return [int(x) for x in a.ints]
    if k == A.FLOATS:
        return [float(x) for x in a.floats]
    if k == A.STRINGS:
        return [_str(x) for x in a.strings]
    if k == A.TENSORS:
        return [tensor_from_onnx(t, base_dir) for t in a.tensors]
    if k == A.SPARSE_TENSORS:
        return [sparse_from_onnx(t, base_dir) for t in a.sparse_tensors]
    if k == A.GRAPHS:
        return [subgraph(g) for g in a.graphs]
    if k == A.TYPE_PROTOS:
        return [type_from_onnx(t) for t in a.type_protos]
    raise ModelError(f"attribute '{a.name}' has no value (type {k})")


_TYPES = (TensorType, SequenceType, OptionalType, MapType)


def _kind_of_value(value: Any) -> int:
    if isinstance(value, bool | int | np.integer):
        return A.INT
    if isinstance(value, float | np.floating):
        return A.FLOAT
    if isinstance(value, str | bytes):
        return A.STRING
    if isinstance(value, np.ndarray):
        return A.TENSOR
    if isinstance(value, Graph):
        return A.GRAPH
    if isinstance(value, _TYPES):
        return A.TYPE_PROTO
    if isinstance(value, list | tuple):
        if not value:
            return A.INTS
        single = _kind_of_value(value[0])
        if single == A.INT and any(isinstance(v, float | np.floating) for v in value):
            return A.FLOATS
        return {A.INT: A.INTS, A.FLOAT: A.FLOATS, A.STRING: A.STRINGS, A.TENSOR: A.TENSORS,
                A.GRAPH: A.GRAPHS, A.TYPE_PROTO: A.TYPE_PROTOS}[single]
    raise UnsupportedError(f"cannot write attribute value of type {type(value).__name__}")


def _b(s: str | bytes) -> bytes:
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


def attr_to_onnx(name: str, value: Any, kind: int | None,
                 subgraph: Callable[[Graph], onnx.GraphProto]) -> AttributeProto:
    """``AttributeProto`` `name` holding `value` as attribute kind `kind` (inferred if None)."""
    if kind is None or kind == A.UNDEFINED:
        kind = _kind_of_value(value)
    a = AttributeProto(name=name, type=kind)
    if kind == A.INT:
        a.i = int(value)
    elif kind == A.FLOAT:
        a.f = float(value)
    elif kind == A.STRING:
        a.s = _b(value)
    elif kind == A.TENSOR:
        a.t.CopyFrom(tensor_to_onnx(value))
    elif kind == A.SPARSE_TENSOR:  # written dense as coordinates of the non-zeros
        a.sparse_tensor.CopyFrom(_sparse_to_onnx(np.asarray(value)))
    elif kind == A.GRAPH:
        a.g.CopyFrom(subgraph(value))
    elif kind == A.TYPE_PROTO:
        a.tp.CopyFrom(type_to_onnx(value))
    elif kind == A.INTS:
        a.ints.extend(int(v) for v in value)
    elif kind == A.FLOATS:
        a.floats.extend(float(v) for v in value)
    elif kind == A.STRINGS:
        a.strings.extend(_b(v) for v in value)
    elif kind == A.TENSORS:
        a.tensors.extend(tensor_to_onnx(v) for v in value)
    elif kind == A.SPARSE_TENSORS:
        a.sparse_tensors.extend(_sparse_to_onnx(np.asarray(v)) for v in value)
    elif kind == A.GRAPHS:
        a.graphs.extend(subgraph(g) for g in value)
    elif kind == A.TYPE_PROTOS:
        a.type_protos.extend(type_to_onnx(t) for t in value)
    else:
        raise UnsupportedError(f"attribute '{name}': cannot write attribute kind {kind}")
    return a


def _sparse_to_onnx(a: np.ndarray) -> onnx.SparseTensorProto:
    idx = np.flatnonzero(a.reshape(-1)).astype(np.int64)
    st = onnx.SparseTensorProto()
    st.dims.extend(a.shape)
    st.values.CopyFrom(tensor_to_onnx(a.reshape(-1)[idx]))
    st.indices.CopyFrom(tensor_to_onnx(idx))
    return st
