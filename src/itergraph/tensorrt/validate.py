"""Build-time rules for loops, conditionals and network outputs (each a `ModelError`).

Loops (those with at least one loop output; a loop without outputs is dropped):
- at most one COUNT and at most one WHILE trip limit, and at least one trip limit;
- COUNT is a 0-D INT32/INT64 defined outside the loop; WHILE is a 0-D BOOL whose computation
  involves no iterator and no loop output (only recurrences of this loop and outside values);
- iterator inputs and recurrence initial values are defined outside the loop;
- every recurrence has its next value (input 1) set, of the initial value's type and shape;
- LAST_VALUE reads a recurrence output of the same loop; CONCATENATE/REVERSE have a length
  (input 1, TensorRT: "a second input must be provided"), a 0-D integer defined outside.
Conditionals: one 0-D BOOL condition defined outside, inputs defined outside, >= 1 output.
Network outputs are defined outside every loop and conditional. (Cycles and unclean nesting
are reported by :mod:`.scopes`.)
"""

from __future__ import annotations

from ..errors import ModelError, UnsupportedError
from .control import IteratorLayer, LoopOutputLayer, RecurrenceLayer
from .core import Tensor
from .enums import DataType, LoopOutput, TripLimit
from .scopes import Analysis, owner, tensor_desc
from .shapes import same_dims

_INT = (DataType.INT32, DataType.INT64)


def validate(network, an: Analysis) -> None:
    if not network.outputs:
        raise ModelError("the network has no outputs (use network.mark_output)")
    for loop in network.loops:
        if loop.outputs:
            _check_loop(loop, an)
    for cond in network.conditionals:
        if cond.boundary_layers():
            _check_conditional(cond, an)
    for layer in network.layers:
        if not layer.outputs and owner(layer) is None and an.deps_of_inputs(layer):
            raise UnsupportedError(
                f"{layer.what()} is inside a loop or conditional; assertions are supported "
                "outside them only")
    inputs = {t.name: t for t in network.inputs}
    names: dict[str, Tensor] = {}
    for t in network.outputs:
        if t.name in names and names[t.name] is not t:
            raise ModelError(f"two network outputs are named '{t.name}'")
        if inputs.get(t.name, t) is not t:  # an engine binds its inputs and outputs by name
            raise ModelError(f"network output '{t.name}' ({tensor_desc(t)}) has the name of a "
                             "network input")
        names[t.name] = t
        _check_binding_type(t)
        s = an.tensor_scope(t)
        if s is not None:
            raise ModelError(
                f"network output {tensor_desc(t)} is computed inside {s.what()}; a value "
                "leaves a loop only through a loop output layer (a conditional: through an "
                "output layer)"
            )


def _check_binding_type(t: Tensor) -> None:
    """TensorRT 10: the type set on a network output (``ITensor.dtype``) must be compatible
    with its layer's output type (``set_output_type``, else the type computed): the same, or
    both FLOAT or HALF; another conversion needs a cast layer."""
    p = t.producer
    if t.out_type is None or p is None:
        return
    made = p.output_types.get(p.outputs.index(t), t.compute_dtype)
    halfs = (DataType.FLOAT, DataType.HALF)
    if t.out_type != made and not (t.out_type in halfs and made in halfs):
        raise ModelError(
            f"network output '{t.name}': its type is set to {t.out_type.name} but "
            f"{p.what()} makes {made.name}; TensorRT converts an output binding between FLOAT "
            "and HALF only (use a cast layer, or set_output_type)")


def _outside(an: Analysis, s, layer, t: Tensor, role: str) -> None:
    if s in an.deps_of(t):
        raise ModelError(
            f"{layer.what()}: its {role} {tensor_desc(t)} is defined inside {s.what()}; it must "
            "be defined outside (before the loop starts)"
        )


def _scalar(layer, t: Tensor, types, role: str) -> None:
    if t.compute_dtype not in types or t.shape != ():
        want = " or ".join(x.name for x in types)
        raise ModelError(
            f"{layer.what()}: the {role} must be a 0-D {want} tensor, got {tensor_desc(t)} of "
            f"type {t.compute_dtype.name} and shape {tuple(t.shape)}"
        )


