"""What a loop's ports mean, independent of shapes, and conditions known at trace time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....ir import Carried, Concat, Invariant, Loop, Sliced, Value
from ..context import CompileCache, Frame, OpContext, Scope, TraceContext, is_static
from ..table import lookup


@dataclass
class LoopInfo:
    """What does not depend on shapes: which outputs come from where."""

    concat_idx: list[int]
    last_state: dict[int, int]  # output index -> carried port index
    last_direct: dict[int, Value]  # output index -> a value that is the same every iteration
    last_plain: list[int]  # output index -> last iteration's value (carried in the loop)
    carried: list[Carried]
    sliced: list[tuple[int, Sliced]]
    invariant: list[Invariant]
    length_ports: list[Concat] = field(default_factory=list)


def loop_info(cache: CompileCache, loop: Loop) -> LoopInfo:
    """`loop`'s `LoopInfo` (computed once per compilation)."""
    return cache.of("loop_info", loop, lambda: _loop_info(loop))


def _loop_info(loop: Loop) -> LoopInfo:
    ports = loop.output_ports
    carried = loop.carried
    invariant_params = {p.param.uid for p in loop.invariant}
    body_defined = loop.body.defined()
    concat_idx, last_state, last_direct, last_plain = [], {}, {}, []
    for i, p in enumerate(ports):
        if isinstance(p, Concat):
            concat_idx.append(i)
            continue
        c = loop.carried_for_result(p.result)
        r = p.result
        if c is not None:
            last_state[i] = carried.index(c)
        elif r.uid in invariant_params or (r.uid not in body_defined) or (
                r.const is not None and r.producer is None):
            last_direct[i] = r
        else:
            last_plain.append(i)
    info = LoopInfo(concat_idx, last_state, last_direct, last_plain, carried,
                    [(j, p) for j, p in enumerate(loop.input_ports) if isinstance(p, Sliced)],
                    loop.invariant,
                    [p for p in ports if isinstance(p, Concat) and p.length is not None])
    return info


def static_truth(tc: TraceContext, loop: Loop, scope: Scope, value: Value | None,
                 invariants: dict[int, Any]) -> bool | None:
    """The value of a body bool (condition, precondition) when it is the same in every
    iteration and known at trace time, else None. ``None`` value: True (no condition)."""
    if value is None:
        return True
    known: dict[int, Any] = dict(invariants)
    if loop.condition_param is not None:
        known[loop.condition_param.uid] = np.array(True)
    unknown = {v.uid for v in loop.body.inputs if v.uid not in known}

    def get(v):
        if v.uid in known:
            return known[v.uid]
        if v.uid in unknown:
            return None
        try:
            x = scope.get(v)
        except Exception:
            return None
        return x if is_static(x) else None

    for node in tc.cache.needed(loop.body, [value]):
        outs = None
        ins = [None if v is None else get(v) for v in node.inputs]
        rule = lookup(node) if not node.subgraphs() else None
        if rule is not None and rule.fold and all(
                x is not None or v is None for x, v in zip(ins, node.inputs)):
            try:
                r = rule.fn(OpContext(node, np, tc, Frame()), *ins)
                outs = [r] if len(node.outputs) == 1 else list(r)
            except Exception:
                outs = None
        for i, v in enumerate(node.outputs):
            if outs is None:
                unknown.add(v.uid)
            else:
                known[v.uid] = np.asarray(outs[i])
    x = get(value)
    if x is None or x.size != 1:
        return None
    return bool(x.reshape(()))
