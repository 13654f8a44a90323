"""The ONNX parser's errors (TensorRT's ``ErrorCode`` and ``ParserError``), the failure a
node importer raises, and the ONNX -> TensorRT element types."""

from __future__ import annotations

from ..enums import ONNX_TYPE, DataType, TrtEnum


class ErrorCode(TrtEnum):
    """The parser's error codes (``trt.ErrorCode``; the core library's are ErrorCodeTRT)."""

    SUCCESS = 0
    INTERNAL_ERROR = 1
    MEM_ALLOC_FAILED = 2
    MODEL_DESERIALIZE_FAILED = 3
    INVALID_VALUE = 4
    INVALID_GRAPH = 5
    INVALID_NODE = 6
    UNSUPPORTED_GRAPH = 7
    UNSUPPORTED_NODE = 8
    UNSUPPORTED_NODE_ATTR = 9
    UNSUPPORTED_NODE_INPUT = 10
    UNSUPPORTED_NODE_DATATYPE = 11
    UNSUPPORTED_NODE_DYNAMIC = 12
    UNSUPPORTED_NODE_SHAPE = 13
    REFIT_FAILED = 14

    def __str__(self) -> str:
        return self.name


class OnnxParserFlag(TrtEnum):
    NATIVE_INSTANCENORM = 0
    ENABLE_UINT8_AND_ASYMMETRIC_QUANTIZATION_DLA = 1
    REPORT_CAPABILITY_DLA = 2
    ENABLE_PLUGIN_OVERRIDE = 3
    ADJUST_FOR_DLA = 4


class ParserError:
    """One parse error: ``code()``, ``desc()``, ``node()`` (index in its graph, -1 for none),
    ``node_name()``, ``node_operator()``; ``str()`` reads as TensorRT's."""

    def __init__(self, code: ErrorCode, desc: str, node: int = -1, name: str = "", op: str = "",
                 func: str = ""):
        self._code, self._desc, self._node, self._name, self._op = code, desc, node, name, op
        self._func = func

    def code(self) -> ErrorCode:
        return self._code

    def desc(self) -> str:
        return self._desc

    def node(self) -> int:
        return self._node

    def node_name(self) -> str:
        return self._name

    def node_operator(self) -> str:
        return self._op

    def file(self) -> str:
        return __file__

    def line(self) -> int:
        return 0

    def func(self) -> str:
        return self._func

    def local_function_stack(self) -> list[str]:
        return []

    def local_function_stack_size(self) -> int:
        return 0

    def __str__(self) -> str:
        info = f"({self._func}): {self._code}: {self._desc}"
        if self._code is ErrorCode.MODEL_DESERIALIZE_FAILED:
            return info
        return (f"In node {self._node} with name: {self._name} and operator: {self._op} "
                + info)

    __repr__ = __str__


class NodeFailure(Exception):
    """Raised by a node importer: the node cannot be imported (`code`, reason)."""

    def __init__(self, code: ErrorCode, msg: str):
        super().__init__(msg)
        self.code = code


def fail(code: ErrorCode, msg: str):
    raise NodeFailure(code, msg)


def node_name(node) -> str:
    """onnx-tensorrt's name for a node: its name, or ``node_of_<first output>``."""
    if not node.name and node.output:
        return f"node_of_{node.output[0]}"
    return node.name


class ImportFailure(Exception):
    """A node failed (carries the `ParserError`)."""

    def __init__(self, error: ParserError):
        super().__init__(str(error))
        self.error = error


# The ONNX element types the parser reads (TensorRT's parser has no INT4/FP4/E8M0 inputs).
_ONNX_TYPES = {ONNX_TYPE[dt]: dt for dt in (DataType.FLOAT, DataType.UINT8, DataType.INT8,
                                            DataType.INT32, DataType.INT64, DataType.BOOL,
                                            DataType.HALF, DataType.BF16, DataType.FP8)}


def onnx_dtype(elem: int, what: str, inputs: bool = False) -> DataType:
    """The TensorRT type of ONNX element type `elem`. DOUBLE values inside the model are
    FLOAT (the parser converts double weights and casts); a DOUBLE graph input is refused."""
    if elem == 11 and not inputs:
        return DataType.FLOAT
    if elem not in _ONNX_TYPES:
        fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, f"{what}: ONNX element type {elem} has no "
             "TensorRT type")
    return _ONNX_TYPES[elem]


__all__ = ["ErrorCode", "ImportFailure", "NodeFailure", "OnnxParserFlag", "ParserError", "fail",
           "node_name", "onnx_dtype"]
