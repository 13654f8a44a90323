"""Loops and if-conditionals: TensorRT's ILoop / IIfConditional and their boundary layers.

A loop is defined only by its boundary layers (trip limits, iterators, recurrences, loop
outputs); which other layers run inside it is inferred from data flow when the network is
built (see :mod:`.scopes`). The same holds for the branches of a conditional.

Formal semantics (TensorRT's): a tensor inside a loop is a sequence ``<X_0, X_1, ...>``, one
element per iteration.
- iterator(X, axis, reverse): ``<X[0], X[1], ...>`` subscripting `axis`; reversed, element i
  is ``X[M-1-i]`` with M the COUNT trip limit (the axis length when there is none).
- recurrence(X, Y): ``<X, Y_0, Y_1, ...>`` (Y is set with ``set_input(1, Y)``).
- trip limits: COUNT n runs n iterations; WHILE X runs while X_n is true (checked at the start
  of iteration n, so zero iterations are possible); with both, whichever stops first.
- loop output LAST_VALUE X: ``X_n`` for an n-trip loop (X must be a recurrence output);
  CONCATENATE X: ``X_0 .. X_{n-1}`` stacked on a new axis `axis`, padded to the length set as
  input 1 (a 0-D integer defined outside the loop; a length below n is a run-time error);
  REVERSE: the same in reverse order.
"""

from __future__ import annotations

from ..errors import ModelError
from .core import FixedAttributes, Layer, Tensor, checked_arguments
from .enums import LayerType, LoopOutput, TripLimit, check_enum
from .shapes import merge, norm_axis, same_dims


@checked_arguments
class Loop(FixedAttributes):
    """A loop of the network (TensorRT's ILoop). Create with ``network.add_loop()``."""

    def __init__(self, network, index: int):
        self.network = network
        self._index = index
        self.name = f"(Unnamed Loop* {index})"
        self.trip_limits: list[TripLimitLayer] = []
        self.iterators: list[IteratorLayer] = []
        self.recurrences: list[RecurrenceLayer] = []
        self.outputs: list[LoopOutputLayer] = []
        self._built = True

    def add_trip_limit(self, tensor: Tensor, kind: TripLimit) -> TripLimitLayer:
        layer = TripLimitLayer(self, tensor, kind)
        self.trip_limits.append(layer)
        return self.network.add_layer(layer)

    def add_iterator(self, tensor: Tensor, axis: int = 0, reverse: bool = False) -> IteratorLayer:
        layer = IteratorLayer(self, tensor, axis, reverse)
        self.iterators.append(layer)
        return self.network.add_layer(layer)

    def add_recurrence(self, initial_value: Tensor) -> RecurrenceLayer:
        layer = RecurrenceLayer(self, initial_value)
        self.recurrences.append(layer)
        return self.network.add_layer(layer)

    def add_loop_output(self, tensor: Tensor, kind: LoopOutput, axis: int = 0) -> LoopOutputLayer:
        layer = LoopOutputLayer(self, tensor, kind, axis)
        self.outputs.append(layer)
        return self.network.add_layer(layer)

    def boundary_layers(self) -> list[Layer]:
        return [*self.trip_limits, *self.iterators, *self.recurrences, *self.outputs]

    def static_count(self) -> int | None:
        """The COUNT trip limit when it is known at build time and there is no WHILE."""
        if any(t.kind is TripLimit.WHILE for t in self.trip_limits):
            return None
        for t in self.trip_limits:
            if t.kind is TripLimit.COUNT and t.inputs[0] is not None:
                c = t.inputs[0].const_value()
                if c is not None and c.size == 1:
                    return int(c.reshape(()))
        return None

    def what(self) -> str:
        return f"loop '{self.name}'"

    def __repr__(self) -> str:
        return f"<Loop {self.name!r}>"


