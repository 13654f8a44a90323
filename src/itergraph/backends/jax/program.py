"""Running a graph on the JAX backend: one jitted function per input signature, split only
where XLA cannot go.

`CompiledGraph.run` looks up a plan by the shapes and dtypes of the feeds. The first run for a
signature traces the whole (live part of the) top-level graph into one jitted function. When
tracing stops at a top-level node, the graph is split there:

    [jitted segment] [that node] [rest of the graph, planned the same way]

where "that node" is a `LoopDriver` (a top-level loop whose output length is only known at
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
larger than `context.BIG_CONSTANT` elements are passed as (cached) device arguments instead
of being embedded in the program. A run-time condition only NumPy handles (`Bailout`)
redoes the whole run on the NumPy backend.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...errors import Error, InputError, IterationLimitError, where
from ...ir import Graph, Loop, Node, Value
from . import config
from .context import (
    BIG_CONSTANT,
    Bailout,
    CannotLower,
    NeedsDriver,
    Scope,
    TraceContext,
    is_static,
    needed_nodes,
)
from .table import load_all, lookup

INT64_MAX = np.iinfo(np.int64).max
HOST_STATIC_MAX = 64  # NumPy-segment results of integer type up to this size count as known


class Record(NamedTuple):
    """One line of `explain`: a model element, whether it compiles, and how or why not."""

    element: str
    compiles: bool
    reason: str


def _collect_big(graph: Graph) -> dict[int, np.ndarray]:
    """Large constants anywhere in the graph: passed to jitted functions as arguments."""
    from ..common.attributes import constant_value

    big: dict[int, np.ndarray] = {}

    def visit(g: Graph) -> None:
        for v in g.initializers:
            c = v.const
            if isinstance(c, np.ndarray) and c.size > BIG_CONSTANT and c.dtype.kind != "O":
                big[v.uid] = c
        for n in g.nodes:
            for v in n.inputs:
                if v is not None and v.producer is None and isinstance(v.const, np.ndarray):
                    c = v.const
                    if c.size > BIG_CONSTANT and c.dtype.kind != "O":
                        big[v.uid] = c
            if n.op_type == "Constant" and n.domain == "" and len(n.outputs) == 1:
                try:
                    c = np.asarray(constant_value(n))
                except Error:
                    c = None
                if c is not None and c.size > BIG_CONSTANT and c.dtype.kind != "O":
                    big[n.outputs[0].uid] = c
            for sg in n.subgraphs():
                visit(sg)

    visit(graph)
    return big


def _big_used(nodes: list[Node], big: dict[int, np.ndarray]) -> list[int]:
    used: list[int] = []
    seen: set[int] = set()

    def add(uid):
        if uid in big and uid not in seen:
            seen.add(uid)
            used.append(uid)

    def visit(ns):
        for n in ns:
            for v in n.reads():
                add(v.uid)
            for v in n.outputs:
                add(v.uid)
            for g in n.subgraphs():
                for v in g.initializers:
                    add(v.uid)
                visit(g.nodes)

    visit(nodes)
    return used


def _host(x: Any) -> Any:
    """A value as the NumPy backend wants it."""
    if x is None or isinstance(x, (np.ndarray, list, tuple)):
        return x
    return np.asarray(x)


def _key_of(x: Any, token: Any) -> Any:
    if token is not None:
        return token
    shape = getattr(x, "shape", None)
    if shape is None:
        return ("list", len(x)) if isinstance(x, (list, tuple)) else (type(x).__name__,)
    return (shape, x.dtype)


def _rewritten(graph: Graph) -> Graph:
    """`graph`, or a rewritten copy when a layout pass applies: `passes.gate_fission`
    (recurrent cells' gate splits become one product per gate: XLA's CPU code reads separate
    arrays much faster than column blocks of one) and `passes.carried_layout` (a tall, thin
    carried state is carried transposed, its long axis last, so XLA vectorises along it).
    The caller's graph is never changed."""
    from ...ir.clone import clone_graph
    from ...passes.pipelines import XLA, run_pipeline

    todo = [p for p in XLA if p.applicable(graph)]
    if not todo:
        return graph
    copy = clone_graph(graph)
    run_pipeline(todo, copy)
    return copy


