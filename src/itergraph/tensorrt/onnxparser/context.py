"""What ONNX node importers see while a model is parsed (`Context`)."""

from __future__ import annotations

import numpy as np

from ..core import Layer, Tensor
from .errors import ErrorCode, fail, node_name


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


__all__ = ["Context"]