class LoopBoundaryLayer(Layer):
    """TensorRT's ILoopBoundaryLayer: a layer of a loop's boundary (`loop` is its loop)."""

    changes_others = True

    def __init__(self, loop: Loop, inputs):
        object.__setattr__(self, "_loop", loop)
        super().__init__(loop.network, inputs)
        for t in inputs:
            if t is not None:
                loop.network.own(t, self.what())

    @property
    def loop(self) -> Loop:
        return self._loop

    def get_loop(self) -> Loop:
        return self._loop

    def what(self) -> str:
        return f"{super().what()} of {self._loop.what()}"


class TripLimitLayer(LoopBoundaryLayer):
    """COUNT: a 0-D integer defined outside the loop. WHILE: a 0-D BOOL."""

    _type = LayerType.TRIP_LIMIT
    _n_outputs = 0
    shape_inputs = (0,)

    def __init__(self, loop, tensor, kind):
        super().__init__(loop, [tensor])
        self._kind = check_enum(TripLimit, kind, self.what())

    @property
    def kind(self) -> TripLimit:
        return self._kind

    def infer(self):
        return []


class IteratorLayer(LoopBoundaryLayer):
    _type = LayerType.ITERATOR
    check_at_creation = False

    def __init__(self, loop, tensor, axis, reverse):
        super().__init__(loop, [tensor])
        self.axis = int(axis)
        self.reverse = bool(reverse)

    def infer(self):
        x = self.required_input(0)
        if not x.shape:
            raise ModelError(f"{self.what()}: cannot iterate over a 0-D tensor")
        axis = norm_axis(self.axis, len(x.shape), self.what())
        return [(x.compute_dtype, x.shape[:axis] + x.shape[axis + 1 :], None)]


class RecurrenceLayer(LoopBoundaryLayer):
    """Output ``<initial, next_0, next_1, ...>``; set the next value with ``set_input(1, t)``."""

    _type = LayerType.RECURRENCE

    def __init__(self, loop, initial):
        super().__init__(loop, [initial, None])

    def infer(self):
        x = self.required_input(0)
        return [(x.compute_dtype, x.shape, None)]


class LoopOutputLayer(LoopBoundaryLayer):
    _type = LayerType.LOOP_OUTPUT
    check_at_creation = False
    shape_inputs = (1,)

    def __init__(self, loop, tensor, kind, axis):
        super().__init__(loop, [tensor])
        self._kind = check_enum(LoopOutput, kind, self.what())
        self.axis = int(axis)

    @property
    def kind(self) -> LoopOutput:
        return self._kind

    def max_inputs(self) -> int:
        return 1 if self._kind is LoopOutput.LAST_VALUE else 2

    def length(self) -> Tensor | None:
        return self.inputs[1] if len(self.inputs) > 1 else None

    def infer(self):
        x = self.required_input(0)
        if self._kind is LoopOutput.LAST_VALUE:
            return [(x.compute_dtype, x.shape, None)]
        axis = norm_axis(self.axis, len(x.shape) + 1, self.what())
        n = -1
        length = self.length()
        if length is not None:
            c = length.const_value()
            if c is not None and c.size == 1:
                n = int(c.reshape(()))
        else:
            count = self._loop.static_count()
            n = -1 if count is None else max(count, 0)
        return [(x.compute_dtype, x.shape[:axis] + (n,) + x.shape[axis:], None)]