class CompiledGraph:
    """A graph prepared for the JAX backend. ``run(feeds)`` -> ``{output name: ndarray}``.

    `initial_capacity` is the buffer size (iterations) a run-time-length loop starts with
    before doubling; None (the default) picks it per loop from the declared size of its
    concatenated values (a 256 KiB buffer, 64 to 4096 iterations).
    """

    def __init__(self, graph: Graph, initial_capacity: int | None = None):
        load_all()
        self.graph = graph = _rewritten(graph)
        self.initial_capacity = None if initial_capacity is None else max(1, int(initial_capacity))
        self.nodes = needed_nodes(graph, graph.outputs)
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        self._needed: dict[tuple, list[Node]] = {}
        self.big = _collect_big(graph)
        self._big_dev: dict[int, Any] = {}
        self._max_it_args: dict[Any, Any] = {}
        self._numpy_plans: dict[Any, Any] = {}
        self.bailouts = 0  # runs redone on NumPy (see `context.Bailout`)
        self._reads = [[v.uid for v in n.reads()] for n in self.nodes]
        self._defined_at: dict[int, int] = {}
        for i, n in enumerate(self.nodes):
            for v in n.outputs:
                self._defined_at[v.uid] = i
        self._input_specs = [(v.name, v.uid, v.const) for v in graph.inputs]
        self._input_uids = {v.uid for v in graph.inputs}
        self._out_uids = [v.uid for v in graph.outputs]
        self._root = Tail(self, 0)
        self._analysis: list[Record] | None = None

    # ------------------------------------------------------------------ helpers for steps
    def needed(self, graph: Graph, outputs: list[Value]) -> list[Node]:
        key = (id(graph), tuple(v.uid for v in outputs))
        nodes = self._needed.get(key)
        if nodes is None:
            nodes = self._needed[key] = needed_nodes(graph, outputs)
        return nodes

    def live_in(self, a: int, b: int) -> list[int]:
        """uids read by nodes[a:b] (or graph outputs when b is the end) defined before a."""
        out: list[int] = []
        seen: set[int] = set()
        reads = [u for i in range(a, b) for u in self._reads[i]]
        if b == len(self.nodes):
            reads += self._out_uids
        for u in reads:
            d = self._defined_at.get(u)
            if u not in seen and (d is None or d < a):
                if d is None and u not in self._input_uids:
                    continue  # an initializer: resolved in the trace, never passed
                seen.add(u)
                out.append(u)
        return out

    def live_out(self, a: int, b: int) -> list[int]:
        """uids defined by nodes[a:b] that nodes[b:] or the graph outputs read."""
        later = {u for i in range(b, len(self.nodes)) for u in self._reads[i]}
        later.update(self._out_uids)
        return [v.uid for n in self.nodes[a:b] for v in n.outputs if v.uid in later]

    def max_it_arg(self, max_it: int | None):
        """The iteration limit as a device scalar (cached: no transfer per call)."""
        a = self._max_it_args.get(max_it)
        if a is None:
            a = config.jax().device_put(np.int64(INT64_MAX if max_it is None else max_it))
            if len(self._max_it_args) < 16:
                self._max_it_args[max_it] = a
        return a

    def big_args(self, uids: list[int]) -> tuple:
        jax = config.jax()
        out = []
        for u in uids:
            d = self._big_dev.get(u)
            if d is None:
                d = self._big_dev[u] = jax.device_put(self.big[u])
            out.append(d)
        return tuple(out)

    # ------------------------------------------------------------------ public
    def run(self, feeds: dict[str, Any], max_iterations: int | None = None) -> dict[str, Any]:
        """Run on `feeds` (name -> array); returns name -> NumPy array in output order."""
        env: dict[int, Any] = {}
        for name, uid, const in self._input_specs:
            if name in feeds:
                x = feeds[name]
            elif const is not None:
                x = const
            else:
                raise InputError(f"missing input '{name}'")
            if not (x is None or isinstance(x, (np.ndarray, list, tuple))):
                x = np.asarray(x)  # (sequences stay lists, an empty optional None)
            env[uid] = x
        static: dict[int, Any] = {}
        try:
            with config.x64():
                self._root.run(env, static, max_iterations)
        except Bailout:
            return self._numpy_run(feeds, max_iterations)
        out: dict[str, Any] = {}
        for v in self.graph.outputs:
            x = env.get(v.uid)
            if x is None and v.uid not in env:
                x = v.const
            if x is None or isinstance(x, (list, tuple)):
                out[v.name] = x
            elif isinstance(x, np.ndarray) and v.uid not in static:
                out[v.name] = x  # a feed passed through, or a fresh NumPy result
            else:  # device arrays and values shared with the plan: writable copies
                out[v.name] = np.array(x)
        return out

    def _numpy_run(self, feeds, max_iterations):
        """The whole run on the NumPy backend (after a `Bailout`)."""
        from ..numpy import CompileContext, run_plan

        plan = self._numpy_plans.get(max_iterations)
        if plan is None:
            plan = self._numpy_plans[max_iterations] = CompileContext(max_iterations).compile(
                self.graph)
        self.bailouts += 1
        return run_plan(plan, feeds)

    def explain(self) -> list[Record]:
        """Per element: does it compile, and how (or why not). After a run: what that run's
        plan did; before any run: a static analysis of the graph (shapes not known)."""
        plan = self._root.last_plan
        if plan is None:
            from .analysis import analyze

            return analyze(self.graph)
        return plan.records()

    @property
    def fully_compiled(self) -> bool:
        """True when the static analysis finds nothing that must fall back to NumPy."""
        if self._analysis is None:
            from .analysis import analyze

            self._analysis = analyze(self.graph)
        return all(r.compiles for r in self._analysis)


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

    def __init__(self, cg: CompiledGraph, start: int):
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
        plan = self._build_and_run(env, static, max_it)
        if len(self.promoted) != n_promoted:  # the key now includes the promoted values
            key = tuple(_key_of(env[u], static.get(u)) for u in self.live_in)
        self.plans[key] = plan
        self.last_plan = plan

    def _build_and_run(self, env, static, max_it) -> Plan:
        cg, i, n = self.cg, self.start, len(self.cg.nodes)
        if i == n:
            return Plan([], None)
        # Values XLA cannot hold (lists, None, strings): the first node reading one runs on
        # NumPy; try to compile everything before it.
        limit, exc = n, None
        untraceable = {u for u in self.live_in if u not in static and not _traceable(env[u])}
        if untraceable:
            limit = next((k for k in range(i, n) if untraceable & set(cg._reads[k])), n)
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
                if e.needs_static and self._promote(cg.nodes[j], env, static):
                    return self._build_and_run(env, static, max_it)
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
        special.run(env, static, max_it)
        steps.append(special)
        tail = Tail(cg, end) if end < n else None
        if tail is not None:
            tail.run(env, static, max_it)
        return Plan(steps, tail)

    def _promote(self, node: Node, env, static) -> bool:
        """Treat the small integer inputs of `node` given at run time (not computed by XLA)
        as known values: plans are then made per value of them. True if any was promoted."""
        done = False
        for v in node.inputs:
            if v is None or v.uid in static or v.uid not in env or v.uid not in self.live_in:
                continue
            if _promotable(env[v.uid]):
                self.promoted.append(v.uid)
                x = env[v.uid]
                static[v.uid] = ("value", x.dtype.str, x.shape, x.tobytes())
                done = True
        return done


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
    if isinstance(node, Loop) or (node.op_type == "If" and node.domain in ("", "ai.onnx")):
        return True
    return lookup(node) is not None


