"""Batching a scan body's state-independent products over all iterations (see `BatchPlan`).

This is not loop-invariant code motion: the XLA pipeline's IR passes move invariant work out
of loops before tracing (`program._rewritten`). What is left here is per-iteration work that
reads no carried value (the iteration's sliced pieces, its number, invariant values): a
matrix product ``x_t W``, or a recurrent cell's input projection, is computed for every
iteration at once by one vmapped trace (one large product instead of a small one per step),
and the scan body reads iteration k's slice of the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ....ir import Loop, Node, Value
from ....ir.traits import Trait, has
from ..context import TraceContext, is_static
from ..ops.rnn import cell_input_projection
from .body import piece_avals, run_body
from .info import loop_info
from .setup import Setup

BATCH_MAX_BYTES = 1 << 28  # larger batched results are not worth their memory


@dataclass
class BatchPlan:
    """What a scan batches over its iterations (shape-independent, cached per compilation).

    `batched`: matrix products that read no carried value (only sliced pieces, the iteration
    number and loop-invariant values), with the per-iteration nodes they need; the scan body
    skips them and reads `batched_out`, their values the rest of the body reads, from the
    batched results. `cells`: LSTM/GRU/RNN nodes whose input projection ``X W^T + Wb`` reads
    no carried value: it is batched, the cell reads it (`TraceContext.cell_inputs`).
    `traced`: the body nodes the batched trace evaluates, in body order: `batched` and the
    nodes computing the invariant values they read (under vmap these stay unbatched; the
    body keeps computing them too)."""

    batched: list[Node]
    batched_out: list[Value]
    cells: list[Node]
    traced: list[Node]


def batch_plan(tc: TraceContext, loop: Loop, wanted: list[Value]) -> BatchPlan:
    """`loop`'s `BatchPlan` for the body results `wanted` (computed once per compilation)."""
    key = "batch_plan " + " ".join(str(v.uid) for v in wanted)
    return tc.cache.of(key, loop, lambda: _batch_plan(tc, loop, wanted))


def _batch_plan(tc: TraceContext, loop: Loop, wanted: list[Value]) -> BatchPlan:
    needed = tc.cache.needed(loop.body, wanted)
    carried = {c.param.uid for c in loop.carried}
    per_iter = {p.param.uid for _, p in loop_info(tc.cache, loop).sliced}
    if loop.iteration_param is not None:
        per_iter.add(loop.iteration_param.uid)
    varying = set(carried)  # depends on the carried state (or on a nested loop/branch)
    changing = set(carried) | per_iter  # differs between iterations
    invariant: set[int] = set()  # ids of nodes computing the same value in every iteration
    for n in needed:
        reads = {v.uid for v in n.reads()}
        outs = {v.uid for v in n.outputs}
        if n.subgraphs() or reads & varying:
            varying |= outs
        if n.subgraphs() or reads & changing:
            changing |= outs
        else:
            invariant.add(id(n))
    producer = {v.uid: n for n in needed for v in n.outputs}
    stack = [n for n in needed if has(n, Trait.MATMUL)
             and id(n) not in invariant and n.outputs[0].uid not in varying]
    cells = []
    for n in needed:  # recurrent cells: X @ W^T + Wb reads no state
        ins = list(n.inputs) + [None] * 5
        if (has(n, Trait.CELL) and id(n) not in invariant
                and ins[0] is not None and ins[0].uid not in varying and ins[4] is None
                and all(v is None or v.uid not in changing for v in (ins[1], ins[3]))):
            cells.append(n)
            if ins[0].uid in producer:
                stack.append(producer[ins[0].uid])
    for c in cells:  # the invariant weights of the projection
        stack.extend(producer[v.uid] for v in c.inputs[1:4:2] if v is not None
                     and v.uid in producer)
    chosen: set[int] = set()
    support: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in chosen or id(n) in support:
            continue
        (support if id(n) in invariant else chosen).add(id(n))
        stack.extend(producer[v.uid] for v in n.inputs if v is not None and v.uid in producer)
    batched = [n for n in needed if id(n) in chosen]
    rest = [n for n in needed if id(n) not in chosen]
    reads = {v.uid for n in rest for v in n.reads()} | {v.uid for v in wanted}
    batched_out = [v for n in batched for v in n.outputs if v.uid in reads]
    traced = [n for n in needed if id(n) in chosen or id(n) in support]
    return BatchPlan(batched, batched_out, cells, traced)


def batch(tc: TraceContext, st: Setup, n: int, wanted: list[Value]):
    """Compute the batched part of a scan body (see `BatchPlan`) for all `n` iterations.
    Returns (ids of nodes the body skips, static values bound in the body, the batched
    frontier (Values, or cell nodes for their input projection), their stacked arrays,
    count of batched products)."""
    import jax
    import jax.numpy as jnp

    bp = batch_plan(tc, st.loop, wanted)
    if not (bp.batched or bp.cells) or n < 2:
        return set(), {}, [], [], 0
    nc = len(st.info.carried)
    statics: dict[int, Any] = {}
    traced_vals: list = []  # Values, or cell nodes (their input projection)
    cell_ins = [v for c in bp.cells for v in (c.inputs[0], c.inputs[1],
                                                 c.inputs[3] if len(c.inputs) > 3 else None)]

    def pre(k, pieces):
        wanted_pre = bp.batched_out + [v for v in cell_ins if v is not None]
        vals, err = run_body(tc, st, k, [None] * nc, pieces, wanted_pre, only=bp.traced)
        out = []
        statics.clear()
        traced_vals.clear()
        for v, x in zip(bp.batched_out, vals):
            if is_static(x):
                statics[v.uid] = x
            else:
                traced_vals.append(v)
                out.append(x)
        got = dict(zip([v.uid for v in wanted_pre], vals))
        for j, c in enumerate(bp.cells):
            x, w, b = (None if v is None else got[v.uid] for v in cell_ins[3 * j:3 * j + 3])
            traced_vals.append(c)
            out.append(cell_input_projection(c, x, w, b))
        return out, (err if err is not None else jnp.zeros((), np.int32))

    shapes = jax.eval_shape(pre, jax.ShapeDtypeStruct((), np.int64), piece_avals(st))[0]
    size = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in shapes) * n
    if size > BATCH_MAX_BYTES:
        return set(), {}, [], [], 0
    stacked, err = jax.vmap(pre)(jnp.arange(n, dtype=np.int64), list(st.stacks))
    tc.merge(st.scope.frame, jnp.max(err))
    skip = {id(x) for x in bp.batched}
    products = sum(1 for x in bp.batched if has(x, Trait.MATMUL)) + len(bp.cells)
    return skip, statics, list(traced_vals), list(stacked), products