@checked_arguments
class IfConditional(FixedAttributes):
    """An if-then-else (TensorRT's IIfConditional). Create with ``network.add_if_conditional()``.

    ``output = true_subgraph(inputs) if condition else false_subgraph(inputs)``: the layers of
    each branch are those between this conditional's input layers and the true (false) input
    of its output layers; layers that use none of its inputs run outside it.
    """

    def __init__(self, network, index: int):
        self.network = network
        self._index = index
        self.name = f"(Unnamed Conditional* {index})"
        self.condition: ConditionLayer | None = None
        self.inputs: list[IfConditionalInputLayer] = []
        self.outputs: list[IfConditionalOutputLayer] = []
        self._built = True

    def set_condition(self, condition: Tensor) -> ConditionLayer:
        if self.condition is not None:
            raise ModelError(f"{self.what()}: the condition is already set")
        layer = ConditionLayer(self, condition)
        self.condition = layer
        return self.network.add_layer(layer)

    def add_input(self, input: Tensor) -> IfConditionalInputLayer:  # noqa: A002 - TRT's name
        layer = IfConditionalInputLayer(self, input)
        self.inputs.append(layer)
        return self.network.add_layer(layer)

    def add_output(self, true_subgraph_output: Tensor, false_subgraph_output: Tensor):
        layer = IfConditionalOutputLayer(self, true_subgraph_output, false_subgraph_output)
        self.outputs.append(layer)
        return self.network.add_layer(layer)

    def constant_condition(self) -> bool | None:
        """The condition's value when it is known at build time, else None."""
        t = self.condition.inputs[0] if self.condition is not None else None
        c = None if t is None else t.const_value()
        return None if c is None or c.size != 1 else bool(c.reshape(()))

    def boundary_layers(self) -> list[Layer]:
        cond = [self.condition] if self.condition is not None else []
        return [*cond, *self.inputs, *self.outputs]

    def what(self) -> str:
        return f"conditional '{self.name}'"

    def __repr__(self) -> str:
        return f"<IfConditional {self.name!r}>"


class IfConditionalBoundaryLayer(Layer):
    """TensorRT's IIfConditionalBoundaryLayer (`conditional` is its conditional)."""

    changes_others = True

    def __init__(self, cond: IfConditional, inputs):
        object.__setattr__(self, "_conditional", cond)
        super().__init__(cond.network, inputs)
        for t in inputs:
            cond.network.own(t, self.what())

    @property
    def conditional(self) -> IfConditional:
        return self._conditional

    def get_conditional(self) -> IfConditional:
        return self._conditional

    def what(self) -> str:
        return f"{super().what()} of {self._conditional.what()}"


class ConditionLayer(IfConditionalBoundaryLayer):
    _type = LayerType.CONDITION
    _n_outputs = 0

    def __init__(self, cond, tensor):
        super().__init__(cond, [tensor])

    def infer(self):
        return []


class IfConditionalInputLayer(IfConditionalBoundaryLayer):
    _type = LayerType.CONDITIONAL_INPUT

    def __init__(self, cond, tensor):
        super().__init__(cond, [tensor])

    def infer(self):
        x = self.required_input(0)
        return [(x.compute_dtype, x.shape, None)]


class IfConditionalOutputLayer(IfConditionalBoundaryLayer):
    _type = LayerType.CONDITIONAL_OUTPUT

    def __init__(self, cond, t, f):
        super().__init__(cond, [t, f])

    def infer(self):
        """TensorRT: the two outputs have one type and one shape, unless the condition is a
        build-time constant (then only the branch taken counts). A dimension known only at
        run time is not compared."""
        t, f = self.required_input(0), self.required_input(1)
        if t.compute_dtype != f.compute_dtype or len(t.shape) != len(f.shape):
            raise ModelError(
                f"{self.what()}: the branch outputs differ in type or rank "
                f"({t.compute_dtype.name}{tuple(t.shape)} vs "
                f"{f.compute_dtype.name}{tuple(f.shape)})"
            )
        taken = self._conditional.constant_condition()
        if taken is not None:
            return [(t.compute_dtype, (t if taken else f).shape, None)]
        if not same_dims(t.shape, f.shape):
            raise ModelError(
                f"{self.what()}: the branch outputs must have the same shape, got "
                f"{tuple(t.shape)} (true branch, {t.name!r}) and {tuple(f.shape)} "
                f"(false branch, {f.name!r})"
            )
        return [(t.compute_dtype, merge(t.shape, f.shape), None)]


__all__ = [
    "ConditionLayer", "IfConditional", "IfConditionalBoundaryLayer", "IfConditionalInputLayer",
    "LoopBoundaryLayer",
    "IfConditionalOutputLayer", "IteratorLayer", "Loop", "LoopOutputLayer", "RecurrenceLayer",
    "TripLimitLayer",
]
