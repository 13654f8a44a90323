"""``trt.OnnxParser(network, logger)``: ONNX models into the network API, as TensorRT's parser
(onnx-tensorrt) imports them.

``parse(bytes)`` / ``parse_from_file(path)`` add the model's inputs, layers and outputs to the
network and return True, or stop at the first node that cannot be imported and return False
with an error (``num_errors``, ``get_error(i)``: a `ParserError` with the node's index, name
and operator, an `ErrorCode` and the reason). Values are network tensors, or NumPy arrays for
initializers and constants (weights), which become constant layers where a tensor is needed.
Node importers live in :mod:`.onnx_ops` (ordinary operators), :mod:`.onnx_control` (Loop,
Scan, If) and :mod:`.onnx_rnn` (LSTM, GRU, RNN as loops).
"""

from __future__ import annotations

import os

import numpy as np

from .core import Layer, Tensor
from .enums import DataType, TrtEnum


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


def _dims_of(vi) -> tuple[int, ...] | None:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim)


class Context:
    """What node importers see: the network, the named values of the enclosing scopes (a
    stack: subgraphs see outer names and may shadow them), the opset, and helpers."""

    def __init__(self, network, opset: int, base_dir: str = ""):
        self.network = network
        self.opset = opset
        self.base_dir = base_dir
        self.scopes: list[dict[str, object]] = [{}]
        self._consts: dict[int, Tensor] = {}
        self.node = None  # the node being imported
        self.layer_count = 0

    # -- names ----------------------------------------------------------------------------
    def get(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        fail(ErrorCode.INVALID_GRAPH, f"input '{name}' is not defined (no graph input, "
             "initializer or earlier node output has that name)")

    def has(self, name: str) -> bool:
        return any(name in s for s in self.scopes)

    def put(self, name: str, value) -> None:
        if isinstance(value, Tensor) and not value.is_network_input:
            value.name = name
        self.scopes[-1][name] = value

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    # -- values ---------------------------------------------------------------------------
    def tensor(self, v) -> Tensor:
        """`v` as a network tensor (weights become a constant layer, made once)."""
        if isinstance(v, Tensor):
            return v
        arr = np.asarray(v)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)  # TensorRT has no DOUBLE: onnx-tensorrt converts
        key = id(v)
        if key not in self._consts or self._consts[key][1] is not v:
            layer = self.network.add_constant(arr.shape, arr)
            self.name(layer)
            self._consts[key] = (layer.get_output(0), v)
        return self._consts[key][0]

    @staticmethod
    def const(v) -> np.ndarray | None:
        """The value of `v` when known before run time (weights, folded constants)."""
        if v is None:
            return None
        if isinstance(v, Tensor):
            return v.const_value()
        return np.asarray(v)

    def name(self, layer: Layer) -> Layer:
        """Name `layer` after the node being imported (TensorRT: the node's name)."""
        if self.node is not None:
            base = node_name(self.node)
            self.layer_count += 1
            layer.name = base if self.layer_count == 1 else f"{base}_{self.layer_count - 1}"
        return layer


