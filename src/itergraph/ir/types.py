"""Types of IR values: tensors (element type + shape with symbolic dims), sequences, optionals.

A dimension is an ``int`` (static), a ``str`` (symbolic, e.g. ``"batch"``) or ``None``
(unknown). A shape of ``None`` means the rank itself is unknown.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

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


Type = Union[TensorType, SequenceType, OptionalType]


def tensor(dtype: DataType | str | None = None, shape=None) -> TensorType:
    """Shorthand: ``tensor("float32", (2, "n"))``."""
    dt = None if dtype is None else DataType(dtype)
    return TensorType(dt, None if shape is None else tuple(shape))
