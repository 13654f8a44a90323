"""Ranks of a loop body's values that follow from element-wise ops alone, for `analysis`.

Some exporters declare body values with ranks they do not have: paddle2onnx declares a
counter ``i = i * 1.0 + 1`` as a scalar where the multiplication by a ``[1]`` constant makes it
``[1]``. Tracing then finds a carried value that changes shape between iterations and runs the
loop on NumPy, which a static analysis reading the declarations would not foresee. This walks
the body once with the carried values at the ranks they start with and propagates ranks
through element-wise ops (`ir.traits`: unary ones keep the rank, broadcasting ones give the
largest) from those and from constants; any other op gives an unknown rank.
"""

from __future__ import annotations

from ....ir import Loop, Value
from ....ir.static_values import static_value
from ....ir.traits import Trait, traits
from ....ir.types import TensorType


def _start_rank(v: Value) -> int | None:
    known = static_value(v)
    if known is not None:
        return known.ndim
    t = v.type
    return t.rank if isinstance(t, TensorType) else None


def result_ranks(loop: Loop) -> dict[int, int]:
    """``{value uid: rank}`` for the body values whose rank element-wise propagation fixes."""
    ranks: dict[int, int] = {}
    for c in loop.carried:
        r = _start_rank(c.value)
        if r is not None:
            ranks[c.param.uid] = r

    def rank(v: Value) -> int | None:
        if v.uid in ranks:
            return ranks[v.uid]
        known = static_value(v)
        return None if known is None else known.ndim

    for n in loop.body.nodes:
        t = traits(n.op_type, n.domain)
        ins = [rank(v) for v in n.inputs if v is not None]
        if not ins or len(n.outputs) != 1:
            continue
        if Trait.UNARY in t and ins[0] is not None:
            ranks[n.outputs[0].uid] = ins[0]
        elif Trait.BROADCAST in t and None not in ins:
            ranks[n.outputs[0].uid] = max(ins)
    return ranks


def changing_ranks(loop: Loop) -> list[tuple[str, int, int]]:
    """``(name, rank at the start, rank of the body's result)`` of each carried value whose
    result, by `result_ranks`, has another rank than the value it starts from while its
    declared type shows none (a declared change is reported from the declarations)."""
    ranks = result_ranks(loop)
    out = []
    for c in loop.carried:
        start, end = _start_rank(c.value), ranks.get(c.result.uid)
        declared = c.result.type.rank if isinstance(c.result.type, TensorType) else None
        if start is not None and end is not None and start != end and declared in (None, start):
            out.append((c.param.name, start, end))
    return out
