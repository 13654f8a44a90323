"""A loop that can stop early: ``lax.while_loop`` (with output buffers for the driver)."""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, IterationLimitError, where
from ...common.memory import over_limit
from ..context import CannotLower, Frame, TooLarge, TraceContext, is_static
from .body import as_array, as_state, conform, port_results, probe, run_body
from .messages import LIMIT_MESSAGE, beyond_message, too_large_message, zero_trip_message
from .outputs import last_outputs
from .setup import INT64_MAX, Setup


def body_scalar(loop, what: str, x):
    """`x`, a condition the body computes, as a 0-d array: an `ExecutionError` (the model is
    at fault, not the caller's feeds) unless it holds one element."""
    if x.size != 1:
        raise ExecutionError(f"{where(loop)}: {what} must hold one element, got shape "
                             f"{tuple(x.shape)}")
    return x.reshape(())


class WhileParts:
    """cond/body functions of a while loop over the state
    ``(k, cond, carried, lasts, err, bufs, k0)``; `capacity` None: no buffers."""

    def __init__(self, tc: TraceContext, st: Setup, capacity: int | None):
        self.tc, self.st, self.capacity = tc, st, capacity
        carried_res, concat_res, plain_res = port_results(st)
        cond_res = [st.loop.condition_result] if st.loop.condition_result is not None else []
        self.wanted = cond_res + carried_res + concat_res + plain_res
        self.n_cond, self.nc, self.ny = len(cond_res), len(carried_res), len(concat_res)
        lim = st.limit
        self.limit = INT64_MAX if lim is None else lim

    def pieces(self, k):
        import jax

        return [jax.lax.dynamic_index_in_dim(s, k, 0, keepdims=False) if not is_static(s)
                else jax.lax.dynamic_index_in_dim(as_array(s), k, 0, keepdims=False)
                for s in self.st.stacks]

    def running(self, c):
        """Would the loop run iteration k, ignoring the precondition and the buffer?"""
        k, cond = c[0], c[1]
        return cond & (k < self.limit)

    def cond_fn(self, c):

        k = c[0]
        ok = self.running(c)
        if self.tc.max_it is not None:
            ok = ok & (k < self.tc.max_it)
        if self.capacity is not None:
            ok = ok & (k - c[6] < self.capacity)
        if self.st.has_pre:
            ok = ok & self.precondition(c)
        return ok

    def precondition(self, c):
        """The precondition for iteration k on the state `c` (sliced pieces clamped)."""
        import jax.numpy as jnp

        k = c[0]
        vals, _ = run_body(self.tc, self.st, k, c[2], self.pieces(k), [self.st.loop.precondition])
        return jnp.asarray(body_scalar(self.st.loop, "precondition", vals[0])).astype(bool)

    def body_fn(self, c):
        import jax
        import jax.numpy as jnp

        k, cond, state, lasts, err, bufs, k0 = c
        st, loop = self.st, self.st.loop
        vals, berr = run_body(self.tc, st, k, state, self.pieces(k), self.wanted,
                               carried_at=self.n_cond)
        i = 0
        if self.n_cond:
            cnd = body_scalar(loop, "condition", as_array(vals[0]))
            cond = cnd.astype(bool)
            i = 1
        new_state = [conform(loop, f"carried value '{cp.param.name}'", v, s)
                     for cp, v, s in zip(st.info.carried, vals[i:i + self.nc], state)]
        i += self.nc
        ys = vals[i:i + self.ny]
        i += self.ny
        new_lasts = [conform(loop, "a last value", v, s) for v, s in zip(vals[i:], lasts)]
        new_bufs = [jax.lax.dynamic_update_index_in_dim(b, as_array(y, b.dtype), k - k0, 0)
                    for b, y in zip(bufs, ys)]
        for b, y in zip(bufs, ys):
            if tuple(y.shape) != tuple(b.shape[1:]):
                raise CannotLower(loop, "a concatenated output changes shape across iterations")
        if berr is not None:
            err = jnp.where(err != 0, err, berr)
        return (k + 1, cond, new_state, new_lasts, err, new_bufs, k0)

    def initial(self):
        import jax.numpy as jnp

        st = self.st
        _, concat_res, plain_res = port_results(st)
        avals = probe(self.tc, st, concat_res + plain_res)
        ny = len(concat_res)
        if self.capacity is not None:
            self.check_buffer_size(avals[:ny])
        bufs = ([jnp.zeros((self.capacity, *a.shape), a.dtype) for a in avals[:ny]]
                if self.capacity is not None else [])
        lasts = [jnp.zeros(a.shape, a.dtype) for a in avals[ny:]]
        cond0 = jnp.asarray(st.cond0, dtype=bool)
        return (jnp.zeros((), np.int64), cond0, [as_state(x) for x in st.carried0], lasts,
                jnp.zeros((), np.int32), bufs, jnp.zeros((), np.int64))

    def check_buffer_size(self, avals) -> None:
        """`TooLarge` naming the outputs, before anything is allocated, when buffers of
        `capacity` iterations of values shaped as `avals` cannot fit in memory."""
        per = [int(np.prod(a.shape, dtype=object)) * np.dtype(a.dtype).itemsize for a in avals]
        total = self.capacity * sum(per)
        limit = over_limit(total)
        if limit is not None:
            raise TooLarge(too_large_message(self.st.loop, self.st.info.concat_idx, total,
                                             f"buffers for {self.capacity} iterations", limit),
                           self.st.loop)

    def run(self, init):
        import jax

        return jax.lax.while_loop(self.cond_fn, self.body_fn, init)

    def post_checks(self, frame: Frame, final, k_total=None):
        """Record the iteration-limit and zero-trip errors of a finished run."""
        tc, loop = self.tc, self.st.loop
        k = final[0]
        if tc.max_it is not None:
            bad = self.running(final) & (k >= tc.max_it)
            if self.capacity is not None:
                bad = bad & (k - final[6] < self.capacity)
            tc.check(frame, bad, f"{where(loop)}: {LIMIT_MESSAGE}", IterationLimitError)
        st = self.st
        if st.strict_after is not None:
            count, j = st.strict_after
            bad = (k == count) & final[1]
            if st.trip is not None:
                bad = bad & (st.trip > k)
            if st.has_pre:
                bad = bad & self.precondition(final)
            tc.check(frame, bad, beyond_message(loop, j, count, loop.input_ports[j]))
        if self.st.info.last_plain and self.capacity is None:
            i = self.st.info.last_plain[0]
            tc.check(frame, k == 0, zero_trip_message(loop, i))


def lower_while(tc: TraceContext, st: Setup) -> list:
    parts = WhileParts(tc, st, None)
    final = parts.run(parts.initial())
    k, cond, state, lasts, err, _, _ = final
    tc.merge(st.scope.frame, err)
    parts.post_checks(st.scope.frame, final)
    return last_outputs(st, state, lasts)
