"""ONNX type protos and tensors <-> IR types and NumPy arrays.

Tensor types map to `TensorType` (``dim_value`` -> int, ``dim_param`` -> str, neither ->
``None``, and so does a negative ``dim_value``, which ONNX does not define and ONNX Runtime
reads as unknown; no shape -> ``None``), ``seq`` to `SequenceType`, ``optional`` to `OptionalType`.
Sparse tensor types read as dense tensor types. Map types have no IR counterpart: they read as
``None`` (unknown type). Element type 0 (undefined) reads as dtype ``None``.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, TypeProto, numpy_helper

from ...errors import ModelError, SecurityError, UnsupportedError
from ...ir.types import DataType, MapType, OptionalType, SequenceType, TensorType, Type


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
        if d.HasField("dim_value") and d.dim_value >= 0:
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
    if kind == "map_type":
        m = tp.map_type
        return MapType(dtype_from_onnx(m.key_type) if m.key_type else None,
                       type_from_onnx(m.value_type) if m.HasField("value_type") else None)
    return None


def value_type_from_onnx(tp: TypeProto | None, name: str) -> Type | None:
    """`type_from_onnx` for the declared type of value `name`: a type with no IR counterpart
    is refused naming the value, and so is a sparse tensor (no op of the standard domains
    takes or gives one; ONNX Runtime refuses the model where a tensor is read or computed)."""
    if tp is not None and tp.WhichOneof("value") == "sparse_tensor_type":
        raise UnsupportedError(f"value '{name}' is declared a sparse tensor; itergraph reads "
                               "sparse tensors only as sparse initializers and constants")
    try:
        return type_from_onnx(tp)
    except UnsupportedError as e:
        raise UnsupportedError(f"value '{name}': {e}") from None


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
    elif isinstance(t, MapType):
        tp.map_type.SetInParent()
        if t.key is not None:
            tp.map_type.key_type = dtype_to_onnx(t.key)
        if t.value is not None:
            tp.map_type.value_type.CopyFrom(type_to_onnx(t.value))
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


def _check_dims(name: str, dims) -> tuple[int, ...]:
    shape = tuple(int(d) for d in dims)
    for d in shape:
        if d < 0:
            raise ModelError(f"tensor '{name}': dimension {d} is negative (dims {list(shape)})")
    return shape


def _check_external(t: TensorProto, base_dir: str) -> None:
    """Refuse external data that lies outside the model's directory or behind a link."""
    what = f"tensor '{t.name}'"
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    if not loc:
        raise ModelError(f"{what}: external data without a location")
    parts = loc.replace("\\", "/").split("/")
    if os.path.isabs(loc) or loc.startswith(("/", "\\")) or (len(loc) > 1 and loc[1] == ":"):
        raise SecurityError(f"{what}: external data location '{loc}' is an absolute path; it "
                            "must name a file inside the model's directory")
    if ".." in parts:
        raise SecurityError(f"{what}: external data location '{loc}' leads out of the model's "
                            "directory")
    base = os.path.realpath(base_dir or os.getcwd())
    path = base
    for part in parts:
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise SecurityError(f"{what}: external data location '{loc}' goes through a "
                                "symbolic link; external data is read only from files inside "
                                "the model's directory")
    if not os.path.isfile(path):
        raise ModelError(f"{what}: external data file '{loc}' does not exist in '{base}'")
    try:
        offset = int(info.get("offset", 0))
        length = int(info["length"]) if "length" in info else None
    except ValueError:
        raise ModelError(f"{what}: external data offset/length are not integers: "
                         f"{info}") from None
    size = os.path.getsize(path)
    if offset < 0 or (length is not None and length < 0):
        raise ModelError(f"{what}: negative external data offset {offset} or length {length}")
    if offset + (length or 0) > size:
        raise ModelError(f"{what}: external data bytes {offset}..{offset + (length or 0)} lie "
                         f"beyond the end of '{loc}' ({size} bytes)")


def tensor_from_onnx(t: TensorProto, base_dir: str | os.PathLike = "") -> np.ndarray:
    """NumPy array of a ``TensorProto`` (external data read from `base_dir`, and only from
    regular files inside it: an absolute location, ``..`` or a symbolic link is refused)."""
    _check_dims(t.name, t.dims)
    if t.data_location == TensorProto.EXTERNAL:
        _check_external(t, os.fspath(base_dir))
    try:
        a = numpy_helper.to_array(t, str(base_dir))
    except Exception as e:  # noqa: BLE001 - onnx raises various types for bad tensors
        raise ModelError(f"tensor '{t.name}': cannot decode its data ({e})") from e
    return _decode_strings(np.asarray(a))


def sparse_from_onnx(st: onnx.SparseTensorProto, base_dir: str | os.PathLike = "") -> np.ndarray:
    """Dense NumPy array of a ``SparseTensorProto`` (COO, linear or per-axis indices)."""
    name = st.values.name
    values = tensor_from_onnx(st.values, base_dir).reshape(-1)
    idx = tensor_from_onnx(st.indices, base_dir).astype(np.int64)
    shape = _check_dims(name, st.dims)
    nnz = values.size
    if idx.ndim == 1:
        bounds = np.array([int(np.prod(shape, dtype=object))], dtype=object)
        idx2 = idx.reshape(-1, 1)
    elif idx.ndim == 2 and idx.shape[1] == len(shape):
        bounds, idx2 = np.array(shape, dtype=object), idx
    else:
        raise ModelError(f"sparse tensor '{name}': indices of shape {list(idx.shape)} fit "
                         f"neither [NNZ] nor [NNZ, {len(shape)}]")
    if idx2.shape[0] != nnz:
        raise ModelError(f"sparse tensor '{name}': {idx2.shape[0]} indices for {nnz} values")
    for a in range(idx2.shape[1]):
        col = idx2[:, a]
        bad = (col < 0) | (col.astype(object) >= bounds[a])
        if bad.any():
            k = int(np.argmax(bad))
            raise ModelError(f"sparse tensor '{name}': index {int(col[k])} (entry {k}) is out "
                             f"of range for dense shape {list(shape)}")
    try:
        dense = np.zeros(shape, dtype=values.dtype)
    except (MemoryError, ValueError) as e:
        raise ModelError(f"sparse tensor '{name}': its dense shape {list(shape)} is too large "
                         f"to hold ({e})") from None
    if nnz:
        if idx.ndim == 1:
            dense.reshape(-1)[idx] = values
        else:
            dense[tuple(idx.T)] = values
    return dense


def tensor_to_onnx(a, name: str = "") -> TensorProto:
    """``TensorProto`` of a NumPy array (or anything `numpy.asarray` accepts)."""
    a = np.asarray(a)
    if a.dtype.kind == "U":
        a = a.astype(object)
    return numpy_helper.from_array(a, name)
