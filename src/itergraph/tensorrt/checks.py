"""Run-time checks with no output of their own, and the network outputs' final form.

A check is an INT64 scalar zero whose computation fails when the check fails (a ``Gather``
at index 1 of a one-element tensor, the node named after the failure, so that the error of
every backend names it). Assertion layers and the optimization profiles (the shape ranges of
the inputs, and the value ranges of shape-tensor inputs) give checks; every network output
then depends on all of them through ``Reshape(out, Shape(out) + sum(checks))``, so that no
output is computed without them. An output whose ``dtype`` was set (``ITensor.dtype = t`` on
a network output) is converted to that type last.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Graph, Value, tensor
from .enums import ONNX_TYPE, DataType, to_ir
from .lower import Emitter
from .shapes import ir_shape

_I64 = DataType.INT64


def failing_check(em: Emitter, bad: Value, message: str) -> Value:
    """A check that fails with `message` when the BOOL scalar `bad` is true."""
    idx = em.node("Cast", [bad], {"to": 7})
    saved, em.prefix = em.prefix, message
    token = em.node("Gather", [em.ints([0]), idx], {"axis": 0})
    em.prefix = saved
    return token


def profile_checks(network, em: Emitter) -> list[Value]:
    """One check per input that an optimization profile bounds: its shape (or, for a
    shape-tensor input, its values) lies in the range of at least one profile."""
    checks = []
    for t in network.inputs:
        ranges = []
        for k, p in enumerate(network.profiles):
            values, shape = p.get_shape_input(t.name), p.get_shape(t.name)
            if values:
                ranges.append((k, "values", values))
            elif shape:
                ranges.append((k, "shape", shape))
        if not ranges:
            continue
        em.prefix = f"{t.name}/profile"
        x = em.value(t)
        fits = None
        for _k, kind, (lo, _opt, hi) in ranges:
            if kind == "shape":
                v = em.node("Shape", [x])
            else:
                v = em.node("Reshape", [em.node("Cast", [x], {"to": 7}), em.ints([-1])])
            inside = em.node("And", [em.node("GreaterOrEqual", [v, em.ints(lo)]),
                                     em.node("LessOrEqual", [v, em.ints(hi)])])
            ok = em.node("Equal", [em.node("ReduceMin", [
                em.node("Cast", [inside], {"to": 7})], {"keepdims": 0}), em.scalar(1, _I64)])
            fits = ok if fits is None else em.node("Or", [fits, ok])
        described = "; ".join(f"profile {k}: {kind} from {tuple(lo)} to {tuple(hi)}"
                              for k, kind, (lo, _o, hi) in ranges)
        checks.append(failing_check(em, em.node("Not", [fits]),
                                    f"input '{t.name}' is outside its optimization profiles "
                                    f"({described})"))
    return checks


def finish_outputs(network, em: Emitter, top: Graph, checks: list[Value]) -> None:
    """Append the network outputs to `top`, each waiting for `checks` and converted to the
    type set on it."""
    total = None
    for c in checks:
        total = c if total is None else em.node("Add", [total, c])
    em.graph, em.prefix = top, "outputs"
    for t in network.outputs:
        v = em.value(t)
        cast = t.out_type is not None and t.out_type != t.compute_dtype
        if (total is None and not cast) or t.is_network_input:
            if t.is_network_input and cast:
                raise UnsupportedError(f"network output '{t.name}' is a network input; its "
                                       "type cannot be changed")
            top.outputs.append(v)
            continue
        name = v.name
        v.name = em.fresh(f"{name}/computed")
        if total is not None:
            shape = em.node("Add", [em.node("Shape", [v]), total])
            v = em.node("Reshape", [v, shape], {"allowzero": 1})
        if cast:
            v = em.node("Cast", [v], {"to": ONNX_TYPE[t.out_type]})
        out = Value(name)
        out.type = tensor(to_ir(t.dtype), ir_shape(t.shape))
        em.add("Identity", [v], [out], name=em.fresh(f"{name}/output", em.node_names),
               graph=top)
        top.outputs.append(out)
