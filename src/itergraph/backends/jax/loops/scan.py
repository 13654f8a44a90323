"""A loop whose iteration count is known at trace time and that cannot stop early: ``lax.scan``."""

from __future__ import annotations

import numpy as np

from ....ir import Value
from ..context import TraceContext
from .batching import batch
from .body import as_array, as_state, conform, port_results, probe, run_body
from .outputs import check_size, finish_concat, last_outputs, length_of
from .setup import Setup


def lower_scan(tc: TraceContext, st: Setup, n: int) -> list:
    import jax
    import jax.numpy as jnp

    loop, info = st.loop, st.info
    carried_res, concat_res, plain_res = port_results(st)
    wanted = carried_res + concat_res + plain_res
    nc, ny = len(carried_res), len(concat_res)
    init_state = [as_state(x) for x in st.carried0]
    plain_avals = probe(tc, st, plain_res)
    init_lasts = [jnp.zeros(a.shape, a.dtype) for a in plain_avals]
    skip, bound, batched_vals, batched, n_batched = batch(tc, st, n, wanted)
    n_sliced = len(st.stacks)
    xs_all = list(st.stacks) + batched
    tc.note(loop, True, f"lax.scan over {n} iterations" + (
        f"; {n_batched} matrix product(s) that read no carried value computed for all "
        "iterations at once before it" if n_batched else ""))

    def step(carry, xs):
        k, state, lasts, err = carry
        pre = None
        cells = []
        if skip or batched_vals:
            b = dict(bound)
            for v, x in zip(batched_vals, xs[n_sliced:]):
                if isinstance(v, Value):
                    b[v.uid] = x
                else:  # a cell's input projection for this iteration
                    tc.cell_inputs[id(v)] = x
                    cells.append(v)
            pre = (skip, b)
        try:
            vals, berr = run_body(tc, st, k, state, xs[:n_sliced], wanted, pre, carried_at=0)
        finally:
            for c in cells:
                tc.cell_inputs.pop(id(c), None)
        new_state = [conform(loop, f"carried value '{c.param.name}'", v, s)
                     for c, v, s in zip(info.carried, vals[:nc], state)]
        ys = [as_array(v) for v in vals[nc:nc + ny]]
        new_lasts = [conform(loop, "a last value", v, s) for v, s in zip(vals[nc + ny:], lasts)]
        if berr is not None:
            err = jnp.where(err != 0, err, berr)
        return (k + 1, new_state, new_lasts, err), ys

    init = (jnp.zeros((), np.int64), init_state, init_lasts, jnp.zeros((), np.int32))
    (k, state, lasts, err), ys = jax.lax.scan(step, init, xs_all, length=n)
    for i, y in zip(info.concat_idx, ys):  # traced, not yet allocated
        check_size(loop, i, y.shape, y.dtype, f"{n} iterations", n)
    tc.merge(st.scope.frame, err)
    outs = last_outputs(st, state, lasts)
    for i, y in zip(info.concat_idx, ys):
        port = loop.output_ports[i]
        outs[i] = finish_concat(jnp, loop, i, port, y, n, length_of(st, port))
    return outs
