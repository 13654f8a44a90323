"""The enums of the network-definition API, as TensorRT 10's Python bindings define them.

TensorRT's enums are pybind11 enums: ``int(trt.TripLimit.COUNT) == 0``,
``trt.DataType(0) is trt.DataType.FLOAT``, ``.name`` is the member name and ``.value`` its
integer, ``str()`` gives ``"DataType.FLOAT"``. Most do not compare equal to integers; those
TensorRT declares arithmetic (flags such as ``BuilderFlag``, ``Logger.Severity``) do, and
support integer arithmetic (`TrtIntEnum`). Member values are TensorRT's (``NvInfer.h``).
Wherever a data type is taken, a NumPy dtype (``np.float32``, ``"int32"``) is accepted too.
"""

from __future__ import annotations

import enum

import numpy as np

from ..errors import ModelError
from ..ir.types import DataType as IRType


class TrtEnum(enum.Enum):
    """A pybind11-style enum: int-convertible, constructible from its integer value."""

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class TrtIntEnum(enum.IntEnum):
    """A pybind11 ``py::arithmetic`` enum: also an int (flags combine with ``|`` and ``<<``)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


def _members(names: str, start: int = 0) -> list[tuple[str, int]]:
    return [(n, i) for i, n in enumerate(names.split(), start)]


def _enum(name: str, names: str, base=TrtEnum, doc: str = ""):
    cls = base(name, _members(names), module=__name__)
    cls.__doc__ = doc or f"TensorRT's ``{name}``."
    return cls


class DataType(TrtEnum):
    """Element types. `itemsize` is the size in bytes (0.5 for the 4-bit types)."""

    FLOAT = 0
    HALF = 1
    INT8 = 2
    INT32 = 3
    BOOL = 4
    UINT8 = 5
    FP8 = 6
    BF16 = 7
    INT64 = 8
    INT4 = 9
    FP4 = 10
    E8M0 = 11

    @property
    def itemsize(self) -> float:
        return _ITEMSIZE[self]


# TensorRT type <-> IR element type (the IR names are NumPy's / ml_dtypes').
_IR = {
    DataType.FLOAT: "float32", DataType.HALF: "float16", DataType.INT8: "int8",
    DataType.INT32: "int32", DataType.BOOL: "bool", DataType.UINT8: "uint8",
    DataType.FP8: "float8_e4m3fn", DataType.BF16: "bfloat16", DataType.INT64: "int64",
    DataType.INT4: "int4", DataType.FP4: "float4_e2m1fn", DataType.E8M0: "float8_e8m0fnu",
}
_FROM_IR = {v: k for k, v in _IR.items()}
_ITEMSIZE = {DataType.INT4: 0.5, DataType.FP4: 0.5, DataType.FLOAT: 4, DataType.HALF: 2,
             DataType.INT8: 1, DataType.INT32: 4, DataType.BOOL: 1, DataType.UINT8: 1,
             DataType.FP8: 1, DataType.BF16: 2, DataType.INT64: 8, DataType.E8M0: 1}

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
e8m0 = DataType.E8M0


def as_dtype(dt) -> DataType:
    """A `DataType` from a `DataType`, an IR type, or anything ``numpy.dtype`` accepts."""
    if isinstance(dt, DataType):
        return dt
    if isinstance(dt, IRType):
        name = dt.value
    else:
        try:
            name = np.dtype(dt).name
        except TypeError:
            raise ModelError(f"not a data type: {dt!r}") from None
    if name not in _FROM_IR:
        raise ModelError(f"data type {name} has no TensorRT DataType")
    return _FROM_IR[name]


def to_ir(dt: DataType) -> IRType:
    return IRType(_IR[dt])


# ONNX TensorProto element-type codes (Cast's `to`), from the IR's element types.
ONNX_TYPE = {dt: to_ir(dt).onnx for dt in DataType}


def to_numpy(dt: DataType) -> np.dtype:
    return to_ir(dt).numpy


def nptype(dt) -> type:
    """The NumPy scalar type of a `DataType` (TensorRT's ``trt.nptype``); TypeError for the
    types NumPy has no scalar for, as in TensorRT."""
    dt = as_dtype(dt)
    if dt not in (DataType.FLOAT, DataType.HALF, DataType.INT8, DataType.INT32,
                  DataType.INT64, DataType.BOOL, DataType.UINT8):
        raise TypeError("Could not resolve TensorRT datatype to an equivalent numpy datatype.")
    return to_numpy(dt).type


LayerType = _enum(
    "LayerType",
    "CONVOLUTION CAST ACTIVATION POOLING LRN SCALE SOFTMAX DECONVOLUTION CONCATENATION "
    "ELEMENTWISE PLUGIN UNARY PADDING SHUFFLE REDUCE TOPK GATHER MATRIX_MULTIPLY RAGGED_SOFTMAX "
    "CONSTANT IDENTITY PLUGIN_V2 SLICE SHAPE PARAMETRIC_RELU RESIZE TRIP_LIMIT RECURRENCE "
    "ITERATOR LOOP_OUTPUT SELECT FILL QUANTIZE DEQUANTIZE CONDITION CONDITIONAL_INPUT "
    "CONDITIONAL_OUTPUT SCATTER EINSUM ASSERTION ONE_HOT NON_ZERO GRID_SAMPLE NMS "
    "REVERSE_SEQUENCE NORMALIZATION PLUGIN_V3 SQUEEZE UNSQUEEZE CUMULATIVE DYNAMIC_QUANTIZE "
    "ATTENTION_INPUT ATTENTION_OUTPUT ROTARY_EMBEDDING KV_CACHE_UPDATE MOE DIST_COLLECTIVE")
ActivationType = _enum(
    "ActivationType", "RELU SIGMOID TANH LEAKY_RELU ELU SELU SOFTSIGN SOFTPLUS CLIP "
    "HARD_SIGMOID SCALED_TANH THRESHOLDED_RELU GELU_ERF GELU_TANH")
PaddingMode = _enum("PaddingMode", "EXPLICIT_ROUND_DOWN EXPLICIT_ROUND_UP SAME_UPPER SAME_LOWER")
PoolingType = _enum("PoolingType", "MAX AVERAGE MAX_AVERAGE_BLEND")
ScaleMode = _enum("ScaleMode", "UNIFORM CHANNEL ELEMENTWISE")
ElementWiseOperation = _enum(
    "ElementWiseOperation",
    "SUM PROD MAX MIN SUB DIV POW FLOOR_DIV AND OR XOR EQUAL GREATER LESS")
GatherMode = _enum("GatherMode", "DEFAULT ELEMENT ND")
UnaryOperation = _enum(
    "UnaryOperation", "EXP LOG SQRT RECIP ABS NEG SIN COS TAN SINH COSH ASIN ACOS ATAN ASINH "
    "ACOSH ATANH CEIL FLOOR ERF NOT SIGN ROUND ISINF ISNAN")
ReduceOperation = _enum("ReduceOperation", "SUM PROD MAX MIN AVG NONE")
SampleMode = _enum("SampleMode", "STRICT_BOUNDS WRAP CLAMP FILL REFLECT")
TopKOperation = _enum("TopKOperation", "MAX MIN")
MatrixOperation = _enum(
    "MatrixOperation", "NONE TRANSPOSE VECTOR",
    doc="How a matrix-multiply operand is read: as is, transposed (last two axes), or as a "
        "vector (its last axis is the vector; the other axes are batch axes).")
InterpolationMode = _enum("InterpolationMode", "NEAREST LINEAR CUBIC")
ResizeCoordinateTransformation = _enum(
    "ResizeCoordinateTransformation", "ALIGN_CORNERS ASYMMETRIC HALF_PIXEL")
ResizeSelector = _enum("ResizeSelector", "FORMULA UPPER")
ResizeRoundMode = _enum("ResizeRoundMode", "HALF_UP HALF_DOWN FLOOR CEIL")
LoopOutput = _enum(
    "LoopOutput", "LAST_VALUE CONCATENATE REVERSE",
    doc="LAST_VALUE: the final value of a recurrence. CONCATENATE / REVERSE: every trip's "
        "value stacked on a new axis, in order / in reverse order.")
TripLimit = _enum(
    "TripLimit", "COUNT WHILE",
    doc="COUNT: a 0-D integer, the number of trips. WHILE: a 0-D bool; trip n runs only if "
        "its value computed at the start of trip n is true.")
FillOperation = _enum("FillOperation", "LINSPACE RANDOM_UNIFORM RANDOM_NORMAL")
ScatterMode = _enum("ScatterMode", "ELEMENT ND")
BoundingBoxFormat = _enum("BoundingBoxFormat", "CORNER_PAIRS CENTER_SIZES")
CumulativeOperation = _enum("CumulativeOperation", "SUM")
CollectiveOperation = _enum(
    "CollectiveOperation", "ALL_REDUCE ALL_GATHER BROADCAST REDUCE REDUCE_SCATTER")
AttentionNormalizationOp = _enum("AttentionNormalizationOp", "NONE SOFTMAX")
KVCacheMode = _enum("KVCacheMode", "LINEAR")
MoEActType = _enum("MoEActType", "NONE SILU")
TensorLocation = _enum("TensorLocation", "DEVICE HOST")
TensorIOMode = _enum("TensorIOMode", "NONE INPUT OUTPUT")
WeightsRole = _enum("WeightsRole", "KERNEL BIAS SHIFT SCALE CONSTANT ANY")
DeviceType = _enum("DeviceType", "GPU DLA")
MemoryPoolType = _enum(
    "MemoryPoolType",
    "WORKSPACE DLA_MANAGED_SRAM DLA_LOCAL_DRAM DLA_GLOBAL_DRAM TACTIC_DRAM TACTIC_SHARED_MEMORY")
ProfilingVerbosity = _enum("ProfilingVerbosity", "LAYER_NAMES_ONLY NONE DETAILED")
HardwareCompatibilityLevel = _enum(
    "HardwareCompatibilityLevel", "NONE AMPERE_PLUS SAME_COMPUTE_CAPABILITY")
TilingOptimizationLevel = _enum("TilingOptimizationLevel", "NONE FAST MODERATE FULL")
RuntimePlatform = _enum("RuntimePlatform", "SAME_AS_BUILD WINDOWS_AMD64")
PreviewFeature = _enum(
    "PreviewFeature", "PROFILE_SHARING_0806 ALIASED_PLUGIN_IO_10_03 "
    "RUNTIME_ACTIVATION_RESIZE_10_10 MULTIDEVICE_RUNTIME_10_16")
TempfileControlFlag = _enum("TempfileControlFlag", "ALLOW_IN_MEMORY_FILES ALLOW_TEMPORARY_FILES")
OptProfileSelector = _enum("OptProfileSelector", "MIN OPT MAX")
LayerInformationFormat = _enum("LayerInformationFormat", "ONELINE JSON")
CalibrationAlgoType = _enum(
    "CalibrationAlgoType",
    "LEGACY_CALIBRATION ENTROPY_CALIBRATION ENTROPY_CALIBRATION_2 MINMAX_CALIBRATION")

# arithmetic enums
BuilderFlag = TrtIntEnum("BuilderFlag", [
    ("FP16", 0), ("INT8", 1), ("DEBUG", 2), ("GPU_FALLBACK", 3), ("REFIT", 4),
    ("DISABLE_TIMING_CACHE", 5), ("TF32", 6), ("SPARSE_WEIGHTS", 7), ("SAFETY_SCOPE", 8),
    ("OBEY_PRECISION_CONSTRAINTS", 9), ("PREFER_PRECISION_CONSTRAINTS", 10), ("DIRECT_IO", 11),
    ("REJECT_EMPTY_ALGORITHMS", 12), ("VERSION_COMPATIBLE", 13), ("EXCLUDE_LEAN_RUNTIME", 14),
    ("FP8", 15), ("ERROR_ON_TIMING_CACHE_MISS", 16), ("BF16", 17),
    ("DISABLE_COMPILATION_CACHE", 18), ("STRIP_PLAN", 19), ("WEIGHTLESS", 19),
    ("REFIT_IDENTICAL", 20), ("WEIGHT_STREAMING", 21), ("INT4", 22), ("REFIT_INDIVIDUAL", 23),
    ("STRICT_NANS", 24), ("MONITOR_MEMORY", 25), ("FP4", 26), ("EDITABLE_TIMING_CACHE", 27),
    ("DISTRIBUTIVE_INDEPENDENCE", 28)], module=__name__)
NetworkDefinitionCreationFlag = TrtIntEnum("NetworkDefinitionCreationFlag", [
    ("EXPLICIT_BATCH", 0), ("STRONGLY_TYPED", 1), ("PREFER_JIT_PYTHON_PLUGINS", 2),
    ("PREFER_AOT_PYTHON_PLUGINS", 3)], module=__name__)
NetworkDefinitionCreationFlag.__doc__ = (
    "Networks are always explicit-batch; STRONGLY_TYPED makes types follow the inputs "
    "(set_output_type and precision are then refused, as TensorRT refuses them).")
Severity = TrtIntEnum("Severity", _members("INTERNAL_ERROR ERROR WARNING INFO VERBOSE"),
                      module=__name__)
TensorFormat = TrtIntEnum("TensorFormat", _members(
    "LINEAR CHW2 HWC8 CHW4 CHW16 CHW32 DHWC8 CDHW32 HWC DLA_LINEAR DLA_HWC4 HWC16 DHWC"),
    module=__name__)
EngineCapability = TrtIntEnum("EngineCapability", _members("STANDARD SAFETY DLA_STANDALONE"),
                              module=__name__)
TacticSource = TrtIntEnum("TacticSource", _members(
    "CUBLAS CUBLAS_LT CUDNN EDGE_MASK_CONVOLUTIONS JIT_CONVOLUTIONS"), module=__name__)
QuantizationFlag = TrtIntEnum("QuantizationFlag", _members("CALIBRATE_BEFORE_FUSION"),
                              module=__name__)
ErrorCodeTRT = TrtIntEnum("ErrorCodeTRT", _members(
    "SUCCESS UNSPECIFIED_ERROR INTERNAL_ERROR INVALID_ARGUMENT INVALID_CONFIG FAILED_ALLOCATION "
    "FAILED_INITIALIZATION FAILED_EXECUTION FAILED_COMPUTATION INVALID_STATE UNSUPPORTED_STATE"),
    module=__name__)
ExecutionContextAllocationStrategy = TrtIntEnum(
    "ExecutionContextAllocationStrategy", _members("STATIC ON_PROFILE_CHANGE USER_MANAGED"),
    module=__name__)
SerializationFlag = TrtIntEnum(
    "SerializationFlag", _members("EXCLUDE_WEIGHTS EXCLUDE_LEAN_RUNTIME INCLUDE_REFIT"),
    module=__name__)
EngineStat = TrtIntEnum("EngineStat", _members("TOTAL_WEIGHTS_SIZE STRIPPED_WEIGHTS_SIZE"),
                        module=__name__)
AllocatorFlag = TrtIntEnum("AllocatorFlag", _members("RESIZABLE"), module=__name__)

ENUMS = [v for v in list(globals().values())
         if isinstance(v, type) and issubclass(v, (TrtEnum, TrtIntEnum))
         and v not in (TrtEnum, TrtIntEnum)]


def check_enum(cls, value, what: str):
    """`value` as a member of `cls` (a member, or its integer value); ModelError otherwise."""
    if isinstance(value, cls):
        return value
    if isinstance(value, (TrtEnum, TrtIntEnum)) and not isinstance(value, cls):
        raise ModelError(f"{what}: expected a {cls.__name__}, got {value}")
    try:
        return cls(int(value))
    except (TypeError, ValueError):
        raise ModelError(f"{what}: {value!r} is not a {cls.__name__}") from None
