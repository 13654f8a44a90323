"""A recurrent loop whose states a per-step mask selects (for `fuse_cells`). Not a pass.

Keras masking (``Masking``, ``Embedding(mask_zero=True)``) runs a cell over every step and
keeps, for each batch entry the step's mask excludes, the states it had; the layer's output
at such a step repeats the previous output. tf2onnx and OpenVINO's TensorFlow frontend write
the loop with one more step input (the mask ``m``, boolean, ``[B, 1]``) and every carried
state selected, as ``Where(m, new, old)`` or ``Cast(m) * new + Cast(Not(m)) * old``::

    for t in range(T):
        h_new, c_new = cell(x[t], h, c)
        h = where(m[t], h_new, h)
        c = where(m[t], c_new, c)
        out = where(m[t], h_new, out)     # the output carry, starting at out0
        y[t] = out                        # or, zero_output_for_mask: where(m[t], h_new, 0)

`match_mask` finds the mask and the selects; `fuse_cells` then matches the cell on the
selected-from values and gives the fused node the mask and ``out0`` (or the fill value, with
``mask_output="fill"``). Since ``out`` and ``h``
move together once an entry's first unmasked step has run, ``y[t]`` is ``h`` after step t for
an entry with an unmasked step among steps 0..t, ``out0`` for the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.graph import Node, Value
from ...ir.loop import Loop
from ...ir.types import DataType
from ..loop_motion import LoopScope
from .glue import StepInput, step_input
from .match import operand_pairs, producer_of, same_value, strip


@dataclass
class MaskMatch:
    """`value`: the mask of one step in the body (boolean), from the step input `source`;
    `new`: per selected carried value (its parameter's uid), the value it takes where the
    mask holds; `selected`: the select itself (the carried result); `outputs`: the selected
    carried values nothing else reads (the layer's output carry)."""

    value: Value
    source: StepInput
    root: Value  # the step input's own body value (sliced piece or Gather output)
    new: dict[int, Value] = field(default_factory=dict)
    selected: dict[int, Value] = field(default_factory=dict)
    outputs: set[int] = field(default_factory=set)
    #: body values (by uid) that are ``where(m, new, fill)`` with `fill` loop-invariant: the
    #: layer's output with Keras's ``zero_output_for_mask`` (new, fill)
    fills: dict[int, tuple[Value, Value]] = field(default_factory=dict)
    nodes: set[int] = field(default_factory=set)  # ids of the select nodes

    def view(self, c):
        """Carried value `c` as the unmasked loop would carry it."""
        new = self.new.get(c.param.uid)
        return c if new is None else _Unmasked(c.param, c.value, new)


@dataclass
class _Unmasked:
    param: Value
    value: Value
    result: Value


def _bool_cast(v: Value | None) -> Value | None:
    """m when `v` is ``Cast(m)`` of a boolean m to a float type."""
    p = producer_of(v, "Cast")
    if p is None or len(p.inputs) != 1:
        return None
    try:
        to = DataType.from_onnx(int(p.attrs.get("to", 0)))
    except (KeyError, TypeError, ValueError):
        return None
    return strip(p.inputs[0]) if to is not None and to.is_floating else None


def _select(res: Value) -> tuple[Value, Value, Value, list[Node]] | None:
    """(m, new, old, nodes) when `res` is ``where(m, new, old)`` in one of the spellings
    above."""
    w = producer_of(res, "Where")
    if w is not None and len(w.inputs) == 3:
        return strip(w.inputs[0]), w.inputs[1], w.inputs[2], [w]
    a = producer_of(res, "Add")
    if a is None or len(a.inputs) != 2:
        return None
    for p, q in operand_pairs(a):
        mp, mq = producer_of(p, "Mul"), producer_of(q, "Mul")
        if mp is None or mq is None:
            continue
        for cm, new in operand_pairs(mp):
            m = _bool_cast(cm)
            if m is None:
                continue
            for cn, old in operand_pairs(mq):
                n = producer_of(_bool_cast(cn), "Not")
                if n is not None and same_value(n.inputs[0], m):
                    return m, new, old, [a, mp, mq, cm.producer, cn.producer, n]
    return None


def _readers(loop: Loop) -> dict[int, list]:
    out: dict[int, list] = {}
    for n in loop.body.nodes:
        for v in n.reads():
            if v is not None:
                out.setdefault(v.uid, []).append(n)
    return out


def match_mask(loop: Loop, scope: LoopScope) -> MaskMatch | None:
    """The mask of `loop` (see the module docstring), or None when no carried value is
    selected by one; the caller checks that the selected values are the cell's states."""
    found: dict[int, tuple] = {}
    for c in loop.carried:
        r = strip(c.result)
        if r is None or r is c.param:
            continue
        sel = _select(r)
        if sel is not None and same_value(sel[2], c.param):
            found[c.param.uid] = (c, r, sel[0], sel[1], sel[3])
    if not found:
        return None
    masks = {strip(m).uid: strip(m) for _, _, m, _, _ in found.values()}
    if len(masks) != 1:
        return None
    m = next(iter(masks.values()))
    # Keras's zero_output_for_mask: an output selected between the new h and an invariant
    fills = {}
    for n in loop.body.nodes:
        for v in n.outputs:
            sel = None if any(v is r for _, r, *_ in found.values()) else _select(v)
            if sel is not None and strip(sel[0]) is m and scope.is_invariant(sel[2]):
                fills[v.uid] = sel
    source = root = None
    roots = ([p.param for p in loop.sliced] if loop.sliced else
             [n.outputs[0] for n in loop.body.nodes if n.op_type == "Gather"
              and len(n.inputs) == 2 and n.inputs[1] is loop.iteration_param])
    for r in roots:
        si = step_input(loop, scope, only=r)
        if si is not None and m.uid in si.values:
            source, root = si, r
            break
    if source is None:
        return None
    match = MaskMatch(m, source, root)
    for uid, (_c, r, _, new, nodes) in found.items():
        match.new[uid], match.selected[uid] = new, r
        match.nodes |= {id(n) for n in nodes}
    for uid, (_, new, fill, nodes) in fills.items():
        match.fills[uid] = (new, fill)
        match.nodes |= {id(n) for n in nodes}
    # the mask (and what glue derives from it) feeds the selects only, and their parts
    # (Cast(m), Not(m), the products) nothing else
    readers = _readers(loop)
    glue = {id(n) for chain in source.chains.values() for n in chain}
    results = {v.uid for v in loop.body_results()}
    selects = set(match.selected[u].uid for u in match.selected) | set(fills)
    inner = [v.uid for n in loop.body.nodes if id(n) in match.nodes for v in n.outputs
             if v.uid not in selects]
    for uid in [*source.values, *inner]:
        if uid in results or any(id(n) not in match.nodes and id(n) not in glue
                                 for n in readers.get(uid, ())):
            return None
    for uid, (c, *_rest) in found.items():
        if all(id(n) in match.nodes for n in readers.get(uid, ())) and \
                not any(v is c.param for v in loop.body_results()):
            match.outputs.add(uid)
    return match
