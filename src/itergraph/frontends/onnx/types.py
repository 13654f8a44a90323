"""ONNX type protos and tensors <-> IR types and NumPy arrays.

Tensor types map to `TensorType` (``dim_value`` -> int, ``dim_param`` -> str, neither ->
``None``; no shape -> ``None``), ``seq`` to `SequenceType`, ``optional`` to `OptionalType`.
Sparse tensor types read as dense tensor types. Map types have no IR counterpart: they read as
``None`` (unknown type). Element type 0 (undefined) reads as dtype ``None``.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, TypeProto, numpy_helper

from ...errors import ModelError, UnsupportedError
from ...ir.types import DataType, OptionalType, SequenceType, TensorType, Type


def dtype_from_onnx(elem_type: int) -> DataType | None:
    """IR element type of an ONNX ``TensorProto.DataType`` (0 -> ``None``)."""
    try:
        return DataType.from_onnx(elem_type)
    except KeyError:
        name = TensorProto.DataType.Name(elem_type) if elem_type in TensorProto.DataType.values() \
            else str(elem_type)
        raise UnsupportedError(f"ONNX element type {name} has no IR counterpart") from None


def dtype_to_onnx(dt: DataType | str | None) -> int:
    """ONNX element type code of `dt` (``UNDEFINED`` for ``None``)."""
    return TensorProto.UNDEFINED if dt is None else DataType(dt).onnx


def _shape_from_onnx(shape: onnx.TensorShapeProto) -> tuple:
    dims = []
    for d in shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return tuple(dims)


def type_from_onnx(tp: TypeProto | None) -> Type | None:
    """IR type of an ONNX ``TypeProto`` (``None`` when absent or without IR counterpart)."""
    if tp is None:
        return None
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, kind)
        shape = _shape_from_onnx(t.shape) if t.HasField("shape") else None
        return TensorType(dtype_from_onnx(t.elem_type), shape)
    if kind == "sequence_type":
        return SequenceType(type_from_onnx(tp.sequence_type.elem_type)
                            if tp.sequence_type.HasField("elem_type") else None)
    if kind == "optional_type":
        return OptionalType(type_from_onnx(tp.optional_type.elem_type)
                            if tp.optional_type.HasField("elem_type") else None)
    return None


def type_to_onnx(t: Type | None) -> TypeProto:
    """ONNX ``TypeProto`` of an IR type; ``None`` gives an empty proto (type unknown)."""
    tp = TypeProto()
    if t is None:
        return tp
    if isinstance(t, TensorType):
        tp.tensor_type.elem_type = dtype_to_onnx(t.dtype)
        if t.shape is not None:
            shape = tp.tensor_type.shape
            shape.SetInParent()
            for d in t.shape:
                dim = shape.dim.add()
                if isinstance(d, int):
                    dim.dim_value = d
                elif isinstance(d, str):
                    dim.dim_param = d
    elif isinstance(t, SequenceType):
        tp.sequence_type.SetInParent()
        if t.elem is not None:
            tp.sequence_type.elem_type.CopyFrom(type_to_onnx(t.elem))
    elif isinstance(t, OptionalType):
        tp.optional_type.SetInParent()
        if t.elem is not None:
            tp.optional_type.elem_type.CopyFrom(type_to_onnx(t.elem))
    else:  # pragma: no cover - defensive
        raise UnsupportedError(f"cannot write IR type {t!r} to ONNX")
    return tp


def _decode_strings(a: np.ndarray) -> np.ndarray:
    if a.dtype == object:
        flat = [x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x
                for x in a.reshape(-1)]
        out = np.empty(a.shape, dtype=object)
        out.reshape(-1)[:] = flat if flat else []
        return out
    return a


def tensor_from_onnx(t: TensorProto, base_dir: str | os.PathLike = "") -> np.ndarray:
    """NumPy array of a ``TensorProto`` (external data read from `base_dir`)."""
    try:
        a = numpy_helper.to_array(t, str(base_dir))
    except Exception as e:  # noqa: BLE001 - onnx raises various types for bad tensors
        raise ModelError(f"tensor '{t.name}': cannot decode its data ({e})") from e
    return _decode_strings(np.asarray(a))


def sparse_from_onnx(st: onnx.SparseTensorProto, base_dir: str | os.PathLike = "") -> np.ndarray:
    """Dense NumPy array of a ``SparseTensorProto`` (COO, linear or per-axis indices)."""
    values = tensor_from_onnx(st.values, base_dir)
    idx = tensor_from_onnx(st.indices, base_dir).astype(np.int64)
    shape = tuple(int(d) for d in st.dims)
    dense = np.zeros(shape, dtype=values.dtype)
    if values.size:
        if idx.ndim == 1:
            dense.reshape(-1)[idx] = values.reshape(-1)
        else:
            dense[tuple(idx.T)] = values.reshape(-1)
    return dense


def tensor_to_onnx(a, name: str = "") -> TensorProto:
    """``TensorProto`` of a NumPy array (or anything `numpy.asarray` accepts)."""
    a = np.asarray(a)
    if a.dtype.kind == "U":
        a = a.astype(object)
    return numpy_helper.from_array(a, name)
