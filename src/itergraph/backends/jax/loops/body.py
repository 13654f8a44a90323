"""Tracing one iteration of a loop body, and the shapes of its values."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....ir import Loop, Value
from ..context import CannotLower, Frame, Scope, TraceContext
from ..trace import eval_graph, eval_nodes
from .setup import Setup


def iteration_value(loop: Loop, k):
    """The iteration number as the body's iteration parameter wants it (`Loop.iteration_form`)."""
    dtype, shape = loop.iteration_form()
    return k.astype(dtype).reshape(shape)


def run_body(tc: TraceContext, st: Setup, k, state, pieces, wanted: list[Value],
             batched: tuple[set[int], dict[int, Any]] | None = None, only=None,
             carried_at: int | None = None):
    """Trace one iteration; returns (values of `wanted`, error code of the body).

    With grown carried values (`st.grows`, see `growing`): `state` holds their buffers, and
    ``wanted[carried_at:]`` starts with the carried results, returned as buffers; any other
    value computed from a buffer raises `growing.Refused`.

    `batched`: (ids of body nodes not to trace, values of their outputs the rest reads).
    `only`: trace just these body nodes (in order) instead of what `wanted` needs."""
    loop = st.loop
    frame = Frame()
    bs = Scope(tc, parent=st.scope, frame=frame)
    if loop.iteration_param is not None and k is not None:
        bs.bind(loop.iteration_param, iteration_value(loop, k))
    if loop.condition_param is not None:
        bs.bind(loop.condition_param, np.array(True))
    for uid, x in st.invariants.items():
        bs.env[uid] = x
    if st.grows:
        from .padded_reads import wrap

        state = wrap(st.grows, state, k)
        tc.padded += 1
    for c, x in zip(st.info.carried, state):
        bs.bind(c.param, x)
    for (_, p), x in zip(st.info.sliced, pieces):
        if x is not None:
            bs.bind(p.param, x)
    tc.depth += 1
    tc.enclosing.append(loop)
    try:
        if batched is None and only is None:
            vals = eval_graph(tc, loop.body, bs, wanted)
        else:
            nodes = only if only is not None else tc.cache.needed(loop.body, wanted)
            if batched is not None:
                skip, bound = batched
                bs.env.update(bound)
                if only is None:
                    nodes = [n for n in nodes if id(n) not in skip]
            eval_nodes(tc, nodes, bs)
            vals = [bs.get(v) for v in wanted]
    finally:
        tc.depth -= 1
        tc.enclosing.pop()
        if st.grows:
            tc.padded -= 1
    if st.grows:
        from .padded_reads import unwrap

        at = -len(wanted) - len(state) if carried_at is None else carried_at
        vals = unwrap(loop, st.grows, vals, at, len(st.info.carried))
    return vals, frame.err


def as_array(x, dtype=None):
    import jax.numpy as jnp

    return jnp.asarray(x) if dtype is None else jnp.asarray(x, dtype=dtype)


def as_state(x):
    """A carried value as the loop's state: an array, or a tuple of arrays (a buffer whose
    rows are reordered lazily and its ancestry table, `padded.Grow.rows`)."""
    return tuple(as_array(y) for y in x) if isinstance(x, tuple) else as_array(x)


def conform(loop: Loop, what: str, x, like):
    """`x` as a traced array of `like`'s shape and dtype (tuples element by element);
    CannotLower when it differs."""
    if isinstance(like, tuple):
        return tuple(conform(loop, what, y, z) for y, z in zip(x, like))
    shape, dtype = tuple(like.shape), np.dtype(like.dtype)
    if tuple(x.shape) != shape or np.dtype(x.dtype) != dtype:
        raise CannotLower(loop, f"{what} changes from {dtype}{list(shape)} to "
                                f"{np.dtype(x.dtype)}{list(x.shape)} across iterations "
                                "(XLA loops need a fixed shape and type)")
    import jax

    return jax.lax.convert_element_type(as_array(x), dtype)


def piece_avals(st: Setup):
    import jax

    return [jax.ShapeDtypeStruct(tuple(s.shape[1:]), s.dtype) for s in st.stacks]


def probe(tc: TraceContext, st: Setup, wanted: list[Value], carried_at: int | None = None):
    """Shapes/dtypes of body values `wanted` (traced once abstractly, results discarded);
    a value held as a grown buffer (`padded_reads.Padded`) gives its buffer's; `carried_at`
    as `run_body` takes it."""
    import jax

    from .padded_reads import Padded

    if not wanted:
        return []
    state_avals = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(tuple(x.shape), x.dtype),
                                         list(st.carried0))
    k_aval = jax.ShapeDtypeStruct((), np.int64)
    notes = len(tc.notes)

    def f(k, state, pieces):
        vals, _ = run_body(tc, st, k, state, pieces, wanted, carried_at=carried_at)
        return [as_state(v.buf if isinstance(v, Padded) else v) for v in vals]

    out = jax.eval_shape(f, k_aval, state_avals, piece_avals(st))
    del tc.notes[notes:]
    return out


def port_results(st: Setup) -> tuple[list[Value], list[Value], list[Value]]:
    info, ports = st.info, st.loop.output_ports
    return ([c.result for c in info.carried], [ports[i].result for i in info.concat_idx],
            [ports[i].result for i in info.last_plain])