def raise_error(messages, code: int, max_it) -> None:
    kind, message = messages[code]
    if kind is IterationLimitError:
        message = message.replace("{max_iterations}", str(max_it))
    raise kind(message)


class JitStep:
    """Top-level nodes [a, b) traced into one jitted function."""

    def __init__(self, cg: CompiledGraph, a: int, b: int, static: dict):
        self.cg, self.a, self.b = cg, a, b
        self.nodes = cg.nodes[a:b]
        ins = cg.live_in(a, b)
        self.static_in = {u for u in ins if u in static}
        self.traced_in = [u for u in ins if u not in static]
        self.out = cg.live_out(a, b) if b < len(cg.nodes) else [
            u for u in dict.fromkeys(cg._out_uids) if cg._defined_at.get(u, -1) >= a]
        self.big_uids = _big_used(self.nodes, cg.big)
        self.failed_at: Node | None = None
        self.static_out: dict[int, np.ndarray] = {}
        self.traced_out: list[int] = []
        self.messages: list = []
        self.notes: list = []
        self._statics: dict[int, Any] = {}
        self._jit = None

    def _fn(self, args, big, max_it):
        import jax.numpy as jnp

        from .trace import eval_nodes

        tc = TraceContext(self.cg, max_it, dict(zip(self.big_uids, big)))
        scope = Scope(tc)
        scope.env.update(self._statics)
        for u, x in zip(self.traced_in, args):
            scope.env[u] = x
        try:
            eval_nodes(tc, self.nodes, scope)
        except (CannotLower, NeedsDriver):
            self.failed_at = tc.top_node
            raise
        static_out, traced_uids, traced = {}, [], []
        for u in self.out:
            x = scope.env[u]
            if is_static(x):
                static_out[u] = x
            else:
                traced_uids.append(u)
                traced.append(x)
        self.static_out, self.traced_out = static_out, traced_uids
        self.messages, self.notes = tc.messages, tc.notes
        err = scope.frame.err if scope.frame.err is not None else jnp.zeros((), np.int32)
        return traced, err

    def run(self, env, static, max_it) -> None:
        if self._jit is None:
            self._statics = {u: env[u] for u in self.static_in}
            self._jit = config.jit(self._fn)
            self._big = self.cg.big_args(self.big_uids)
        outs, err = self._jit([env[u] for u in self.traced_in], self._big,
                              self.cg.max_it_arg(max_it))
        if len(self.messages) > 1:
            code = int(err)
            if code:
                raise_error(self.messages, code, max_it)
        for u, x in zip(self.traced_out, outs):
            env[u] = x
        if self.static_out:
            for u, x in self.static_out.items():
                env[u] = x
                static[u] = ("static", id(x))

    def records(self) -> list[Record]:
        out = []
        noted = {id(e) for e, _, _ in self.notes}
        for n in self.nodes:
            if id(n) not in noted:
                out.append(Record(where(n), True, "compiled with XLA"))
        out.extend(Record(where(e), c, r) for e, c, r in self.notes)
        return out


