"""`Network`: TensorRT's INetworkDefinition, plus the small Builder/Logger/Weights shims.

    import itergraph.network as trt            # instead of: import tensorrt as trt
    network = trt.Builder(trt.Logger()).create_network()
    x = network.add_input("x", trt.float32, (2, 3))
    y = network.add_activation(x, trt.ActivationType.RELU).get_output(0)
    network.mark_output(y)
    graph = network.to_graph()                 # an itergraph IR Graph; or ig.load(network)
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from . import layers as L
from .build import build
from .control import IfConditional, Loop
from .core import Layer, NetworkBase, Tensor, _dims, checked_arguments
from .enums import (
    ActivationType,
    ElementWiseOperation,
    MatrixOperation,
    ReduceOperation,
    UnaryOperation,
    as_dtype,
    to_numpy,
)


class Weights:
    """TensorRT's ``trt.Weights``: a wrapper around a NumPy array (any array works directly)."""

    def __init__(self, a=None, dtype=None):
        arr = np.zeros(0, np.float32) if a is None else np.asarray(a)
        if dtype is not None:
            arr = arr.astype(to_numpy(as_dtype(dtype)))
        self._array = arr

    @property
    def dtype(self):
        return as_dtype(self._array.dtype)

    @property
    def size(self) -> int:
        return int(self._array.size)

    @property
    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def numpy(self) -> np.ndarray:
        return self._array


@checked_arguments
class Network(NetworkBase):
    """A network definition. Layers are added with ``add_*``; `to_graph` builds the IR."""

    def __init__(self, flags: int = 0):
        super().__init__()
        self.name = "network"
        self._flags = flags
        self._loops: list[Loop] = []
        self._conditionals: list[IfConditional] = []

    def _layer(self, cls, *inputs: Tensor, args=()) -> Layer:
        for i, t in enumerate(inputs):
            self._own(t, f"{cls._type.value} layer input {i}")
        return self._add(cls(self, *inputs, *args))

    # -- inputs and outputs ---------------------------------------------------------------
    def add_input(self, name: str, dtype, shape) -> Tensor:
        if any(t.name == name for t in self._inputs):
            raise ModelError(f"network input '{name}' is defined twice")
        t = Tensor(self, str(name))
        t._input_type = (as_dtype(dtype), _dims(shape, f"network input '{name}'"))
        self._inputs.append(t)
        self._touch()
        return t

    def mark_output(self, tensor: Tensor) -> None:
        self._own(tensor, "mark_output")
        if tensor not in self._outputs:
            self._outputs.append(tensor)
        self._touch()

    def unmark_output(self, tensor: Tensor) -> None:
        self._outputs = [t for t in self._outputs if t is not tensor]
        self._touch()

    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    @property
    def num_layers(self) -> int:
        return len(self._layers)

    def get_input(self, index: int) -> Tensor:
        return self._inputs[index]

    def get_output(self, index: int) -> Tensor:
        return self._outputs[index]

    def get_layer(self, index: int) -> Layer:
        return self._layers[index]

    def __iter__(self):
        return iter(self._layers)

    def __len__(self) -> int:
        return len(self._layers)

    @property
    def has_implicit_batch_dimension(self) -> bool:
        return False

    # -- layers ---------------------------------------------------------------------------
    def add_constant(self, shape, weights) -> L.ConstantLayer:
        return self._add(L.ConstantLayer(self, shape, weights))

    def add_elementwise(self, input1: Tensor, input2: Tensor, op: ElementWiseOperation):
        return self._layer(L.ElementWiseLayer, input1, input2, args=(op,))

    def add_activation(self, input: Tensor, type: ActivationType):  # noqa: A002
        return self._layer(L.ActivationLayer, input, args=(type,))

    def add_unary(self, input: Tensor, op: UnaryOperation):  # noqa: A002
        return self._layer(L.UnaryLayer, input, args=(op,))

    def add_matrix_multiply(self, input0: Tensor, op0: MatrixOperation, input1: Tensor,
                            op1: MatrixOperation):
        self._own(input0, "add_matrix_multiply input 0")
        self._own(input1, "add_matrix_multiply input 1")
        return self._add(L.MatrixMultiplyLayer(self, input0, op0, input1, op1))

    def add_reduce(self, input: Tensor, op: ReduceOperation, axes: int, keep_dims: bool):  # noqa: A002
        return self._layer(L.ReduceLayer, input, args=(op, axes, keep_dims))

    def add_shuffle(self, input: Tensor):  # noqa: A002
        return self._layer(L.ShuffleLayer, input)

    def add_concatenation(self, inputs: list[Tensor]):
        inputs = list(inputs)
        for i, t in enumerate(inputs):
            self._own(t, f"add_concatenation input {i}")
        return self._add(L.ConcatenationLayer(self, inputs))

    def add_slice(self, input: Tensor, start, shape, stride):  # noqa: A002
        return self._layer(L.SliceLayer, input, args=(start, shape, stride))

    def add_gather(self, input: Tensor, indices: Tensor, axis: int = 0):  # noqa: A002
        return self._layer(L.GatherLayer, input, indices, args=(axis,))

    def add_identity(self, input: Tensor):  # noqa: A002
        return self._layer(L.IdentityLayer, input)

    def add_cast(self, input: Tensor, to_type):  # noqa: A002
        return self._layer(L.CastLayer, input, args=(to_type,))

    def add_select(self, condition: Tensor, then_input: Tensor, else_input: Tensor):
        return self._layer(L.SelectLayer, condition, then_input, else_input)

    def add_shape(self, input: Tensor):  # noqa: A002
        return self._layer(L.ShapeLayer, input)

    def add_softmax(self, input: Tensor):  # noqa: A002
        return self._layer(L.SoftMaxLayer, input)

    def add_loop(self) -> Loop:
        loop = Loop(self, len(self._loops))
        self._loops.append(loop)
        return loop

    def add_if_conditional(self) -> IfConditional:
        cond = IfConditional(self, len(self._conditionals))
        self._conditionals.append(cond)
        return cond

    # -- building -------------------------------------------------------------------------
    def to_graph(self):
        """Check the network and build its itergraph IR `Graph` (see :mod:`.build`)."""
        return build(self)


INetworkDefinition = Network


def Dims(shape=()) -> tuple[int, ...]:  # noqa: N802 - TensorRT's name
    """TensorRT's ``trt.Dims``: here a plain tuple (anywhere a shape is taken, any sequence
    of ints works)."""
    return tuple(int(d) for d in shape)


Dims2 = Dims3 = Dims4 = DimsHW = Permutation = Dims


class Logger:
    """Accepted for source compatibility with ``trt.Logger``; itergraph reports by exceptions."""

    INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = range(5)

    def __init__(self, min_severity: int = 2):
        self.min_severity = min_severity

    def log(self, severity, msg: str) -> None:  # pragma: no cover - nothing logs
        pass


class Builder:
    """``trt.Builder(logger).create_network(flags)`` -> `Network`."""

    def __init__(self, logger: Logger | None = None):
        self.logger = logger

    def create_network(self, flags: int = 0) -> Network:
        return Network(flags)
