"""Tensors, the layer base class and the network's bookkeeping (TensorRT's ITensor, ILayer).

Every tensor knows its producer (a layer, or ``None`` for a network input). Its `shape` (a
`Dims`) and `dtype` come from a small static inference that each layer class implements
(`infer`); a dimension that is not known before run time is ``-1``, as in TensorRT. Results
are cached and recomputed after any edit of the network (``set_input``, attribute changes).

Layer semantics shared by every layer (TensorRT's ``ILayer``): ``get_input``/``get_output``
out of range give ``None``; ``num_inputs`` counts the inputs set (a recurrence has one until
``set_input(1, ...)``); ``precision`` is the compute precision (floating inputs are converted
to it) and ``set_output_type(i, t)`` the type output i is computed in (the tensor keeps its
type: TensorRT converts back, "the layer output type is generally not identical to the data
type of the output tensor"); both are refused in a STRONGLY_TYPED network, where TensorRT
logs an error and ignores them.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..errors import AttributeSetError, ModelError
from .dims import MAX_DIMS, Dims
from .enums import (
    DataType,
    LayerType,
    Severity,
    TensorFormat,
    TensorLocation,
    TrtEnum,
    TrtIntEnum,
    as_dtype,
    check_enum,
)

Shape = tuple[int, ...]

# TensorRT's display names of the layer types, as in its default layer names
# ``(Unnamed Layer* 3) [Matrix Multiply]``.
TYPE_NAMES = {
    LayerType.CONVOLUTION: "Convolution", LayerType.CAST: "Cast",
    LayerType.ACTIVATION: "Activation", LayerType.POOLING: "Pooling", LayerType.LRN: "LRN",
    LayerType.SCALE: "Scale", LayerType.SOFTMAX: "Softmax",
    LayerType.DECONVOLUTION: "Deconvolution", LayerType.CONCATENATION: "Concatenation",
    LayerType.ELEMENTWISE: "ElementWise", LayerType.UNARY: "Unary",
    LayerType.PADDING: "Padding", LayerType.SHUFFLE: "Shuffle", LayerType.REDUCE: "Reduce",
    LayerType.TOPK: "TopK", LayerType.GATHER: "Gather",
    LayerType.MATRIX_MULTIPLY: "Matrix Multiply", LayerType.RAGGED_SOFTMAX: "Ragged SoftMax",
    LayerType.CONSTANT: "Constant", LayerType.IDENTITY: "Identity", LayerType.SLICE: "Slice",
    LayerType.SHAPE: "Shape", LayerType.PARAMETRIC_RELU: "Parametric ReLU",
    LayerType.RESIZE: "Resize", LayerType.TRIP_LIMIT: "TripLimit",
    LayerType.RECURRENCE: "Recurrence", LayerType.ITERATOR: "Iterator",
    LayerType.LOOP_OUTPUT: "LoopOutput", LayerType.SELECT: "Select", LayerType.FILL: "Fill",
    LayerType.QUANTIZE: "Quantize", LayerType.DEQUANTIZE: "Dequantize",
    LayerType.CONDITION: "Condition", LayerType.CONDITIONAL_INPUT: "Input",
    LayerType.CONDITIONAL_OUTPUT: "Output", LayerType.SCATTER: "Scatter",
    LayerType.EINSUM: "Einsum", LayerType.ASSERTION: "Assertion", LayerType.ONE_HOT: "OneHot",
    LayerType.NON_ZERO: "NonZero", LayerType.GRID_SAMPLE: "GridSample", LayerType.NMS: "NMS",
    LayerType.REVERSE_SEQUENCE: "ReverseSequence", LayerType.NORMALIZATION: "Normalization",
    LayerType.SQUEEZE: "Squeeze", LayerType.UNSQUEEZE: "Unsqueeze",
    LayerType.CUMULATIVE: "Cumulative",
}

FLOATS = (DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.FP8)


def settable(obj, key: str) -> bool:
    """May `key` be set on `obj` (a built binding object)? Its own attributes and properties
    (a read-only one then refuses), and private names (the emulator's bookkeeping)."""
    return (key.startswith("_") or key in obj.__dict__ or key == "__class__"
            or isinstance(getattr(type(obj), key, None), property))


def set_attribute(obj, key: str, value) -> None:
    """``obj.key = value`` as TensorRT's bindings do it: an attribute the object does not
    have, or a read-only one, is an `AttributeSetError` (an AttributeError) naming the object
    (``obj.what()``)."""
    if obj.__dict__.get("_built") and not settable(obj, key):
        raise AttributeSetError(f"{obj.what()} has no attribute '{key}'")
    try:
        object.__setattr__(obj, key, value)
    except AttributeError as e:  # a property without a setter (TensorRT: read-only)
        raise AttributeSetError(f"{obj.what()}: '{key}' cannot be set ({e})") from None


class FixedAttributes:
    """A binding object whose attributes are fixed once built (``self._built = True`` at the
    end of ``__init__``): see `set_attribute`."""

    def __setattr__(self, key: str, value) -> None:
        set_attribute(self, key, value)

    def what(self) -> str:
        return type(self).__name__


class Tensor(FixedAttributes):
    """A tensor of the network (TensorRT's ITensor). `name` is settable."""

    def __init__(self, network: NetworkBase, name: str, producer: Layer | None = None,
                 index: int = 0, input_type: tuple[DataType, Shape] | None = None):
        self.network = network
        self.name = name
        self._producer = producer
        self._index = index
        self._input_type = input_type  # (dtype, shape) of a network input, else None
        self.out_type: DataType | None = None  # ITensor::setType on a network output
        self._cache: tuple[int, DataType, Shape, Any] | None = None
        self._dim_names: dict[int, str] = {}
        self.allowed_formats = 1 << int(TensorFormat.LINEAR)
        self.location = TensorLocation.DEVICE
        self.broadcast_across_batch = False
        self.dynamic_range = None
        self._built = True

    def what(self) -> str:
        return f"tensor '{self.name}'"

    # -- TensorRT's ITensor surface -------------------------------------------------------
    @property
    def shape(self) -> Dims:
        return Dims(self._info()[1])

    @shape.setter
    def shape(self, dims) -> None:
        if self._input_type is None:
            raise ModelError(f"tensor '{self.name}': only a network input's shape can be set")
        self._input_type = (self._input_type[0], checked_dims(dims, f"input '{self.name}'"))
        self.network.touch()

    @property
    def dtype(self) -> DataType:
        """The type (of the output binding, when set on a network output)."""
        return self.out_type if self.out_type is not None else self._info()[0]

    @dtype.setter
    def dtype(self, dt) -> None:
        dt = as_dtype(dt)
        if self._input_type is not None:
            self._input_type = (dt, self._input_type[1])
        else:
            self.out_type = dt  # the output binding's type, if it is (or becomes) an output
        self.network.touch()

    @property
    def is_network_input(self) -> bool:
        return self._input_type is not None

    @property
    def is_network_output(self) -> bool:
        return any(t is self for t in self.network.outputs)

    @property
    def is_shape_tensor(self) -> bool:
        return id(self) in self.network.shape_tensors()[0]

    @property
    def is_execution_tensor(self) -> bool:
        return id(self) not in self.network.shape_tensors()[1]

    def set_dynamic_range(self, min: float, max: float) -> bool:  # noqa: A002
        self.dynamic_range = (float(min), float(max))
        return True

    def reset_dynamic_range(self) -> None:
        self.dynamic_range = None

    def set_dimension_name(self, index: int, name: str) -> None:
        self._dim_names[int(index)] = str(name)

    def get_dimension_name(self, index: int) -> str | None:
        return self._dim_names.get(int(index))

    # -- internals ------------------------------------------------------------------------
    @property
    def producer(self) -> Layer | None:
        return self._producer

    @property
    def compute_dtype(self) -> DataType:
        """The type layers compute (before a network output's `dtype` override)."""
        return self._info()[0]

    def _info(self) -> tuple[DataType, Shape, Any]:
        """(dtype, shape, constant value or None), recomputed after network edits."""
        version = self.network.version
        if self._cache is None or self._cache[0] != version:
            if self._input_type is not None:
                dt, shape = self._input_type
                self._cache = (version, dt, shape, None)
            else:
                _refresh_upstream(self._producer, version)
        return self._cache[1:]

    def const_value(self) -> np.ndarray | None:
        """The value of this tensor when it is known before run time (constants, shapes...)."""
        return self._info()[2]

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, {self.dtype.name}, {tuple(self.shape)})"


