"""Tensors, the layer base class and the network's bookkeeping (TensorRT's ITensor, ILayer).

Every tensor knows its producer (a layer, or ``None`` for a network input). Its `shape` and
`dtype` come from a small static inference that each layer class implements (`_infer`); a
dimension that is not known before run time is ``-1``, as in TensorRT. Results are cached
and recomputed after any edit of the network (``set_input``, attribute changes).
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ...errors import ModelError
from .enums import DataType, LayerType, as_dtype

Shape = tuple[int, ...]


class Tensor:
    """A tensor of the network (TensorRT's ITensor). `name` is settable."""

    def __init__(self, network: NetworkBase, name: str, producer: Layer | None = None,
                 index: int = 0):
        self._network = network
        self.name = name
        self._producer = producer
        self._index = index
        self._input_type: tuple[DataType, Shape] | None = None  # network inputs only
        self._cache: tuple[int, DataType, Shape, Any] | None = None

    # -- TensorRT's ITensor surface -------------------------------------------------------
    @property
    def shape(self) -> Shape:
        return self._info()[1]

    @shape.setter
    def shape(self, dims) -> None:
        if self._input_type is None:
            raise ModelError(f"tensor '{self.name}': only a network input's shape can be set")
        self._input_type = (self._input_type[0], _dims(dims, f"input '{self.name}'"))
        self._network._touch()

    @property
    def dtype(self) -> DataType:
        return self._info()[0]

    @dtype.setter
    def dtype(self, dt) -> None:
        if self._input_type is None:
            raise ModelError(f"tensor '{self.name}': only a network input's dtype can be set")
        self._input_type = (as_dtype(dt), self._input_type[1])
        self._network._touch()

    @property
    def is_network_input(self) -> bool:
        return self._input_type is not None

    @property
    def is_network_output(self) -> bool:
        return any(t is self for t in self._network._outputs)

    @property
    def is_shape_tensor(self) -> bool:
        return False

    # -- internals ------------------------------------------------------------------------
    @property
    def producer(self) -> Layer | None:
        return self._producer

    def _info(self) -> tuple[DataType, Shape, Any]:
        """(dtype, shape, constant value or None), recomputed after network edits."""
        version = self._network._version
        if self._cache is None or self._cache[0] != version:
            if self._input_type is not None:
                dt, shape = self._input_type
                self._cache = (version, dt, shape, None)
            else:
                self._producer._refresh()
        return self._cache[1:]

    def const_value(self) -> np.ndarray | None:
        """The value of this tensor when it is known before run time (constants, shapes...)."""
        return self._info()[2]

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, {self.dtype.name}, {self.shape})"


def _dims(dims, what: str) -> Shape:
    if isinstance(dims, str | bytes):
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
    return out


