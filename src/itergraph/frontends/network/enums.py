"""The enum classes of the network-definition API, named as in TensorRT's Python package.

``trt.DataType.FLOAT``, ``trt.ElementWiseOperation.SUM``, ``trt.TripLimit.COUNT`` ... keep their
TensorRT names so that porting a network definition means changing the import. Wherever a
data type is taken, a NumPy dtype (``np.float32``, ``"int32"``) is accepted too.
"""

from __future__ import annotations

import enum

import numpy as np

from ...errors import ModelError
from ...ir.types import DataType as IRType


class DataType(enum.Enum):
    """Element types (TensorRT names). ``DOUBLE`` is an extension TensorRT does not have."""

    FLOAT = "float32"
    HALF = "float16"
    BF16 = "bfloat16"
    INT8 = "int8"
    INT32 = "int32"
    INT64 = "int64"
    BOOL = "bool"
    UINT8 = "uint8"
    FP8 = "float8_e4m3fn"
    INT4 = "int4"
    FP4 = "float4_e2m1fn"
    E8M0 = "float8_e8m0fnu"
    DOUBLE = "float64"

    @property
    def itemsize(self) -> float:
        return {"int4": 0.5, "float4_e2m1fn": 0.5}.get(self.value) or to_numpy(self).itemsize

    def __repr__(self) -> str:
        return f"DataType.{self.name}"


# TensorRT's module-level aliases (``trt.float32`` ...).
float32 = DataType.FLOAT
float16 = DataType.HALF
bfloat16 = DataType.BF16
int8 = DataType.INT8
int32 = DataType.INT32
int64 = DataType.INT64
bool = DataType.BOOL  # noqa: A001 - TensorRT exports this name
uint8 = DataType.UINT8
fp8 = DataType.FP8
int4 = DataType.INT4
fp4 = DataType.FP4


def as_dtype(dt) -> DataType:
    """A `DataType` from a `DataType`, an IR type, or anything ``numpy.dtype`` accepts."""
    if isinstance(dt, DataType):
        return dt
    if isinstance(dt, IRType):
        return DataType(dt.value)
    try:
        if isinstance(dt, str):
            return DataType(dt)
    except ValueError:
        pass
    try:
        npdt = np.dtype(dt)
    except TypeError:
        raise ModelError(f"not a data type: {dt!r}") from None
    name = npdt.name
    for member in DataType:
        if member.value == name:
            return member
    raise ModelError(f"data type {npdt} has no network DataType")


def to_ir(dt: DataType) -> IRType:
    return IRType(dt.value)


def to_numpy(dt: DataType) -> np.dtype:

    return to_ir(dt).numpy


def nptype(dt) -> type:
    """The NumPy scalar type of a `DataType` (TensorRT's ``trt.nptype``)."""
    return to_numpy(as_dtype(dt)).type


class ElementWiseOperation(enum.Enum):
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    SUB = 4
    DIV = 5
    POW = 6
    FLOOR_DIV = 7
    AND = 8
    OR = 9
    XOR = 10
    EQUAL = 11
    GREATER = 12
    LESS = 13


class ActivationType(enum.Enum):
    RELU = 0
    SIGMOID = 1
    TANH = 2
    LEAKY_RELU = 3
    ELU = 4
    SELU = 5
    SOFTSIGN = 6
    SOFTPLUS = 7
    CLIP = 8
    HARD_SIGMOID = 9
    SCALED_TANH = 10
    THRESHOLDED_RELU = 11
    GELU_ERF = 12
    GELU_TANH = 13


class UnaryOperation(enum.Enum):
    EXP = 0
    LOG = 1
    SQRT = 2
    RECIP = 3
    ABS = 4
    NEG = 5
    SIN = 6
    COS = 7
    TAN = 8
    SINH = 9
    COSH = 10
    ASIN = 11
    ACOS = 12
    ATAN = 13
    ASINH = 14
    ACOSH = 15
    ATANH = 16
    CEIL = 17
    FLOOR = 18
    ERF = 19
    NOT = 20
    SIGN = 21
    ROUND = 22
    ISINF = 23
    ISNAN = 24


class MatrixOperation(enum.Enum):
    """How a matrix-multiply operand is read: as is, transposed (last two axes), or as a vector
    (its last axis is the vector; the other axes are batch axes)."""

    NONE = 0
    TRANSPOSE = 1
    VECTOR = 2


class ReduceOperation(enum.Enum):
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


class TripLimit(enum.Enum):
    """COUNT: a 0-D integer, the number of iterations. WHILE: a 0-D bool; iteration n runs
    only if its value computed at the start of iteration n is true."""

    COUNT = 0
    WHILE = 1


class LoopOutput(enum.Enum):
    """LAST_VALUE: the final value of a recurrence. CONCATENATE / REVERSE: every iteration's
    value stacked on a new axis, in order / in reverse order."""

    LAST_VALUE = 0
    CONCATENATE = 1
    REVERSE = 2


class LayerType(enum.Enum):
    CONSTANT = "Constant"
    ELEMENTWISE = "ElementWise"
    ACTIVATION = "Activation"
    UNARY = "Unary"
    MATRIX_MULTIPLY = "MatrixMultiply"
    REDUCE = "Reduce"
    SHUFFLE = "Shuffle"
    CONCATENATION = "Concatenation"
    SLICE = "Slice"
    GATHER = "Gather"
    IDENTITY = "Identity"
    CAST = "Cast"
    SELECT = "Select"
    SHAPE = "Shape"
    SOFTMAX = "SoftMax"
    TRIP_LIMIT = "TripLimit"
    ITERATOR = "Iterator"
    RECURRENCE = "Recurrence"
    LOOP_OUTPUT = "LoopOutput"
    CONDITION = "Condition"
    CONDITIONAL_INPUT = "ConditionalInput"
    CONDITIONAL_OUTPUT = "ConditionalOutput"


class NetworkDefinitionCreationFlag(enum.IntEnum):
    """Accepted for source compatibility; networks are always explicit-batch."""

    EXPLICIT_BATCH = 0
    STRONGLY_TYPED = 1