class OnnxParser:
    """TensorRT's ``OnnxParser`` (see the module docstring)."""

    def __init__(self, network, logger=None):
        self.network = network
        self.logger = logger
        self._errors: list[ParserError] = []
        self.flags = 0
        self._layer_outputs: dict[str, list[Tensor]] = {}

    # -- errors and flags -----------------------------------------------------------------
    @property
    def num_errors(self) -> int:
        return len(self._errors)

    def get_error(self, index: int) -> ParserError | None:
        return self._errors[index] if 0 <= index < len(self._errors) else None

    def clear_errors(self) -> None:
        self._errors.clear()

    def set_flag(self, flag) -> None:
        self.flags |= 1 << int(flag)

    def clear_flag(self, flag) -> None:
        self.flags &= ~(1 << int(flag))

    def get_flag(self, flag) -> bool:
        return bool(self.flags >> int(flag) & 1)

    def get_used_vc_plugin_libraries(self) -> list[str]:
        return []

    def supports_operator(self, op_name: str) -> bool:
        from .onnx_ops import IMPORTERS

        return op_name in IMPORTERS

    def get_layer_output_tensor(self, name: str, i: int) -> Tensor | None:
        outs = self._layer_outputs.get(name, [])
        return outs[i] if 0 <= i < len(outs) else None

    # -- parsing --------------------------------------------------------------------------
    def parse(self, model, path: str | None = None) -> bool:
        """Parse a serialized ModelProto (`bytes`); `path` locates external weights."""
        import onnx

        try:
            proto = onnx.load_model_from_string(bytes(model))
            if path:
                from onnx.external_data_helper import load_external_data_for_model

                load_external_data_for_model(proto, os.path.dirname(os.path.abspath(path)))
        except Exception as e:  # noqa: BLE001 - any decoding failure is the same error
            self._errors.append(ParserError(ErrorCode.MODEL_DESERIALIZE_FAILED,
                                            f"Failed to parse the ONNX model: {e}",
                                            func="parse"))
            return False
        return self._parse_proto(proto, os.path.dirname(path) if path else "")

    def parse_from_file(self, model: str) -> bool:
        try:
            with open(model, "rb") as f:
                data = f.read()
        except OSError as e:
            self._errors.append(ParserError(ErrorCode.MODEL_DESERIALIZE_FAILED,
                                            f"Failed to open file {model}: {e}",
                                            func="parse_from_file"))
            return False
        return self.parse(data, model)

    def supports_model(self, model, path: str | None = None):
        """(True/False, [(node indices, supported)]): parses into a scratch network."""
        from .network import Network

        scratch = OnnxParser(Network(self.network.flags, self.network.builder), self.logger)
        ok = scratch.parse(model, path)
        return ok, []

    def _parse_proto(self, proto, base_dir: str) -> bool:
        from .onnx_ops import import_graph

        opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 1)
        ctx = Context(self.network, opset, base_dir)
        graph = proto.graph
        inits = {i.name for i in graph.initializer}
        try:
            for vi in graph.input:
                if vi.name in inits:
                    continue
                elem = vi.type.tensor_type.elem_type
                dims = _dims_of(vi)
                if not vi.type.HasField("tensor_type") or dims is None:
                    fail(ErrorCode.UNSUPPORTED_GRAPH, f"graph input '{vi.name}' is not a tensor "
                         "of known rank")
                dt = onnx_dtype(elem, f"graph input '{vi.name}'", inputs=True)
                ctx.put(vi.name, self.network.add_input(vi.name, dt, dims))
            import_graph(ctx, graph, self._layer_outputs)
            for vi in graph.output:
                t = ctx.tensor(ctx.get(vi.name))
                if t.is_network_input or t.is_network_output:
                    t = self.network.add_identity(t).get_output(0)
                t.name = vi.name
                self.network.mark_output(t)
        except ImportFailure as f:
            self._errors.append(f.error)
            if self.logger is not None:
                self.logger.log(1, str(f.error))
            return False
        except NodeFailure as e:
            self._errors.append(ParserError(e.code, str(e), func="parse"))
            return False
        return True


class ImportFailure(Exception):
    """A node failed (carries the `ParserError`)."""

    def __init__(self, error: ParserError):
        super().__init__(str(error))
        self.error = error


_ONNX_TYPES = {1: DataType.FLOAT, 2: DataType.UINT8, 3: DataType.INT8, 6: DataType.INT32,
               7: DataType.INT64, 9: DataType.BOOL, 10: DataType.HALF, 16: DataType.BF16,
               17: DataType.FP8}


def onnx_dtype(elem: int, what: str, inputs: bool = False) -> DataType:
    """The TensorRT type of ONNX element type `elem`. DOUBLE values inside the model are
    FLOAT (the parser converts double weights and casts); a DOUBLE graph input is refused."""
    if elem == 11 and not inputs:
        return DataType.FLOAT
    if elem not in _ONNX_TYPES:
        fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE, f"{what}: ONNX element type {elem} has no "
             "TensorRT type")
    return _ONNX_TYPES[elem]


__all__ = ["Context", "ErrorCode", "NodeFailure", "OnnxParser", "OnnxParserFlag", "ParserError",
           "fail", "onnx_dtype"]