def int_tuple(layer, value, attr: str) -> tuple[int, ...]:
    """`value` (a sequence of integers) as a tuple; ModelError naming `layer` otherwise."""
    try:
        return tuple(int(d) for d in value)
    except (ValueError, TypeError, OverflowError) as e:
        raise ModelError(f"{layer.what()}: {attr}: {type(e).__name__}: {e}") from None


def checked_dims(dims, what: str) -> Shape:
    """`dims` as a tuple of ints (-1: unknown), or a `ModelError` naming `what` (strings,
    non-integers, sizes below -1)."""
    if isinstance(dims, str | bytes) or dims is None:
        raise ModelError(f"{what}: dimensions must be integers, got {dims!r}")
    try:
        out = tuple(int(d) for d in dims)
        exact = all(d == o for d, o in zip(dims, out))
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{what}: dimensions must be integers, got {dims!r}") from None
    if not exact:
        raise ModelError(f"{what}: dimensions must be integers, got {dims!r}")
    if any(d < -1 for d in out):
        raise ModelError(f"{what}: dimensions must be >= -1, got {out}")
    if any(d >= 2**63 for d in out):
        raise ModelError(f"{what}: dimensions must fit in int64, got {out}")
    if len(out) > MAX_DIMS:
        raise ModelError(f"{what}: {len(out)} dimensions; a tensor has at most {MAX_DIMS}")
    return out


