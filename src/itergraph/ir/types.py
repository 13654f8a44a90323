"""Types of IR values: tensors (element type + shape with symbolic dims), sequences, optionals.

A dimension is an ``int`` (static), a ``str`` (symbolic, e.g. ``"batch"``) or ``None``
(unknown). A shape of ``None`` means the rank itself is unknown.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

import ml_dtypes
import numpy as np

Dim = Union[int, str, None]


class DataType(enum.StrEnum):
    """Element types, valued by their NumPy-style name (``ml_dtypes`` names for exotic ones)."""

    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    INT4 = "int4"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    UINT4 = "uint4"
    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    UINT64 = "uint64"
    BOOL = "bool"
    STRING = "string"
    COMPLEX64 = "complex64"
    COMPLEX128 = "complex128"
    FLOAT8E4M3FN = "float8_e4m3fn"
    FLOAT8E4M3FNUZ = "float8_e4m3fnuz"
    FLOAT8E5M2 = "float8_e5m2"
    FLOAT8E5M2FNUZ = "float8_e5m2fnuz"
    FLOAT4E2M1 = "float4_e2m1fn"
    FLOAT8E8M0 = "float8_e8m0fnu"
    INT2 = "int2"
    UINT2 = "uint2"

    def __str__(self) -> str:
        return self.value

    @property
    def is_floating(self) -> bool:
        return self.value.startswith(("float", "bfloat"))

    @property
    def is_integer(self) -> bool:
        return self.value.startswith(("int", "uint"))

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype holding this element type (``object`` for strings)."""
        return _TO_NUMPY[self]

    @classmethod
    def from_numpy(cls, dtype) -> DataType:
        """The element type of a NumPy dtype; ``KeyError`` when it has none."""
        dtype = np.dtype(dtype)
        if dtype.kind in "USO":
            return cls.STRING
        try:
            return _FROM_NUMPY[dtype]
        except KeyError:
            raise KeyError(f"no IR element type for NumPy dtype {dtype}") from None

    @property
    def onnx(self) -> int:
        """The ``onnx.TensorProto.DataType`` code (the numbers are fixed by onnx.proto)."""
        return _ONNX_CODES[self]

    @classmethod
    def from_onnx(cls, code: int) -> DataType | None:
        """The element type of an ONNX code: ``None`` for 0 (undefined), ``KeyError`` if unknown."""
        if code == 0:
            return None
        return _FROM_ONNX[int(code)]


_EXOTIC = {
    DataType.BFLOAT16: ml_dtypes.bfloat16,
    DataType.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    DataType.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    DataType.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    DataType.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    DataType.INT4: ml_dtypes.int4,
    DataType.UINT4: ml_dtypes.uint4,
    DataType.INT2: ml_dtypes.int2,
    DataType.UINT2: ml_dtypes.uint2,
    DataType.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
    DataType.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
}
_TO_NUMPY = {
    dt: np.dtype(_EXOTIC.get(dt, dt.value if dt != DataType.STRING else object)) for dt in DataType
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}
_ONNX_CODES = {
    DataType.FLOAT32: 1, DataType.UINT8: 2, DataType.INT8: 3, DataType.UINT16: 4,
    DataType.INT16: 5, DataType.INT32: 6, DataType.INT64: 7, DataType.STRING: 8,
    DataType.BOOL: 9, DataType.FLOAT16: 10, DataType.FLOAT64: 11, DataType.UINT32: 12,
    DataType.UINT64: 13, DataType.COMPLEX64: 14, DataType.COMPLEX128: 15, DataType.BFLOAT16: 16,
    DataType.FLOAT8E4M3FN: 17, DataType.FLOAT8E4M3FNUZ: 18, DataType.FLOAT8E5M2: 19,
    DataType.FLOAT8E5M2FNUZ: 20, DataType.UINT4: 21, DataType.INT4: 22, DataType.FLOAT4E2M1: 23,
    DataType.FLOAT8E8M0: 24, DataType.UINT2: 25, DataType.INT2: 26,
}
_FROM_ONNX = {code: dt for dt, code in _ONNX_CODES.items()}


@dataclass(frozen=True)
class TensorType:
    """A tensor of `dtype` with `shape`; either may be ``None`` (unknown)."""

    dtype: DataType | None = None
    shape: tuple[Dim, ...] | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def __str__(self) -> str:
        if self.shape is None:
            dims = "?"
        else:
            dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"tensor({self.dtype or '?'})[{dims}]"


@dataclass(frozen=True)
class SequenceType:
    """An ordered list of values of type `elem` (ONNX ``seq(...)``)."""

    elem: Type | None = None

    def __str__(self) -> str:
        return f"seq({self.elem or '?'})"


@dataclass(frozen=True)
class OptionalType:
    """A value of type `elem` or nothing (ONNX ``optional(...)``); at run time ``None`` is empty."""

    elem: Type | None = None

    def __str__(self) -> str:
        return f"optional({self.elem or '?'})"


@dataclass(frozen=True)
class MapType:
    """A map from `key` scalars to values of type `value` (ONNX ``map(...)``, the
    ``ai.onnx.ml`` ops' type: ``ZipMap`` writes a sequence of them); at run time a ``dict``."""

    key: DataType | None = None
    value: Type | None = None

    def __str__(self) -> str:
        return f"map({self.key or '?'}, {self.value or '?'})"


Type = Union[TensorType, SequenceType, OptionalType, MapType]


def tensor(dtype: DataType | str | None = None, shape=None) -> TensorType:
    """Shorthand: ``tensor("float32", (2, "n"))``."""
    dt = None if dtype is None else DataType(dtype)
    return TensorType(dt, None if shape is None else tuple(shape))