class NumpyStep:
    """Top-level nodes [a, b) run by the NumPy backend (they cannot be lowered)."""

    def __init__(self, cg: CompiledGraph, a: int, b: int, why: Exception):
        self.cg, self.a, self.b = cg, a, b
        self.nodes = cg.nodes[a:b]
        self.why = why
        outs = cg.live_out(a, b) if b < len(cg.nodes) else [
            u for u in dict.fromkeys(cg._out_uids) if cg._defined_at.get(u, -1) >= a]
        by_uid = {v.uid: v for n in self.nodes for v in n.outputs}
        self.outputs = [by_uid[u] for u in outs]
        self.graph = Graph(f"{cg.graph.name}/numpy", nodes=self.nodes,
                           opset_imports=cg.graph.opset_imports)
        self._plans: dict = {}

    def run(self, env, static, max_it) -> None:
        from ..numpy import CompileContext

        plan = self._plans.get(max_it)
        if plan is None:
            plan = self._plans[max_it] = CompileContext(max_it).compile(
                self.graph, outputs=self.outputs, inputs=[])
        args = [_host(env[v.uid]) for v in plan.captures]
        res = plan.fn(*args)
        for v, x in zip(self.outputs, res):
            env[v.uid] = x
            if (isinstance(x, np.ndarray) and x.size <= HOST_STATIC_MAX
                    and x.dtype.kind in "iub"):
                static[v.uid] = ("value", x.dtype.str, x.shape, x.tobytes())
                env[v.uid] = x

    def records(self) -> list[Record]:
        reason = getattr(self.why, "reason", None) or str(self.why)
        elem = getattr(self.why, "element", None)
        first = self.nodes[0]
        detail = reason if elem is None or elem is first else f"{where(elem)}: {reason}"
        out = [Record(where(first), False, f"runs on NumPy: {detail}")]
        for n in self.nodes[1:]:
            out.append(Record(where(n), False, "runs on NumPy: no JAX lowering for this op"))
        return out


class DriverStep:
    """A top-level loop with run-time output length: `loops.LoopDriver`, or NumPy if that
    cannot be traced."""

    def __init__(self, cg: CompiledGraph, j: int, static: dict):
        from .driver import LoopDriver

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
