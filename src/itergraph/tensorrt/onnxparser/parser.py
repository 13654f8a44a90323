"""``trt.OnnxParser(network, logger)``: ONNX models into the network API, as TensorRT's parser
(onnx-tensorrt) imports them.

``parse(bytes)`` / ``parse_from_file(path)`` add the model's inputs, layers and outputs to the
network and return True, or stop at the first node that cannot be imported and return False
with an error (``num_errors``, ``get_error(i)``: a `ParserError` with the node's index, name
and operator, an `ErrorCode` and the reason). Values are network tensors, or NumPy arrays for
initializers and constants (weights), which become constant layers where a tensor is needed.
Node importers live in :mod:`.ops` (ordinary operators), :mod:`.control` (Loop,
Scan, If) and :mod:`.rnn` (LSTM, GRU, RNN as loops).
"""

from __future__ import annotations

import os

from ...ir.graph import canonical_domain
from ..core import Tensor
from . import control, ops, ops_index, ops_nn, rnn  # noqa: F401 - they register the importers
from .context import Context
from .errors import (
    ErrorCode,
    ImportFailure,
    NodeFailure,
    OnnxParserFlag,
    ParserError,
    fail,
    onnx_dtype,
)
from .registry import IMPORTERS, import_graph


def _dims_of(vi) -> tuple[int, ...] | None:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim)


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
        except (OSError, TypeError, ValueError) as e:  # a path that is None, holds NUL...
            self._errors.append(ParserError(ErrorCode.MODEL_DESERIALIZE_FAILED,
                                            f"Failed to open file {model}: {e}",
                                            func="parse_from_file"))
            return False
        return self.parse(data, model)

    def supports_model(self, model, path: str | None = None):
        """(True/False, [(node indices, supported)]): parses into a scratch network."""
        from ..network import Network

        scratch = OnnxParser(Network(self.network.flags, self.network.builder), self.logger)
        ok = scratch.parse(model, path)
        return ok, []

    def _parse_proto(self, proto, base_dir: str) -> bool:
        opset = next((o.version for o in proto.opset_import if canonical_domain(o.domain) == ""), 1)
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


__all__ = ["ErrorCode", "OnnxParser", "OnnxParserFlag", "ParserError"]
