"""Work a scan moves out of its body (see `HoistPlan`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....ir import Loop, Value
from ....ir.traits import Trait, has
from ..context import TraceContext, is_static
from ..ops.rnn import cell_input_projection
from .body import piece_avals, run_body
from .info import loop_info
from .setup import Setup

HOIST_MAX_BYTES = 1 << 28


@dataclass
class HoistPlan:
    """Body nodes a scan computes outside its loop (shape-independent, cached per loop).

    `invariant`: nodes reading nothing that changes across iterations (invariant inputs,
    outer values, constants), traced once before the scan. `batched`: matrix products that
    read no carried value (only sliced pieces, the iteration number and invariants), with
    the nodes they need, computed for all iterations at once by one vmapped trace (one large
    product instead of one small product per step). `*_out`: their values the rest reads."""

    invariant: list
    invariant_out: list[Value]
    batched: list
    batched_out: list[Value]
    cells: list = field(default_factory=list)  # LSTM/GRU/RNN nodes: input projection batched


def hoist_plan(tc: TraceContext, loop: Loop, wanted: list[Value]) -> HoistPlan:
    """`loop`'s `HoistPlan` for the body results `wanted` (computed once per compilation)."""
    key = "hoist_plan " + " ".join(str(v.uid) for v in wanted)
    return tc.cache.of(key, loop, lambda: _hoist_plan(tc, loop, wanted))


def _hoist_plan(tc: TraceContext, loop: Loop, wanted: list[Value]) -> HoistPlan:
    needed = tc.cache.needed(loop.body, wanted)
    carried = {c.param.uid for c in loop.carried}
    per_iter = {p.param.uid for _, p in loop_info(tc.cache, loop).sliced}
    if loop.iteration_param is not None:
        per_iter.add(loop.iteration_param.uid)
    varying = set(carried)  # depends on the carried state (or on a nested loop/branch)
    changing = set(carried) | per_iter  # differs between iterations
    invariant = []
    for n in needed:
        reads = {v.uid for v in n.inputs if v is not None}
        for g in n.subgraphs():
            reads.update(v.uid for v in g.captures())
        outs = {v.uid for v in n.outputs}
        if n.subgraphs() or isinstance(n, Loop) or reads & varying:
            varying |= outs
        if n.subgraphs() or isinstance(n, Loop) or reads & changing:
            changing |= outs
        else:
            invariant.append(n)
    inv_ids = {id(n) for n in invariant}
    producer = {v.uid: n for n in needed for v in n.outputs}
    chosen: set[int] = set()
    stack = [n for n in needed if has(n, Trait.MATMUL)
             and id(n) not in inv_ids and n.outputs[0].uid not in varying]
    cells = []
    for n in needed:  # recurrent cells: X @ W^T + Wb reads no state
        ins = list(n.inputs) + [None] * 5
        if (has(n, Trait.CELL) and id(n) not in inv_ids
                and ins[0] is not None and ins[0].uid not in varying and ins[4] is None
                and all(v is None or v.uid not in changing for v in (ins[1], ins[3]))):
            cells.append(n)
            if ins[0].uid in producer:
                stack.append(producer[ins[0].uid])
    while stack:
        n = stack.pop()
        if id(n) in chosen or id(n) in inv_ids:
            continue
        chosen.add(id(n))
        stack.extend(producer[v.uid] for v in n.inputs if v is not None and v.uid in producer)
    batched = [n for n in needed if id(n) in chosen]

    def frontier(nodes, later):
        made = [v for n in nodes for v in n.outputs]
        reads = {v.uid for n in later for v in n.inputs if v is not None}
        reads.update(v.uid for n in later for g in n.subgraphs() for v in g.captures())
        reads.update(v.uid for v in wanted)
        return [v for v in made if v.uid in reads]

    rest = [n for n in needed if id(n) not in inv_ids and id(n) not in chosen]
    return HoistPlan(invariant, frontier(invariant, batched + rest),
                     batched, frontier(batched, rest), cells)


def hoist(tc: TraceContext, st: Setup, n: int, wanted: list[Value]):
    """Compute the hoisted parts of a scan body (see `HoistPlan`) outside the loop. Returns
    (ids of nodes the body skips, values bound in the body, batched frontier values, their
    stacked arrays, count of batched nodes)."""
    import jax
    import jax.numpy as jnp

    hp = hoist_plan(tc, st.loop, wanted)
    skip: set[int] = set()
    bound: dict[int, Any] = {}
    nc = len(st.info.carried)
    if hp.invariant:
        vals, err = run_body(tc, st, None, [None] * nc, [None] * len(st.stacks),
                             hp.invariant_out, only=hp.invariant)
        tc.merge(st.scope.frame, err)
        skip.update(id(x) for x in hp.invariant)
        bound.update((v.uid, x) for v, x in zip(hp.invariant_out, vals))
    if not (hp.batched or hp.cells) or n < 2:
        return skip, bound, [], [], 0
    statics: dict[int, Any] = {}
    traced_vals: list = []  # Values, or cell nodes (their input projection)
    cell_ins = [v for c in hp.cells for v in (c.inputs[0], c.inputs[1],
                                                 c.inputs[3] if len(c.inputs) > 3 else None)]

    def pre(k, pieces):
        wanted_pre = hp.batched_out + [v for v in cell_ins if v is not None]
        vals, err = run_body(tc, st, k, [None] * nc, pieces, wanted_pre,
                             hoisted=(skip, bound), only=hp.batched)
        out = []
        statics.clear()
        traced_vals.clear()
        for v, x in zip(hp.batched_out, vals):
            if is_static(x):
                statics[v.uid] = x
            else:
                traced_vals.append(v)
                out.append(x)
        got = dict(zip([v.uid for v in wanted_pre], vals))
        for j, c in enumerate(hp.cells):
            x, w, b = (None if v is None else got[v.uid] for v in cell_ins[3 * j:3 * j + 3])
            traced_vals.append(c)
            out.append(cell_input_projection(c, x, w, b))
        return out, (err if err is not None else jnp.zeros((), np.int32))

    shapes = jax.eval_shape(pre, jax.ShapeDtypeStruct((), np.int64), piece_avals(st))[0]
    size = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in shapes) * n
    if size > HOIST_MAX_BYTES:
        return skip, bound, [], [], 0
    stacked, err = jax.vmap(pre)(jnp.arange(n, dtype=np.int64), list(st.stacks))
    tc.merge(st.scope.frame, jnp.max(err))
    skip = skip | {id(x) for x in hp.batched}
    bound = {**bound, **statics}
    products = sum(1 for x in hp.batched if has(x, Trait.MATMUL)) + len(hp.cells)
    return skip, bound, list(traced_vals), list(stacked), products
