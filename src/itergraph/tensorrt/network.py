"""`Network`: TensorRT's INetworkDefinition.

    import itergraph.network as trt            # instead of: import tensorrt as trt
    network = trt.Builder(trt.Logger()).create_network()
    x = network.add_input("x", trt.float32, (2, 3))
    y = network.add_activation(x, trt.ActivationType.RELU).get_output(0)
    network.mark_output(y)
    graph = network.to_graph()                 # an itergraph IR Graph; or ig.load(network)

Every ``add_*`` of TensorRT 10 that has an ONNX meaning is here with TensorRT's arguments;
``network[i]`` / ``get_layer(i)`` give the layer through its ``ILayer`` interface, and
``get_input`` / ``get_output`` out of range give ``None``, as TensorRT's bindings do.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, UnsupportedError
from . import layers as L
from . import layers_index as LI
from . import layers_nn as LN
from . import layers_shape as LS
from . import layers_tensor as LT
from .build import build
from .control import IfConditional, Loop
from .core import Layer, LayerView, NetworkBase, Tensor, checked_arguments, checked_dims
from .enums import (
    DataType,
    GatherMode,
    NetworkDefinitionCreationFlag,
    ReduceOperation,
    ScaleMode,
    Severity,
    TopKOperation,
    as_dtype,
    check_enum,
    to_numpy,
)


class Weights:
    """TensorRT's ``trt.Weights``: a NumPy array (``Weights(a)``), or an empty one of a type
    (``Weights(trt.float32)``). Any array works directly wherever weights are taken."""

    def __init__(self, a=None, dtype=None):
        if isinstance(a, DataType) or (a is None and dtype is not None):
            arr = np.zeros(0, to_numpy(as_dtype(a if a is not None else dtype)))
        else:
            arr = np.zeros(0, np.float32) if a is None else np.asarray(a)
            as_dtype(arr.dtype)  # TensorRT refuses the types it has no DataType for
            if dtype is not None:
                arr = arr.astype(to_numpy(as_dtype(dtype)))
        self._array = arr

    @property
    def dtype(self) -> DataType:
        return as_dtype(self._array.dtype)

    @property
    def size(self) -> int:
        return int(self._array.size)

    @property
    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def numpy(self) -> np.ndarray:
        return self._array

    def __len__(self) -> int:
        return self.size


def _array(w, what: str) -> np.ndarray:
    arr = w.numpy() if hasattr(w, "numpy") else np.asarray(w)
    try:
        as_dtype(arr.dtype)
    except ModelError as e:
        raise ModelError(f"{what}: weights of {e}") from None
    return arr


@checked_arguments
class Network(NetworkBase):
    """A network definition. Layers are added with ``add_*``; `to_graph` builds the IR."""

    def __init__(self, flags: int = 0, builder=None):
        super().__init__()
        self.name = "network"
        self._flags = int(flags)
        self._builder = builder
        self.loops: list[Loop] = []
        self.conditionals: list[IfConditional] = []
        self._debug: set[int] = set()
        self._refittable: set[str] = set()
        self.profiles: list = []  # set when a builder call checks them against the network
        self.error_recorder = None
        self._built = True

    def _layer(self, cls, *inputs: Tensor, args=()) -> Layer:
        for i, t in enumerate(inputs):
            self.own(t, f"{cls.__name__} input {i}")
        return self.add_layer(cls(self, *inputs, *args))

    def strongly_typed(self) -> bool:
        return bool(self._flags >> int(NetworkDefinitionCreationFlag.STRONGLY_TYPED) & 1)

    def log(self, severity, msg: str) -> None:
        logger = getattr(self._builder, "logger", None)
        if logger is not None:
            logger.log(severity, msg)

    # -- network-wide surface -------------------------------------------------------------
    @property
    def flags(self) -> int:
        return self._flags

    def get_flag(self, flag) -> bool:
        return bool(self._flags >> int(flag) & 1)

    @property
    def builder(self):
        return self._builder

    @property
    def has_implicit_batch_dimension(self) -> bool:
        return False

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def get_input(self, index: int) -> Tensor | None:
        return self.inputs[index] if 0 <= index < len(self.inputs) else None

    def get_output(self, index: int) -> Tensor | None:
        return self.outputs[index] if 0 <= index < len(self.outputs) else None

    def get_layer(self, index: int) -> Layer | None:
        if not 0 <= index < len(self.layers):
            return None
        return LayerView(self.layers[index])

    def __getitem__(self, index: int) -> Layer:
        if index < 0:
            index += len(self.layers)
        if not 0 <= index < len(self.layers):
            raise IndexError(index)
        return LayerView(self.layers[index])

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self):
        return (LayerView(layer) for layer in self.layers)

    # -- inputs and outputs ---------------------------------------------------------------
    def add_input(self, name: str, dtype, shape) -> Tensor:
        if any(t.name == name for t in self.inputs):
            raise ModelError(f"network input '{name}' is defined twice")
        t = Tensor(self, str(name),
                   input_type=(as_dtype(dtype), checked_dims(shape, f"network input '{name}'")))
        self.inputs.append(t)
        self.touch()
        return t

    def mark_output(self, tensor: Tensor) -> None:
        self.own(tensor, "mark_output")
        if tensor not in self.outputs:
            self.outputs.append(tensor)
        self.touch()

    def unmark_output(self, tensor: Tensor) -> None:
        self.outputs = [t for t in self.outputs if t is not tensor]
        self.touch()

    def mark_output_for_shapes(self, tensor: Tensor) -> bool:
        self.own(tensor, "mark_output_for_shapes")
        if tensor not in self._shape_outputs:
            self._shape_outputs.append(tensor)
        self.touch()
        return True

    def unmark_output_for_shapes(self, tensor: Tensor) -> bool:
        self._shape_outputs = [t for t in self._shape_outputs if t is not tensor]
        self.touch()
        return True

    def remove_tensor(self, tensor: Tensor) -> None:
        self.unmark_output(tensor)

    def mark_debug(self, tensor: Tensor) -> bool:
        self._debug.add(id(tensor))
        return True

    def unmark_debug(self, tensor: Tensor) -> bool:
        self._debug.discard(id(tensor))
        return True

    def is_debug_tensor(self, tensor: Tensor) -> bool:
        return id(tensor) in self._debug

    def mark_weights_refittable(self, name: str) -> bool:
        self._refittable.add(name)
        return True

    def unmark_weights_refittable(self, name: str) -> bool:
        self._refittable.discard(name)
        return True

    def are_weights_marked_refittable(self, name: str) -> bool:
        return name in self._refittable

    def set_weights_name(self, weights, name: str) -> bool:
        return True

    # -- layers ---------------------------------------------------------------------------
    def add_constant(self, shape, weights) -> L.ConstantLayer:
        return self.add_layer(L.ConstantLayer(self, shape, weights))

    def add_elementwise(self, input1: Tensor, input2: Tensor, op):
        return self._layer(L.ElementWiseLayer, input1, input2, args=(op,))

    def add_activation(self, input: Tensor, type):  # noqa: A002
        return self._layer(L.ActivationLayer, input, args=(type,))

    def add_unary(self, input: Tensor, op):  # noqa: A002
        return self._layer(L.UnaryLayer, input, args=(op,))

    def add_matrix_multiply(self, input0: Tensor, op0, input1: Tensor, op1):
        self.own(input0, "add_matrix_multiply input 0")
        self.own(input1, "add_matrix_multiply input 1")
        return self.add_layer(L.MatrixMultiplyLayer(self, input0, op0, input1, op1))

    def add_reduce(self, input: Tensor, op, axes: int, keep_dims: bool):  # noqa: A002
        if check_enum(ReduceOperation, op, "add_reduce") is ReduceOperation.NONE:
            raise ModelError("add_reduce: ReduceOperation.NONE is no reduction")
        return self._layer(L.ReduceLayer, input, args=(op, axes, keep_dims))

    def add_shuffle(self, input: Tensor):  # noqa: A002
        return self._layer(LS.ShuffleLayer, input)

    def add_concatenation(self, inputs: list[Tensor]):
        inputs = list(inputs)
        for i, t in enumerate(inputs):
            self.own(t, f"add_concatenation input {i}")
        return self.add_layer(LS.ConcatenationLayer(self, inputs))

    def add_slice(self, input: Tensor, start, shape, stride):  # noqa: A002
        return self._layer(LS.SliceLayer, input, args=(start, shape, stride))

    def add_gather(self, input: Tensor, indices: Tensor, axis: int):  # noqa: A002
        return self._layer(LS.GatherLayer, input, indices, args=(axis,))

    def add_gather_v2(self, input: Tensor, indices: Tensor, mode):  # noqa: A002
        return self._layer(LS.GatherLayer, input, indices,
                           args=(0, check_enum(GatherMode, mode, "add_gather_v2")))

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

    def add_fill(self, shape, op, output_type=DataType.FLOAT):
        return self.add_layer(LT.FillLayer(self, shape, op, output_type))

    def add_padding_nd(self, input: Tensor, pre_padding, post_padding):  # noqa: A002
        return self._layer(LT.PaddingLayer, input, args=(pre_padding, post_padding))

    def add_resize(self, input: Tensor):  # noqa: A002
        return self._layer(LT.ResizeLayer, input)

    def add_grid_sample(self, input: Tensor, grid: Tensor):  # noqa: A002
        return self._layer(LT.GridSampleLayer, input, grid)

    def add_assertion(self, condition: Tensor, message: str):
        return self._layer(LT.AssertionLayer, condition, args=(message,))

    def add_einsum(self, inputs: list[Tensor], equation: str):
        inputs = list(inputs)
        for i, t in enumerate(inputs):
            self.own(t, f"add_einsum input {i}")
        return self.add_layer(LT.EinsumLayer(self, inputs, equation))

    def add_scatter(self, data: Tensor, indices: Tensor, updates: Tensor, mode):
        return self._layer(LI.ScatterLayer, data, indices, updates, args=(mode,))

    def add_one_hot(self, indices: Tensor, values: Tensor, depth: Tensor, axis: int):
        return self._layer(LI.OneHotLayer, indices, values, depth, args=(axis,))

    def add_topk(self, input: Tensor, op, k: int, axes: int,  # noqa: A002
                 indices_type=DataType.INT32):
        return self._layer(LI.TopKLayer, input,
                           args=(check_enum(TopKOperation, op, "add_topk"), k, axes,
                                 indices_type))

    def add_non_zero(self, input: Tensor, indices_type=DataType.INT32):  # noqa: A002
        return self._layer(LI.NonZeroLayer, input, args=(indices_type,))

    def add_reverse_sequence(self, input: Tensor, sequence_lens: Tensor):  # noqa: A002
        return self._layer(LI.ReverseSequenceLayer, input, sequence_lens)

    def add_cumulative(self, input: Tensor, axis: Tensor, op, exclusive: bool,  # noqa: A002
                       reverse: bool):
        return self._layer(LI.CumulativeLayer, input, axis, args=(op, exclusive, reverse))

    def add_squeeze(self, input: Tensor, axes: Tensor):  # noqa: A002
        return self._layer(LI.SqueezeLayer, input, axes)

    def add_unsqueeze(self, input: Tensor, axes: Tensor):  # noqa: A002
        return self._layer(LI.UnsqueezeLayer, input, axes)

    def add_scale(self, input: Tensor, mode, shift=None, scale=None, power=None):  # noqa: A002
        self.own(input, "add_scale input")
        mode = check_enum(ScaleMode, mode, "add_scale")
        return self.add_layer(LN.ScaleLayer(self, input, mode, shift, scale, power,
                                       max(len(input.shape) - 3, 0)))

    def add_scale_nd(self, input: Tensor, mode, shift=None, scale=None, power=None,  # noqa: A002
                     channel_axis: int = 0):
        self.own(input, "add_scale_nd input")
        mode = check_enum(ScaleMode, mode, "add_scale_nd")
        return self.add_layer(LN.ScaleLayer(self, input, mode, shift, scale, power, channel_axis))

    def add_normalization(self, input: Tensor, scale: Tensor, bias: Tensor,  # noqa: A002
                          axesMask: int):  # noqa: N803 - TensorRT's keyword
        return self._layer(LN.NormalizationLayer, input, scale, bias, args=(axesMask,))

    def add_normalization_v2(self, input: Tensor, scale: Tensor, bias: Tensor,  # noqa: A002
                             axesMask: int):  # noqa: N803
        return self._layer(LN.NormalizationLayer, input, scale, bias, args=(axesMask, True))

    def add_parametric_relu(self, input: Tensor, slopes: Tensor):  # noqa: A002
        return self._layer(LN.ParametricReLULayer, input, slopes)

    def add_convolution_nd(self, input: Tensor, num_output_maps: int,  # noqa: A002
                           kernel_shape, kernel, bias=None):
        self.own(input, "add_convolution_nd input")
        return self.add_layer(LN.ConvolutionLayer(self, input, num_output_maps, kernel_shape,
                                             kernel, bias))

    def add_deconvolution_nd(self, input: Tensor, num_output_maps: int,  # noqa: A002
                             kernel_shape, kernel, bias=None):
        self.own(input, "add_deconvolution_nd input")
        return self.add_layer(LN.DeconvolutionLayer(self, input, num_output_maps, kernel_shape,
                                               kernel, bias))

    def add_pooling_nd(self, input: Tensor, type, window_size):  # noqa: A002
        return self._layer(LN.PoolingLayer, input, args=(type, window_size))

    def add_lrn(self, input: Tensor, window: int, alpha: float, beta: float,  # noqa: A002
                k: float):
        return self._layer(LN.LRNLayer, input, args=(window, alpha, beta, k))

    def add_quantize(self, input: Tensor, scale: Tensor, output_type=DataType.INT8):  # noqa: A002
        return self._layer(LN.QuantizeLayer, input, scale, args=(output_type,))

    def add_dequantize(self, input: Tensor, scale: Tensor,  # noqa: A002
                       output_type=DataType.FLOAT):
        return self._layer(LN.DequantizeLayer, input, scale, args=(output_type,))

    def add_loop(self) -> Loop:
        loop = Loop(self, len(self.loops))
        self.loops.append(loop)
        return loop

    def add_if_conditional(self) -> IfConditional:
        cond = IfConditional(self, len(self.conditionals))
        self.conditionals.append(cond)
        return cond

    def _no_onnx(self, what: str):
        raise UnsupportedError(f"{what}: TensorRT plugins (and layers with no ONNX meaning) "
                               "are not supported by itergraph's network API")

    def add_plugin_v2(self, *args, **kwargs):
        self._no_onnx("add_plugin_v2")

    def add_plugin_v3(self, *args, **kwargs):
        self._no_onnx("add_plugin_v3")

    def add_plugin(self, *args, **kwargs):
        self._no_onnx("add_plugin")

    # -- building -------------------------------------------------------------------------
    def to_graph(self):
        """Check the network and build its itergraph IR `Graph` (see :mod:`.build`)."""
        return build(self)

    def __repr__(self) -> str:
        return f"<INetworkDefinition {self.name!r}: {len(self.layers)} layers>"


INetworkDefinition = Network

__all__ = ["INetworkDefinition", "Network", "Severity", "Weights"]