def checked_arguments(cls):
    """Class decorator: a bad argument to an ``add_*`` method (a `ValueError`, `TypeError` or
    `OverflowError` while converting it: an unknown enum value, an axis that is not an
    integer) becomes a `ModelError` naming the method and the value, as TensorRT refuses it;
    other `ModelError`s of the call are prefixed with the method's name."""

    def wrap(name, fn):
        @functools.wraps(fn)
        def method(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (ValueError, TypeError, OverflowError) as e:
                raise ModelError(f"{name}: bad argument: {e}") from None
            except ModelError as e:
                if str(e).startswith(name):
                    raise
                raise type(e)(f"{name}: {e}") from None

        return method

    for name, fn in list(vars(cls).items()):
        if name.startswith("add_") and callable(fn):
            setattr(cls, name, wrap(name, fn))
    return cls


#: layer attributes that change no inferred type or shape: setting them leaves the inferred
#: shapes valid (a parser names every layer it adds)
_NOT_SHAPING = frozenset({"name", "metadata", "num_ranks"})


def _stale(t, version: int) -> bool:
    return isinstance(t, Tensor) and t._input_type is None and t._producer is not None and (
        t._cache is None or t._cache[0] != version)


def _refresh_upstream(layer: Layer, version: int) -> None:
    """Refresh `layer`, the stale layers upstream of it first (deepest first): a loop, not a
    recursion, so that a chain of thousands of layers does not exhaust Python's stack.

    Upstream is every input, a recurrence's next value (a back edge its inference does not
    read) included: an upstream layer that cannot be refreshed yet is left stale, and
    refreshed (or its error raised) when a layer that reads it asks for it, as before."""
    order, stack, seen = [], [layer], {id(layer)}
    while stack:
        top = stack[-1]
        pending = [t._producer for t in top.inputs
                   if _stale(t, version) and id(t._producer) not in seen]
        if pending:
            seen.update(id(p) for p in pending)
            stack.extend(pending)
            continue
        order.append(stack.pop())
    for each in order[:-1]:
        try:
            each.refresh()
        except ModelError:
            pass
    layer.refresh()


class Layer(ABC):
    """Base of every layer (TensorRT's ILayer).

    Subclasses set `_type`, list their `inputs` (tensors, or ``None`` for an input not set
    yet), and implement `infer` -> ``[(dtype, shape, const_or_None) per output]``. Errors
    found by `infer` are raised when the layer is added, unless `check_at_creation` is
    False (layers whose attributes are set after creation); then when a shape is read.
    `shape_inputs` lists the input indices TensorRT requires to be shape tensors and
    `polymorphic` whether the data inputs become shape tensors when an output is one.
    """

    _type: LayerType
    _n_outputs = 1
    check_at_creation = True  # False: attributes set after creation can make it valid
    shape_inputs: tuple[int, ...] = ()
    polymorphic = False
    # whether adding this layer can change what other layers infer (a loop's or a
    # conditional's boundary); adding any other layer leaves their cached shapes valid
    changes_others = False
    _added = False  # set by `add_layer`: attribute changes from then on are edits

    def __init__(self, network: NetworkBase, inputs: list[Tensor | None]):
        object.__setattr__(self, "network", network)
        object.__setattr__(self, "_self", self)  # what views of this layer delegate to
        self.inputs: list[Tensor | None] = list(inputs)
        self._index = len(network.layers)
        self._name = f"(Unnamed Layer* {self._index}) [{TYPE_NAMES.get(self._type, '?')}]"
        self.outputs = [
            Tensor(network, f"{self._name}_output" + (f"_{i}" if i else ""), self, i)
            for i in range(self._n_outputs)
        ]
        self._refreshing = False
        self._precision: DataType | None = None
        self.output_types: dict[int, DataType] = {}
        self.metadata = ""
        self.num_ranks = 1

    def __setattr__(self, key: str, value) -> None:
        old = None if key.startswith("_") else self.__dict__.get(key)
        if isinstance(old, TrtEnum | TrtIntEnum):  # an operation, a mode: stays one
            value = check_enum(type(old), value, f"{self.what()}: '{key}'")
        try:
            set_attribute(self, key, value)
        except (TypeError, ValueError, OverflowError) as e:  # a setter's conversion
            raise ModelError(f"{self.what()}: bad value for '{key}': {value!r:.80} "
                             f"({type(e).__name__}: {e})") from None
        if not key.startswith("_") and key not in _NOT_SHAPING and self._added:
            self.network.touch()

    # -- TensorRT's ILayer surface --------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = str(value)

    @property
    def type(self) -> LayerType:
        return self._type

    @property
    def num_inputs(self) -> int:
        n = len(self.inputs)
        while n > 1 and self.inputs[n - 1] is None:
            n -= 1
        return n

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def get_input(self, index: int) -> Tensor | None:
        if isinstance(index, int) and 0 <= index < len(self.inputs):
            return self.inputs[index]
        return None

    def get_output(self, index: int) -> Tensor | None:
        if isinstance(index, int) and 0 <= index < len(self.outputs):
            return self.outputs[index]
        return None

    def set_input(self, index: int, tensor: Tensor) -> None:
        """Replace input `index` (for some layers, set an optional extra input)."""
        limit = self.max_inputs()
        self._check_index(index, limit, "input")
        self.network.own(tensor, f"{self.what()} input {index}")
        while len(self.inputs) <= index:
            self.inputs.append(None)
        self.inputs[index] = tensor
        self.network.touch()

    @property
    def precision(self) -> DataType:
        return DataType.FLOAT if self._precision is None else self._precision

    @precision.setter
    def precision(self, dt) -> None:
        if self._typed("precision"):
            self._precision = as_dtype(dt)
            self.network.touch()

    @property
    def precision_is_set(self) -> bool:
        return self._precision is not None

    def reset_precision(self) -> None:
        self._precision = None
        self.network.touch()

    def set_output_type(self, index: int, dtype) -> None:
        self._check_index(index, len(self.outputs), "output")
        if self._typed("set_output_type"):
            self.output_types[index] = as_dtype(dtype)
            self.network.touch()

    def get_output_type(self, index: int) -> DataType:
        if index in self.output_types:
            return self.output_types[index]
        out = self.get_output(index)
        if out is not None and out.compute_dtype in (DataType.INT32, DataType.INT64, DataType.BOOL):
            return out.compute_dtype
        return DataType.FLOAT

    def output_type_is_set(self, index: int) -> bool:
        return index in self.output_types

    def reset_output_type(self, index: int) -> None:
        self.output_types.pop(index, None)
        self.network.touch()

    # -- internals ------------------------------------------------------------------------
    def _typed(self, what: str) -> bool:
        """False (and an error logged) in a STRONGLY_TYPED network, as TensorRT does."""
        if self.network.strongly_typed():
            self.network.log(Severity.ERROR, f"{self.what()}: {what} is not allowed in a "
                               "strongly typed network; ignored")
            return False
        return True

    def max_inputs(self) -> int:
        return len(self.inputs)

    def _check_index(self, index: int, limit: int, what: str) -> None:
        if not isinstance(index, int) or not 0 <= index < limit:
            raise ModelError(f"{self.what()}: no {what} {index} (it has {limit})")

    def what(self) -> str:
        return f"{TYPE_NAMES.get(self._type, self._type.name)} layer '{self._name}'"

    def required_input(self, i: int) -> Tensor:
        t = self.inputs[i] if i < len(self.inputs) else None
        if t is None:
            raise ModelError(f"{self.what()}: input {i} is not set")
        return t

    def refresh(self) -> None:
        if self._refreshing:
            raise ModelError(f"{self.what()}: its input depends on its own output (a cycle)")
        self._refreshing = True
        try:
            infos = self.infer()
        except (ValueError, TypeError, ArithmeticError) as e:  # an attribute's bad value
            raise ModelError(f"{self.what()}: {type(e).__name__}: {e}") from None
        finally:
            self._refreshing = False
        version = self.network.version
        for i, (_, shape, _) in enumerate(infos):
            if len(shape) > MAX_DIMS:
                raise ModelError(f"{self.what()}: output {i} would have {len(shape)} "
                                 f"dimensions; a tensor has at most {MAX_DIMS}")
        for t, (dt, shape, const) in zip(self.outputs, infos):
            t._cache = (version, dt, tuple(shape), const)

    @abstractmethod
    def infer(self) -> list[tuple[DataType, Shape, Any]]:
        """(dtype, shape, constant value or None) of each output, from the current inputs."""

    def lower(self, em) -> Any:
        """Emit this layer's ONNX-standard IR nodes through `em` (a `lower.Emitter`) and return
        the IR value of its output (a list for several outputs). Every layer class but the
        loop and conditional boundaries defines it; those are emitted with their loop or
        conditional (`loop_emit`, `build`)."""
        raise AssertionError(f"{self.what()} is emitted with its loop or conditional")

    def __repr__(self) -> str:
        return f"<{self.what()}>"


class LayerView(Layer):
    """What ``network[i]`` and ``network.get_layer(i)`` return: the layer seen through its
    ``ILayer`` interface, as TensorRT's bindings return it (``type`` is the `LayerType`). It
    shares the layer's state, so assigning its ``__class__`` to the concrete interface (as
    Polygraphy does) gives that interface."""

    def __init__(self, layer: Layer):  # noqa: D107 - never runs Layer.__init__
        object.__setattr__(self, "__dict__", layer.__dict__)

    @property
    def _type(self) -> LayerType:
        return self._self._type

    def infer(self):
        return self._self.infer()

    def max_inputs(self) -> int:
        return self._self.max_inputs()

    def set_input(self, index: int, tensor: Tensor) -> None:
        self._self.set_input(index, tensor)

    def __eq__(self, other) -> bool:
        return isinstance(other, Layer) and other.__dict__ is self.__dict__

    def __hash__(self) -> int:
        return id(self.__dict__)


LayerView.__name__ = LayerView.__qualname__ = "ILayer"


class NetworkBase(FixedAttributes):
    """What tensors and layers see of the network that holds them: its layers, inputs and
    outputs, and an edit counter (`version`) that invalidates their cached inference.
    `Network` (:mod:`.network`) adds TensorRT's ``add_*`` API on top.
    """

    def __init__(self):
        self.layers: list[Layer] = []
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self._shape_outputs: list[Tensor] = []
        self.version = 0
        self._shape_cache: tuple[tuple[int, int], set, set] | None = None

    def touch(self) -> None:
        self.version += 1

    def what(self) -> str:
        return f"network '{getattr(self, 'name', '')}'"

    def strongly_typed(self) -> bool:
        return False

    def log(self, severity, msg: str) -> None:
        pass

    def own(self, t, what: str) -> None:
        if not isinstance(t, Tensor):
            raise ModelError(f"{what}: expected a network tensor, got {type(t).__name__}")
        if t.network is not self:
            raise ModelError(f"{what}: tensor '{t.name}' belongs to another network")

    def add_layer(self, layer: Layer) -> Layer:
        """Append `layer` and infer its outputs. Only a boundary layer invalidates what the
        layers before it inferred (a new plain layer changes none of them: re-inferring every
        layer upstream at each addition made building a chain quadratic)."""
        self.layers.append(layer)
        object.__setattr__(layer, "_added", True)
        object.__setattr__(layer, "_built", True)  # no new attributes from now on
        if layer.changes_others:
            self.touch()
        try:
            layer.refresh()  # infer now, so that mistakes are reported where they are made
        except ModelError:
            if layer.check_at_creation:
                raise
            # attributes set after creation (axis, reshape_dims...) may still fix it: the
            # error is raised when the output's shape is read, or when the network is built
        return layer

    def shape_tensors(self) -> tuple[set[int], set[int]]:
        """(ids of shape tensors, ids of tensors that are only shape tensors): TensorRT's
        rules: inputs that layers require to be shape tensors and outputs marked for shapes
        are shape tensors; so are the data inputs of a polymorphic layer (elementwise,
        gather, shuffle...) whose output is one."""
        key = (self.version, len(self.layers))
        if self._shape_cache is not None and self._shape_cache[0] == key:
            return self._shape_cache[1], self._shape_cache[2]
        shape: set[int] = set()
        execution: set[int] = {id(t) for t in self.outputs}
        todo = [t for t in self._shape_outputs]
        for layer in self.layers:
            for i, t in enumerate(layer.inputs):
                if t is None:
                    continue
                if i in layer.shape_inputs:
                    todo.append(t)
                elif not layer.polymorphic:
                    execution.add(id(t))
        while todo:
            t = todo.pop()
            if id(t) in shape:
                continue
            shape.add(id(t))
            p = t.producer
            if p is not None and p.polymorphic:
                todo.extend(x for i, x in enumerate(p.inputs)
                            if x is not None and i not in p.shape_inputs)
        # a polymorphic layer's data input is an execution tensor when its output is one
        changed = True
        while changed:
            changed = False
            for layer in self.layers:
                if not layer.polymorphic:
                    continue
                if any(id(o) not in shape or id(o) in execution for o in layer.outputs):
                    for i, x in enumerate(layer.inputs):
                        if x is not None and i not in layer.shape_inputs \
                                and id(x) not in execution:
                            execution.add(id(x))
                            changed = True
        only_shape = {i for i in shape if i not in execution}
        self._shape_cache = (key, shape, only_shape)
        return shape, only_shape
