"""OpenVINO element types: names, port precisions, bit widths, and packed-data decoding.

OpenVINO names element types in two ways: ``element_type`` attributes use ``f32``, ``i64``,
``boolean`` ...; port ``precision`` attributes use ``FP32``, ``I64``, ``BOOL`` ... Both map to
an IR `DataType`. Sub-byte types are packed in the ``.bin``: ``u4``/``i4`` two per byte, low
nibble first; ``u2`` four per byte, low bits first; ``u1`` eight per byte, most significant
bit first. ``u1`` has no IR type: it is unpacked to ``uint8`` 0/1 values. ``string`` has no
fixed width (its layout in `strings`).
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError, UnsupportedError
from ...ir.types import DataType
from .strings import decode_strings, encode_strings

# element_type name -> (IR type, bits per element)
ELEMENT_TYPES: dict[str, tuple[DataType, int]] = {
    "boolean": (DataType.BOOL, 8),
    "bf16": (DataType.BFLOAT16, 16),
    "f16": (DataType.FLOAT16, 16),
    "f32": (DataType.FLOAT32, 32),
    "f64": (DataType.FLOAT64, 64),
    "i4": (DataType.INT4, 4),
    "i8": (DataType.INT8, 8),
    "i16": (DataType.INT16, 16),
    "i32": (DataType.INT32, 32),
    "i64": (DataType.INT64, 64),
    "u1": (DataType.UINT8, 1),
    "u2": (DataType.UINT2, 2),
    "u4": (DataType.UINT4, 4),
    "u8": (DataType.UINT8, 8),
    "u16": (DataType.UINT16, 16),
    "u32": (DataType.UINT32, 32),
    "u64": (DataType.UINT64, 64),
    "f8e4m3": (DataType.FLOAT8E4M3FN, 8),
    "f8e5m2": (DataType.FLOAT8E5M2, 8),
    "f8e8m0": (DataType.FLOAT8E8M0, 8),
    "f4e2m1": (DataType.FLOAT4E2M1, 4),
    "string": (DataType.STRING, 0),  # variable width
}
# Known to OpenVINO but not representable here.
UNSUPPORTED_TYPES = {"u3", "u6", "nf4", "dynamic", "undefined"}

# port precision name -> element_type name
PRECISIONS: dict[str, str] = {
    "BOOL": "boolean", "BOOLEAN": "boolean", "BF16": "bf16", "FP16": "f16", "FP32": "f32",
    "FP64": "f64", "I4": "i4", "I8": "i8", "I16": "i16", "I32": "i32", "I64": "i64",
    "BIN": "u1", "U1": "u1", "U2": "u2", "U4": "u4", "U8": "u8", "U16": "u16", "U32": "u32",
    "U64": "u64", "F8E4M3": "f8e4m3", "F8E5M2": "f8e5m2", "F8E8M0": "f8e8m0",
    "F4E2M1": "f4e2m1", "STRING": "string",
}

# IR type -> (element_type, precision) for writing
_WRITE: dict[DataType, tuple[str, str]] = {
    DataType.BOOL: ("boolean", "BOOL"),
    DataType.BFLOAT16: ("bf16", "BF16"),
    DataType.FLOAT16: ("f16", "FP16"),
    DataType.FLOAT32: ("f32", "FP32"),
    DataType.FLOAT64: ("f64", "FP64"),
    DataType.INT4: ("i4", "I4"),
    DataType.INT8: ("i8", "I8"),
    DataType.INT16: ("i16", "I16"),
    DataType.INT32: ("i32", "I32"),
    DataType.INT64: ("i64", "I64"),
    DataType.UINT2: ("u2", "U2"),
    DataType.UINT4: ("u4", "U4"),
    DataType.UINT8: ("u8", "U8"),
    DataType.UINT16: ("u16", "U16"),
    DataType.UINT32: ("u32", "U32"),
    DataType.UINT64: ("u64", "U64"),
    DataType.FLOAT8E4M3FN: ("f8e4m3", "F8E4M3"),
    DataType.FLOAT8E5M2: ("f8e5m2", "F8E5M2"),
    DataType.FLOAT8E8M0: ("f8e8m0", "F8E8M0"),
    DataType.FLOAT4E2M1: ("f4e2m1", "F4E2M1"),
    DataType.STRING: ("string", "STRING"),
}


def to_numpy(dt: DataType) -> np.dtype:
    """NumPy dtype of an IR element type that OpenVINO can hold (``object`` for strings)."""
    return DataType(dt).numpy


def from_numpy(dtype) -> DataType:
    """IR element type of a NumPy dtype."""
    try:
        return DataType.from_numpy(dtype)
    except KeyError:
        raise UnsupportedError(f"NumPy dtype {dtype} has no IR element type") from None


def from_element_type(name: str, where: str) -> DataType:
    """IR type of an ``element_type`` attribute value; raises naming `where` if unknown."""
    try:
        return ELEMENT_TYPES[name][0]
    except KeyError:
        if name in UNSUPPORTED_TYPES:
            raise UnsupportedError(f"{where}: element type '{name}' is not supported") from None
        raise ModelError(f"{where}: unknown element type '{name}'") from None


def from_precision(name: str | None, where: str) -> DataType | None:
    """IR type of a port ``precision``; ``None`` for a missing or unspecified one."""
    if name is None or name.upper() in ("UNSPECIFIED", "DYNAMIC", "UNDEFINED", ""):
        return None
    key = PRECISIONS.get(name.upper())
    if key is None:
        if name.lower() in ELEMENT_TYPES:  # some writers put element_type names here
            return ELEMENT_TYPES[name.lower()][0]
        raise ModelError(f"{where}: unknown port precision '{name}'")
    return ELEMENT_TYPES[key][0]


def element_type_name(precision_or_type: str) -> str:
    """Normalise a precision (``FP32``) or element type (``f32``) to the element_type name."""
    return PRECISIONS.get(precision_or_type.upper(), precision_or_type.lower())


def to_element_type(dt: DataType, where: str = "") -> str:
    try:
        return _WRITE[dt][0]
    except KeyError:
        raise UnsupportedError(f"{where}: element type {dt} cannot be written to OpenVINO IR") \
            from None


def to_precision(dt: DataType | None) -> str:
    if dt is None or dt not in _WRITE:
        return "UNSPECIFIED"
    return _WRITE[dt][1]


def byte_size(name: str, count: int) -> int | None:
    """Bytes that `count` elements of element type `name` occupy in the ``.bin`` (``None``
    for strings: their size depends on their contents)."""
    bits = ELEMENT_TYPES[name][1]
    if bits == 0:
        return None
    return (count * bits + 7) // 8


def decode(name: str, buf: bytes, shape: tuple[int, ...], where: str = "") -> np.ndarray:
    """Decode the ``.bin`` bytes of a constant (length already checked) into an array."""
    dt, bits = ELEMENT_TYPES[name]
    if dt == DataType.STRING:
        return decode_strings(buf, shape, where or "string constant")
    count = int(np.prod(shape, dtype=np.int64))
    raw = np.frombuffer(buf, np.uint8)
    if bits >= 8:
        return np.frombuffer(buf, to_numpy(dt), count).reshape(shape).copy()
    if bits == 1:
        vals = np.unpackbits(raw, bitorder="big")[:count]
        return vals.astype(np.uint8).reshape(shape)
    per = 8 // bits
    mask = (1 << bits) - 1
    shifts = np.arange(per, dtype=np.uint8) * bits
    vals = ((raw[:, None] >> shifts[None, :]) & mask).reshape(-1)[:count].astype(np.int16)
    if name == "i4":
        vals = np.where(vals >= 8, vals - 16, vals)
    return vals.astype(to_numpy(dt)).reshape(shape)


def encode(dt: DataType, arr: np.ndarray) -> bytes:
    """Bytes of `arr` (of IR type `dt`) as OpenVINO stores them (sub-byte types packed)."""
    name = to_element_type(dt)
    bits = ELEMENT_TYPES[name][1]
    if dt == DataType.STRING:
        return encode_strings(arr)
    if bits >= 8:
        return np.ascontiguousarray(arr, dtype=to_numpy(dt)).tobytes()
    per = 8 // bits
    mask = (1 << bits) - 1
    vals = (np.asarray(arr).astype(np.int16).reshape(-1) & mask).astype(np.uint8)
    pad = (-len(vals)) % per
    vals = np.concatenate([vals, np.zeros(pad, np.uint8)]).reshape(-1, per)
    shifts = np.arange(per, dtype=np.uint8) * bits
    return np.bitwise_or.reduce(vals << shifts[None, :], axis=1).astype(np.uint8).tobytes()
