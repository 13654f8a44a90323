"""Planning a run: which top-level nodes are traced together, and where the graph is split.

`Tail.run` (for the whole graph: `CompiledGraph.run`) looks up a plan by the shapes and
dtypes of the values it receives. The first run for a signature traces the whole (live part
of the) top-level graph into one jitted function. When tracing stops at a top-level node,
the graph is split there:

    [jitted segment] [that node] [rest of the graph, planned the same way]

where "that node" is a `DriverStep` (a top-level loop whose output length is only known at
run time, see `driver`) or a NumPy segment (a node that cannot be lowered, with the
consecutive nodes after it that have no lowering either), run by the NumPy backend. The rest
is planned lazily per signature of the values it receives, since a NumPy node may produce
data-dependent shapes. Small integer results of NumPy segments are treated as known values
(part of the rest's signature), so that shape computations done by NumPy stay static.
Likewise, when a node needs a value at trace time (a reshape target, reduction axes) and
that value is a small input given at run time, the input is *promoted*: plans are then made
per value of it. Values XLA cannot hold (sequences, empty optionals, strings) send the
first node reading them to NumPy.

Values that are known while tracing (constants, shapes and what is computed from them) never
cross a jitted function's boundary: they are recorded at trace time and reused. Constants
larger than `big_constants.BIG_CONSTANT` elements are passed as (cached) device arguments
instead of being embedded in the program, and so is what is computed from them alone (once,
on the host: `big_constants.derived`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import Error
from ...ir import Node
from .context import CannotLower, NeedsDriver
from .driver import DriverStep
from .jit_step import JitStep
from .numpy_step import HOST_STATIC_MAX, NumpyStep
from .records import Record
from .table import lookup


def _key_of(x: Any, token: Any) -> Any:
    if token is not None:
        return token
    shape = getattr(x, "shape", None)
    if shape is None:
        return ("list", len(x)) if isinstance(x, (list, tuple)) else (type(x).__name__,)
    return (shape, x.dtype)


class Plan:
    def __init__(self, steps: list, tail: Tail | None):
        self.steps = steps
        self.tail = tail

    def run(self, env, static, max_it) -> None:
        for s in self.steps:
            s.run(env, static, max_it)
        if self.tail is not None:
            self.tail.run(env, static, max_it)

    def records(self) -> list[Record]:
        out: list[Record] = []
        for s in self.steps:
            out.extend(s.records())
        if self.tail is not None and self.tail.last_plan is not None:
            out.extend(self.tail.last_plan.records())
        return out


class Tail:
    """Runs the top-level nodes from `start` on; one plan per signature of its inputs."""

    def __init__(self, cg, start: int):
        self.cg = cg
        self.start = start
        self.live_in = cg.live_in(start, len(cg.nodes))
        self.plans: dict[tuple, Plan] = {}
        self.last_plan: Plan | None = None
        self.promoted: list[int] = []  # small integer inputs treated as known values

    def run(self, env, static, max_it) -> None:
        for u in self.promoted:
            x = env[u]
            if _promotable(x):
                static[u] = ("value", x.dtype.str, x.shape, x.tobytes())
        if static:
            key = tuple(_key_of(env[u], static.get(u)) for u in self.live_in)
        else:
            try:
                key = tuple([(x.shape, x.dtype) for x in [env[u] for u in self.live_in]])
            except AttributeError:  # a sequence or None from a NumPy segment
                key = tuple(_key_of(env[u], None) for u in self.live_in)
        plan = self.plans.get(key)
        if plan is not None:
            self.last_plan = plan
            plan.run(env, static, max_it)
            return
        n_promoted = len(self.promoted)
        built: list[Plan] = []
        try:
            plan = self._build_and_run(env, static, max_it, built)
        except Error:
            # a run-time error (a loop stopped by max_iterations, an index out of range)
            # raised by a plan already built: keep the plan, so the next call with these
            # shapes does not trace and compile it all again before failing the same way
            if built:
                if len(self.promoted) != n_promoted:
                    key = tuple(_key_of(env[u], static.get(u)) for u in self.live_in)
                self.plans.setdefault(key, built[0])
            raise
        if len(self.promoted) != n_promoted:  # the key now includes the promoted values
            key = tuple(_key_of(env[u], static.get(u)) for u in self.live_in)
        self.plans[key] = plan
        self.last_plan = plan

    def _build_and_run(self, env, static, max_it, built: list | None = None) -> Plan:
        """Build the plan for these inputs while running it; `built` gets the plan as soon as
        all its steps exist, before the steps after the compiled prefix run."""
        cg, i, n = self.cg, self.start, len(self.cg.nodes)
        if i == n:
            return Plan([], None)
        # Values XLA cannot hold (lists, None, strings): the first node reading one runs on
        # NumPy; try to compile everything before it.
        limit, exc = n, None
        untraceable = {u for u in self.live_in if u not in static and not _traceable(env[u])}
        if untraceable:
            limit = next((k for k in range(i, n) if untraceable & set(cg.reads[k])), n)
            if limit < n:
                v = next(v for v in cg.nodes[limit].reads() if v.uid in untraceable)
                exc = CannotLower(cg.nodes[limit], f"it reads '{v.name}', a "
                                  f"{_kind(env[v.uid])}, which XLA cannot hold")
        steps: list = []
        j = limit
        if limit > i:
            trial = JitStep(cg, i, limit, static)
            try:
                trial.run(env, static, max_it)
                steps.append(trial)
            except CannotLower as e:
                top = trial.failed_at
                j = cg.index[id(top)] if top is not None else i
                exc = e
                if e.needs_static and self._promote(cg.nodes[j], env, static, e.values):
                    return self._build_and_run(env, static, max_it, built)
            except NeedsDriver as e:
                j = cg.index[id(e.loop)]
                exc = e
            if not steps and j > i:
                prefix = JitStep(cg, i, j, static)
                prefix.run(env, static, max_it)
                steps.append(prefix)
        if exc is None:
            return Plan(steps, None)
        if isinstance(exc, NeedsDriver):
            special = DriverStep(cg, j, static)
            end = j + 1
        else:
            end = j + 1
            while end < n and not _lowerable(cg.nodes[end]):
                end += 1
            special = NumpyStep(cg, j, end, exc)
        tail = Tail(cg, end) if end < n else None
        plan = Plan([*steps, special], tail)
        if built is not None:
            built.append(plan)
        special.run(env, static, max_it)
        if tail is not None:
            tail.run(env, static, max_it)
        return plan

    def _promote(self, node: Node, env, static, values=None) -> bool:
        """Treat small integer inputs given at run time (not computed by XLA) as known
        values: those among `values` (default: `node`'s inputs; an If's condition) and the
        single numbers they are computed from. Plans are then made per value of them. True
        if any was promoted."""
        done = False
        direct = {v.uid for v in (values if values is not None else node.inputs)
                  if v is not None}
        for u in self._sources(list(direct)):
            if u in static or u not in env or u not in self.live_in:
                continue
            # beyond the values themselves, only single numbers (a sample rate, a length):
            # a plan per value of a longer array (token ids) would compile on every call
            if _promotable(env[u]) and (u in direct or env[u].size <= 1):
                self.promoted.append(u)
                x = env[u]
                static[u] = ("value", x.dtype.str, x.shape, x.tobytes())
                done = True
        return done

    def _sources(self, uids: list[int]) -> list[int]:
        """`uids` and the uids of every top-level value they are computed from."""
        cg = self.cg
        todo = list(uids)
        seen: set[int] = set()
        while todo:
            u = todo.pop()
            if u in seen:
                continue
            seen.add(u)
            d = cg.defined_at.get(u)
            if d is not None and d >= self.start:
                todo.extend(cg.reads[d])
        return list(seen)


def _promotable(x) -> bool:
    """Small integer arrays, or single numbers of any type (a Range bound, a Clip limit)."""
    return isinstance(x, np.ndarray) and (
        (x.dtype.kind in "iub" and x.size <= HOST_STATIC_MAX)
        or (x.dtype.kind == "f" and x.size == 1))


def _traceable(x) -> bool:
    """Can `x` be an argument of a jitted function? (Numbers and bfloat16; not strings,
    sequences, empty optionals or the float8/int4 families.)"""
    dt = getattr(x, "dtype", None)
    if dt is None or not hasattr(x, "shape"):
        return False
    dt = np.dtype(dt)
    return dt.kind in "biufc" or dt.name == "bfloat16"


def _kind(x) -> str:
    if x is None:
        return "empty optional"
    if isinstance(x, (list, tuple)):
        return "sequence"
    return f"{x.dtype} tensor"


def _lowerable(node: Node) -> bool:
    return lookup(node) is not None
