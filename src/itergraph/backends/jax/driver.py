"""The Python driver of a top-level loop whose output length is only known at run time.

One jitted *step* per buffer capacity runs the loop as a ``lax.while_loop`` that also stops
when its output buffers are full, and returns the carried state. The driver starts with a
capacity (the known bound rounded up to a power of two when nothing can stop the loop early,
else `CompiledGraph.initial_capacity`, or what an earlier run needed if that is more), and
while a step reports a full buffer it resumes from the returned state with twice the
capacity. No iteration runs twice, and each capacity compiles once. The buffers are then
cut to the iterations run, joined, and finished (reverse, pad, move or merge) on the host,
exactly as the NumPy backend does.

Carried values that grow every iteration (`loops.growing`) are buffers extended by the
step's capacity at the start of each step; the step returns their valid lengths, and the
final values are cut to them on the host.

Under ``max_iterations`` a step's capacity never exceeds the iterations still allowed plus
one (the one that shows the loop would go on: `IterationLimitError`), whatever the trip
count says. Buffers that cannot fit in memory are refused before they are allocated, and an
allocation that fails anyway is an `ExecutionError` naming the loop and its outputs.

Runs may share a driver from several threads: what one run learns as it goes (its state,
buffers, capacities) stays local to it; the compiled step is made once under a lock, and what
runs share afterwards (the traces' error messages, keyed by capacity and by whether the step
is the run's first) does not depend on the run.

`DriverStep` is the plan step (see `planner`) that runs such a loop with a `LoopDriver`, or
on NumPy when the loop cannot be traced.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ...errors import ExecutionError, where
from ...ir import UNBOUNDED_TRIP_COUNT, Loop
from ...ir.types import DataType, TensorType
from ..common import progress
from . import config
from .big_constants import big_used
from .context import CannotLower, Scope, TooLarge, TraceContext, is_static, raise_error
from .loops import growing
from .loops.body import as_state
from .loops.info import loop_info, static_truth
from .loops.messages import limit_before_size, out_of_memory_message, zero_trip_message
from .loops.outputs import empty_stack, finish_concat
from .loops.padded_reads import settled
from .loops.setup import setup
from .loops.untraced_body import defer_body_error
from .loops.while_loop import WhileParts
from .numpy_step import NumpyStep
from .out_of_memory import is_out_of_memory
from .records import Record

INT64_MAX = np.iinfo(np.int64).max
AUTO_MIN, AUTO_MAX, AUTO_BYTES = 64, 4096, 1 << 18  # automatic initial capacity
LEARN_MAX = 1 << 16  # a run of more iterations than this still starts small next time


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n - 1).bit_length())


def _allowed(cap: int, k: int, max_it: int | None) -> int:
    """`cap` lowered to what a step starting at iteration `k` may need under `max_it`: the
    iterations still allowed, and one more to see that the loop would go on."""
    return cap if max_it is None else max(1, min(cap, max_it - k + 1))


class LoopDriver:
    def __init__(self, cg, loop: Loop, j: int, static: dict):
        self.cg, self.loop = cg, loop
        ins = cg.live_in(j, j + 1)
        self.static_in = [u for u in ins if u in static]
        self.traced_in = [u for u in ins if u not in static]
        self.big_uids = big_used([loop], cg.big)
        self._statics: dict[int, Any] = {}
        self._jit = None
        self._lock = threading.Lock()
        self.messages: dict[tuple[int, bool], list] = {}  # (capacity, first step) -> messages
        self.notes: list = []
        self.ran = False
        self.capacities: list[int] = []  # of the last run's steps (tests check the doubling)
        self.learned = 0  # capacity that held a whole earlier run: where later runs start
        self.growth: tuple[bool, str] | None = None  # grown carried values: (rewritten, how)

    # ------------------------------------------------------------------ the step
    def _scope(self, args, big, max_it) -> tuple[TraceContext, Scope]:
        tc = TraceContext(self.cg.cache, max_it, dict(zip(self.big_uids, big)))
        scope = Scope(tc)
        scope.env.update(self._statics)
        for u, x in zip(self.traced_in, args):
            scope.env[u] = x
        return tc, scope

    def _step(self, args, big, state, max_it, cap: int):
        import jax.numpy as jnp

        tc, scope = self._scope(args, big, max_it)
        st = setup(tc, self.loop, scope)
        try:
            grows = growing.plan(tc, st)
        except growing.Refused as e:
            grows, self.growth = [], (False, f"growing carried values not rewritten: {e.reason}")
        if grows:
            try:
                parts, final = self._run_or_none(tc, st, state, cap, grows)
                self.growth = (True, growing.describe(
                    self.loop, grows, "the iterations one driver step may run, doubled with "
                    "the output buffers"))
            except (growing.Refused, CannotLower) as e:
                scope.frame.err = None
                grows, self.growth = [], (False, "growing carried values not rewritten: "
                                                 f"{growing.as_refused(e).reason}")
        if not grows:
            try:
                parts, final = self._run_or_none(tc, st, state, cap, [])
            except CannotLower as e:
                if self.growth is None or self.growth[0]:
                    raise
                raise CannotLower(e.element, f"{e.reason}; {self.growth[1]}") from None
        frame = scope.frame
        parts.post_checks(frame, final)
        tc.merge(frame, final[4])
        k, cond, carried, lasts, err, bufs, k0 = final
        carried = list(carried)
        for g in grows:  # the host and the next step read the buffers with rows in place
            carried[g.index] = settled(carried[g.index], g)
        more = parts.running(final) & (k - k0 >= cap)
        self.messages[(cap, state is None)] = tc.messages
        self.notes = [n for n in tc.notes if n[0] is not self.loop]
        code = frame.err if frame.err is not None else jnp.zeros((), np.int32)
        # per carried value: [axis, valid length] of a grown one, else [-1, -1]
        grown = np.full((len(carried), 2), -1, np.int64)
        for g in grows:
            grown[g.index] = (g.axis, g.l0)
        ds = np.zeros(len(carried), np.int64)
        for g in grows:
            ds[g.index] = g.d
        lens = jnp.asarray(grown[:, 1]) + jnp.asarray(ds) * k
        grown = jnp.stack([jnp.asarray(grown[:, 0]), lens], axis=1) if len(carried) else grown
        return (k, cond, carried, lasts, err), bufs, more, code, grown

    def _run_or_none(self, tc, st, state, cap: int, grows: list):
        """`_run`; or, where the first step cannot trace the body and the loop may run zero
        iterations (`untraced_body`), a step that runs none (the body's error raised at run
        time if the first iteration runs)."""
        try:
            return self._run(tc, st, state, cap, grows)
        except ExecutionError as e:
            if state is not None or st.info.last_plain:
                raise
            defer_body_error(tc, st, e)
        import jax.numpy as jnp

        zero = jnp.zeros((), np.int64)
        final = (zero, jnp.zeros((), bool), [as_state(x) for x in st.carried0], [],
                 jnp.zeros((), np.int32), [], zero)
        return WhileParts(tc, st, cap), final

    def _run(self, tc, st, state, cap: int, grows: list):
        """The while loop of one step from `state` (None: the start); grown carried values
        as buffers for `cap` more iterations."""
        import dataclasses

        if grows:
            old = None if state is None else list(state[2])
            st = dataclasses.replace(st, carried0=growing.buffers(st, grows, cap, old),
                                     grows=grows)
        parts = WhileParts(tc, st, cap)
        if state is None:
            init = parts.initial()
        else:
            k, cond, carried, lasts, err = state
            bufs = parts.initial()[5]
            init = (k, cond, list(st.carried0 if grows else carried), list(lasts), err, bufs, k)
        return parts, parts.run(init)

    # ------------------------------------------------------------------ host side
    def _initial_capacity(self, env, max_it: int | None = None) -> int:
        loop = self.loop
        info = loop_info(self.cg.cache, loop)
        bound = None
        if loop.trip_count is not None:
            t = env.get(loop.trip_count.uid, loop.trip_count.const)
            t = int(np.asarray(t).reshape(()))
            if not (t >= UNBOUNDED_TRIP_COUNT or (t < 0 and loop.negative_trip_count
                                                  == "unbounded")):
                bound = max(t, 0)
        for _, p in info.sliced:
            x = env.get(p.value.uid, p.value.const)
            if x is not None:
                axis = p.axis + x.ndim if p.axis < 0 else p.axis
                c = p.count(x.shape[axis])
                bound = c if bound is None else min(bound, c)
        base = self.cg.initial_capacity or self._auto_capacity()
        if bound is None and max_it is None:
            return base
        tc = TraceContext(self.cg.cache)
        scope = Scope(tc)
        scope.env.update(self._statics)
        statics = {p.param.uid: self._statics[p.value.uid] for p in info.invariant
                   if p.value.uid in self._statics}
        free = (static_truth(tc, loop, scope, loop.condition_result, statics)
                and static_truth(tc, loop, scope, loop.precondition, statics))
        if loop.initial_condition is not None:
            c = env.get(loop.initial_condition.uid, loop.initial_condition.const)
            free = free and c is not None and bool(np.asarray(c).reshape(()))
        if bound is None:
            # nothing stops the loop but max_iterations: one step of that many iterations
            # (and the one that shows it would go on) stops it, with one compile, where
            # doubling from `base` compiled a step per capacity on the way
            return _next_pow2(max_it + 1) if free else base
        if free:
            return _next_pow2(max(bound, 1))
        return min(base, _next_pow2(max(bound, 1)))

    def _auto_capacity(self) -> int:
        """A 256 KiB buffer's worth of iterations (64..4096), from the declared types of the
        concatenated values; 64 when they are not all known, or when carried values grow
        (`loops.growing`: each iteration then reads the whole buffer)."""
        if growing.candidates(self.loop):
            return AUTO_MIN
        total = 0
        for i in loop_info(self.cg.cache, self.loop).concat_idx:
            t = self.loop.output_ports[i].result.type
            if not (isinstance(t, TensorType) and t.dtype is not None and t.shape is not None
                    and all(isinstance(d, int) for d in t.shape)):
                return AUTO_MIN
            total += int(np.prod(t.shape, dtype=np.int64)) * DataType(t.dtype).numpy.itemsize
        if total == 0:
            return AUTO_MAX
        return max(AUTO_MIN, min(AUTO_MAX, _next_pow2(AUTO_BYTES // total + 1) // 2))

    def _compiled(self, env):
        """The jitted step, made by the first run (its static inputs are the same for all)."""
        with self._lock:
            if self._jit is None:
                self._statics = {u: env[u] for u in self.static_in}
                self._jit = config.jit(self._step, static_argnames=("cap",))
            return self._jit

    def run(self, env, static, max_it) -> None:
        jit = self._compiled(env)
        args = [env[u] for u in self.traced_in]
        big = self.cg.big_args(self.big_uids)
        mi = np.int64(INT64_MAX if max_it is None else max_it)
        cap = _allowed(max(self._initial_capacity(env, max_it), self.learned), 0, max_it)
        state = None
        chunks: list[tuple[list, int]] = []
        k_prev = 0
        capacities: list[int] = []
        with self._lock:
            self.capacities = capacities  # filled as the steps run, failed runs included
        while True:
            first = state is None
            try:
                state, bufs, more, code, grown = jit(args, big, state, mi, cap=cap)
                c = int(code)
                if not c and int(state[0]) > k_prev:
                    bufs = [np.asarray(b) for b in bufs]
            except TooLarge as e:
                raise limit_before_size(e, max_it) from None
            except Exception as e:
                if not is_out_of_memory(e):
                    raise
                raise ExecutionError(out_of_memory_message(
                    self.loop, loop_info(self.cg.cache, self.loop).concat_idx,
                    f"buffers for {cap} iterations", e)) from None
            self.ran = True
            capacities.append(cap)
            if c:
                raise_error(self.messages[(cap, first)], c, max_it)
            k = int(state[0])
            if k > k_prev:
                chunks.append((bufs, k - k_prev))
            k_prev = k
            if not bool(more):
                progress.report(self.loop.name or "<unnamed>", k, True)
                break
            progress.report(self.loop.name or "<unnamed>", k)
            cap = _allowed(cap * 2, k, max_it)
        with self._lock:
            self.learned = max(self.learned, min(_next_pow2(max(k_prev, 1)), LEARN_MAX))
        self._outputs(env, state, chunks, k_prev, np.asarray(grown))

    def _outputs(self, env, state, chunks, n: int, grown) -> None:
        loop = self.loop
        info = loop_info(self.cg.cache, loop)
        _, _, carried, lasts, _ = state
        ports = loop.output_ports
        for i, j in info.last_state.items():
            x = np.asarray(carried[j])
            axis, length = (int(a) for a in grown[j])
            if axis >= 0:  # a grown value's buffer, cut to its valid length
                x = np.ascontiguousarray(np.take(x, np.arange(length), axis=axis))
            env[ports[i].output.uid] = x
        inv = {p.param.uid: p.value for p in info.invariant}
        for i, v in info.last_direct.items():
            src = inv.get(v.uid, v)
            x = env.get(src.uid, src.const)
            env[ports[i].output.uid] = x if not hasattr(x, "shape") or is_static(x) \
                else np.asarray(x)
        for i, x in zip(info.last_plain, lasts):
            if n == 0:
                raise ExecutionError(zero_trip_message(loop, i))
            env[ports[i].output.uid] = np.asarray(x)
        for ci, i in enumerate(info.concat_idx):
            port = ports[i]
            parts = [bufs[ci][:cnt] for bufs, cnt in chunks]
            length = None
            if port.length is not None:
                length = env.get(port.length.uid, port.length.const)
                length = np.asarray(length)
            try:
                stacked = np.concatenate(parts) if parts else empty_stack(port)
                env[port.output.uid] = np.ascontiguousarray(
                    finish_concat(np, loop, i, port, stacked, n, length))
            except TooLarge as e:
                raise ExecutionError(str(e)) from None
            except MemoryError as e:
                raise ExecutionError(out_of_memory_message(
                    loop, [i], f"the {n} iterations' values", e)) from None

    def records(self):
        out = [Record(where(self.loop), True,
                      "lax.while_loop with output buffers, driven from Python (buffer capacity "
                      "doubles when full; capacities used in the last run: "
                      f"{self.capacities})")]
        if self.growth is not None:
            out.append(Record(where(self.loop), *self.growth))
        out.extend(Record(where(e), c, r) for e, c, r in self.notes)
        return out


class DriverStep:
    """A top-level loop with run-time output length: `LoopDriver`, or NumPy if that
    cannot be traced."""

    def __init__(self, cg, j: int, static: dict):
        self.cg, self.j = cg, j
        self.loop = cg.nodes[j]
        self.driver = LoopDriver(cg, self.loop, j, static)
        self.fallback: NumpyStep | None = None

    def run(self, env, static, max_it) -> None:
        if self.fallback is not None:
            self.fallback.run(env, static, max_it)
            return
        try:
            self.driver.run(env, static, max_it)
        except CannotLower as e:
            if self.driver.ran:
                raise
            self.fallback = NumpyStep(self.cg, self.j, self.j + 1, e)
            self.fallback.run(env, static, max_it)

    def records(self) -> list[Record]:
        if self.fallback is not None:
            return self.fallback.records()
        return self.driver.records()