def checked_arguments(cls):
    """Class decorator: a bad argument to an ``add_*`` method (a `ValueError`, `TypeError` or
    `OverflowError` while converting it: an unknown enum value, an axis that is not an
    integer) becomes a `ModelError` naming the method and the value, as TensorRT refuses it."""

    def wrap(name, fn):
        @functools.wraps(fn)
        def method(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (ValueError, TypeError, OverflowError) as e:
                raise ModelError(f"{name}: bad argument: {e}") from None

        return method

    for name, fn in list(vars(cls).items()):
        if name.startswith("add_") and callable(fn):
            setattr(cls, name, wrap(name, fn))
    return cls


class Layer(ABC):
    """Base of every layer (TensorRT's ILayer).

    Subclasses set `_type`, list their `_inputs` (tensors, or ``None`` for an input not set
    yet), and implement `_infer` -> ``[(dtype, shape, const_or_None) per output]``. Errors
    found by `_infer` are raised when the layer is added, unless `_check_at_creation` is
    False (layers whose attributes are set after creation); then when a shape is read.
    """

    _type: LayerType
    _n_outputs = 1
    _check_at_creation = True  # False: attributes set after creation can make it valid

    def __init__(self, network: NetworkBase, inputs: list[Tensor | None]):
        object.__setattr__(self, "_network", network)
        self._inputs: list[Tensor | None] = list(inputs)
        self._index = len(network._layers)
        self._name = f"(Unnamed Layer* {self._index}) [{self._type.value}]"
        self._outputs = [
            Tensor(network, f"{self._name}_output" + (f"_{i}" if i else ""), self, i)
            for i in range(self._n_outputs)
        ]
        self._refreshing = False

    def __setattr__(self, key: str, value) -> None:
        object.__setattr__(self, key, value)
        if not key.startswith("_"):
            self._network._touch()

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
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    def get_input(self, index: int) -> Tensor | None:
        self._check_index(index, len(self._inputs), "input")
        return self._inputs[index]

    def get_output(self, index: int) -> Tensor:
        self._check_index(index, len(self._outputs), "output")
        return self._outputs[index]

    def set_input(self, index: int, tensor: Tensor) -> None:
        """Replace input `index` (for some layers, set an optional extra input)."""
        limit = self._max_inputs()
        self._check_index(index, limit, "input")
        self._network._own(tensor, f"{self._what()} input {index}")
        while len(self._inputs) <= index:
            self._inputs.append(None)
        self._inputs[index] = tensor
        self._network._touch()

    # -- internals ------------------------------------------------------------------------
    def _max_inputs(self) -> int:
        return len(self._inputs)

    def _check_index(self, index: int, limit: int, what: str) -> None:
        if not isinstance(index, int) or not 0 <= index < limit:
            raise ModelError(f"{self._what()}: no {what} {index} (it has {limit})")

    def _what(self) -> str:
        return f"{self._type.value} layer '{self._name}'"

    def _input(self, i: int) -> Tensor:
        t = self._inputs[i] if i < len(self._inputs) else None
        if t is None:
            raise ModelError(f"{self._what()}: input {i} is not set")
        return t

    def _refresh(self) -> None:
        if self._refreshing:
            raise ModelError(f"{self._what()}: its input depends on its own output (a cycle)")
        self._refreshing = True
        try:
            infos = self._infer()
        except (ValueError, TypeError, OverflowError) as e:  # an attribute set to a bad value
            raise ModelError(f"{self._what()}: {type(e).__name__}: {e}") from None
        finally:
            self._refreshing = False
        version = self._network._version
        for t, (dt, shape, const) in zip(self._outputs, infos):
            t._cache = (version, dt, tuple(shape), const)

    @abstractmethod
    def _infer(self) -> list[tuple[DataType, Shape, Any]]:
        """(dtype, shape, constant value or None) of each output, from the current inputs."""

    def __repr__(self) -> str:
        return f"<{self._type.value} layer {self._name!r}>"


class NetworkBase:
    """What tensors and layers see of the network that holds them: its layers, inputs and
    outputs, and an edit counter (`_version`) that invalidates their cached inference.
    `Network` (:mod:`.network`) adds TensorRT's ``add_*`` API on top.
    """

    def __init__(self):
        self._layers: list[Layer] = []
        self._inputs: list[Tensor] = []
        self._outputs: list[Tensor] = []
        self._version = 0

    def _touch(self) -> None:
        self._version += 1

    def _own(self, t, what: str) -> None:
        if not isinstance(t, Tensor):
            raise ModelError(f"{what}: expected a network tensor, got {type(t).__name__}")
        if t._network is not self:
            raise ModelError(f"{what}: tensor '{t.name}' belongs to another network")

    def _add(self, layer: Layer) -> Layer:
        self._layers.append(layer)
        self._touch()
        try:
            layer._refresh()  # infer now, so that mistakes are reported where they are made
        except ModelError:
            if layer._check_at_creation:
                raise
            # attributes set after creation (axis, reshape_dims...) may still fix it: the
            # error is raised when the output's shape is read, or when the network is built
        return layer