def _check_loop(loop, an: Analysis) -> None:
    for kind in TripLimit:
        limits = [t for t in loop.trip_limits if t.kind is kind]
        if len(limits) > 1:
            raise ModelError(
                f"{loop.what()} has {len(limits)} {kind.name} trip limits ("
                + ", ".join(f"'{x.name}'" for x in limits) + "); at most one is allowed"
            )
    if not loop.trip_limits:
        raise ModelError(
            f"{loop.what()} has no trip limit: add loop.add_trip_limit(t, TripLimit.COUNT) or "
            "TripLimit.WHILE"
        )
    for tl in loop.trip_limits:
        t = tl.required_input(0)
        if tl.kind is TripLimit.COUNT:
            _scalar(tl, t, _INT, "COUNT trip limit")
            _outside(an, loop, tl, t, "trip count")
        else:
            _scalar(tl, t, (DataType.BOOL,), "WHILE condition")
            _check_while(loop, an, tl, t)
    for it in loop.iterators:
        _outside(an, loop, it, it.required_input(0), "input")
    for rec in loop.recurrences:
        init = rec.required_input(0)
        _outside(an, loop, rec, init, "initial value")
        nxt = rec.inputs[1]
        if nxt is None:
            raise ModelError(
                f"{rec.what()}: its next value was never set (use set_input(1, tensor))"
            )
        if nxt.compute_dtype != init.compute_dtype or not same_dims(nxt.shape, init.shape):
            raise ModelError(
                f"{rec.what()}: its next value {tensor_desc(nxt)} has type "
                f"{nxt.compute_dtype.name} and "
                f"shape {nxt.shape}, but its initial value {tensor_desc(init)} has type "
                f"{init.compute_dtype.name} and shape {tuple(init.shape)}"
            )
    for out in loop.outputs:
        x = out.required_input(0)
        if out.kind is LoopOutput.LAST_VALUE:
            p = x.producer
            if not (isinstance(p, RecurrenceLayer) and p.loop is loop):
                raise ModelError(
                    f"{out.what()}: LAST_VALUE needs the output of a recurrence layer of "
                    f"{loop.what()}, got {tensor_desc(x)}"
                )
        elif out.length() is None:
            raise ModelError(
                f"{out.what()}: a {out.kind.name} loop output needs its length: a second input "
                "must be provided (set_input(1, length), a 0-D INT32/INT64 tensor defined "
                "outside the loop)"
            )
        else:
            n = out.length()
            _scalar(out, n, _INT, "length (input 1)")
            _outside(an, loop, out, n, "length (input 1)")


def _check_while(loop, an: Analysis, tl, cond: Tensor) -> None:
    """The WHILE condition may depend on this loop's recurrences and on outside values only."""
    seen: set[int] = set()
    stack = [cond]
    while stack:
        t = stack.pop()
        if id(t) in seen or loop not in an.deps_of(t):
            continue  # outside values are constants from the loop's point of view
        seen.add(id(t))
        p = t.producer
        if isinstance(p, RecurrenceLayer) and p.loop is loop:
            continue
        if isinstance(p, (IteratorLayer, LoopOutputLayer)):
            raise ModelError(
                f"{tl.what()}: the WHILE condition {tensor_desc(cond)} is computed from "
                f"{tensor_desc(t)}; a WHILE condition may depend only on recurrences of its "
                "loop and on values defined outside the loop, not on iterators or loop outputs"
            )
        stack.extend(x for x in p.inputs if x is not None)


def _check_conditional(cond, an: Analysis) -> None:
    if cond.condition is None:
        raise ModelError(f"{cond.what()} has no condition (use set_condition)")
    c = cond.condition.required_input(0)
    _scalar(cond.condition, c, (DataType.BOOL,), "condition")
    _outside(an, cond, cond.condition, c, "condition")
    for inp in cond.inputs:
        _outside(an, cond, inp, inp.required_input(0), "input")
    if not cond.outputs:
        raise ModelError(f"{cond.what()} has no output (use add_output)")


__all__ = ["validate"]
