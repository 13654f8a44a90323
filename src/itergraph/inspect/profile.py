"""Where a run spends its time: per loop and per node, weighted by how often each ran.

On NumPy the model runs once on an instrumented plan (`backends.numpy.CompileContext` with a
profiler): every kernel call is timed and counted, and every loop body call counts as one
iteration, so a node in a body nested two deep is counted outer steps x inner steps times.
The plan is compiled without the loop rewrites (`optimize=False`) so each count and time
belongs to a node of the user's file; the numbers include the instrumentation's own cost
(about a microsecond per call).

On JAX, XLA fuses a loop body into one program, so its nodes have no separate times. Each
top-level loop is compiled on its own (a graph holding only that loop, fed the values the
model gives it) and timed after a first, compiling, run; the whole model is timed the same
way. Node counts, which do not depend on the backend, come from an instrumented NumPy run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import Error, InputError
from ..feeds import check_feeds
from ..ir import Graph, Loop, Value
from ..ir.clone import clone_node


@dataclass
class Stat:
    """Calls and seconds of one node (or, for a loop body, iterations and seconds)."""

    path: tuple[str, ...]  # the enclosing loops, outermost first
    name: str
    op: str
    calls: int = 0
    seconds: float = 0.0


@dataclass
class Profile:
    """The result of `profile`: per-loop and per-node statistics of one run."""

    model: str
    backend: str
    seconds: float  # the whole run
    loops: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)
    nodes: list[Stat] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def node(self, name: str) -> Stat:
        """The statistics of the node called `name` (qualified ``outer/inner/name`` or bare)."""
        hits = [s for s in self.nodes if "/".join((*s.path, s.name)) == name or s.name == name]
        if len(hits) != 1:
            raise InputError(f"no single node '{name}' in the profile ({len(hits)} match)")
        return hits[0]

    def text(self) -> str:
        """The two tables, loops then nodes (most time first)."""
        ms = 1e3
        out = [f"profile of {self.model} on {self.backend}: {self.seconds * ms:.3f} ms per run"]
        out.append("")
        out.append(f"{'loop':<40} {'runs':>8} {'steps':>10} {'total ms':>11} "
                   f"{'ms/run':>10} {'us/step':>10}")
        for path, s in self.loops.items():
            steps = s["steps"]
            per_step = f"{s['seconds'] * 1e6 / steps:10.2f}" if steps else f"{'-':>10}"
            out.append(f"{'/'.join(path):<40} {s['runs']:>8} {steps:>10} "
                       f"{s['seconds'] * ms:>11.3f} "
                       f"{s['seconds'] * ms / max(s['runs'], 1):>10.4f} {per_step}")
        out.append("")
        out.append(f"{'node':<40} {'op':<14} {'calls':>10} {'total ms':>11} {'us/call':>10} "
                   f"{'%':>6}")
        for s in sorted(self.nodes, key=lambda s: -s.seconds):
            name = "/".join((*s.path, s.name))
            if s.seconds < 0:
                timing = f"{'-':>11} {'-':>10} {'-':>6}"
            else:
                timing = (f"{s.seconds * ms:>11.3f} {s.seconds * 1e6 / max(s.calls, 1):>10.2f} "
                          f"{100 * s.seconds / max(self.seconds, 1e-12):>6.1f}")
            out.append(f"{name:<40} {s.op:<14} {s.calls:>10} {timing}")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)


class _Profiler:
    """The hooks `CompileContext(profiler=...)` calls while compiling a plan."""

    def __init__(self):
        self.nodes: dict[tuple, Stat] = {}
        self.loops: dict[tuple[str, ...], list] = {}  # path -> [iterations, seconds of body]

    def kernel(self, path: tuple[str, ...], node, fn):
        key = (path, id(node))
        st = self.nodes.get(key)
        if st is None:
            st = self.nodes[key] = Stat(path, node.name or f"<{node.op_type}>", node.op_type)
        clock = time.perf_counter

        def timed(*args):
            t = clock()
            try:
                return fn(*args)
            finally:
                st.seconds += clock() - t
                st.calls += 1

        return timed

    def body(self, path: tuple[str, ...], loop, fn):
        counter = self.loops.setdefault(path, [0])

        def counted(*args):
            counter[0] += 1
            return fn(*args)

        return counted


def _numpy_profile(model, feeds, max_iterations) -> Profile:
    from ..backends.numpy import CompileContext, run_plan

    prof = _Profiler()
    plan = CompileContext(max_iterations, optimize=False, profiler=prof).compile(model.graph)
    t = time.perf_counter()
    run_plan(plan, feeds)
    total = time.perf_counter() - t
    result = Profile(model.source or model.graph.name, "numpy", total)
    loop_stats = {(*s.path, s.name): s for s in prof.nodes.values() if s.op == "Loop"}
    for path, (steps,) in prof.loops.items():
        s = loop_stats.get(path)
        result.loops[path] = {"runs": s.calls if s else 0, "steps": steps,
                              "seconds": s.seconds if s else 0.0}
    result.nodes = list(prof.nodes.values())
    return result


def _standalone(graph: Graph, loop: Loop) -> tuple[Graph, list[Value]]:
    """A graph holding only a copy of top-level `loop`, its outer reads as inputs
    (``in0``, ``in1`` ...), and those reads in the same order."""
    reads = [v for v in loop.reads() if v.const is None]
    mapping = {v.uid: Value(f"in{i}", v.type) for i, v in enumerate(reads)}
    copy = clone_node(loop, mapping)
    g = Graph(f"{loop.name} alone", [mapping[v.uid] for v in reads], copy.outputs, [copy],
              opset_imports=graph.opset_imports)
    return g, reads


def _best_time(fn, repeat: int) -> float:
    fn()  # compiles
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _jax_profile(model, feeds, max_iterations, repeat: int) -> Profile:
    from ..backends import jax as jb
    from ..backends.numpy import CompileContext

    counts = _numpy_profile(model, feeds, max_iterations)
    total = _best_time(lambda: model.run(feeds, backend="jax", max_iterations=max_iterations),
                       repeat)
    result = Profile(model.source or model.graph.name, "jax", total)
    result.notes.append(f"times are the best of {repeat} runs after a compiling run; nodes: "
                        "calls from an instrumented NumPy run, no time (XLA fuses loop bodies)")
    graph = model.graph
    top = [n for n in graph.nodes if isinstance(n, Loop)]
    reads = {v.uid: v for n in top for v in n.reads() if v.const is None}
    plan = CompileContext(max_iterations).compile(graph, outputs=list(reads.values()))
    args = [feeds.get(v.name, v.const) for v in plan.inputs]
    values = dict(zip(reads, plan.fn(*args)))
    for path, s in counts.loops.items():
        entry = {"runs": s["runs"], "steps": s["steps"], "seconds": 0.0}
        result.loops[path] = entry
        loop = next((n for n in top if len(path) == 1 and (n.name or "<unnamed>") == path[0]),
                    None)
        if loop is None:
            entry["seconds"] = float("nan")
            continue
        g, loop_reads = _standalone(graph, loop)
        cg = jb.compile_graph(g)
        loop_feeds = {f"in{i}": values[v.uid] for i, v in enumerate(loop_reads)}
        try:
            entry["seconds"] = _best_time(
                lambda cg=cg, f=loop_feeds: cg.run(f, max_iterations=max_iterations), repeat)
        except Error as e:
            entry["seconds"] = float("nan")
            result.notes.append(f"loop '{'/'.join(path)}' not timed alone: {e}")
    if any(len(p) > 1 for p in result.loops):
        result.notes.append("nested loops run inside their outer loop's compiled program: "
                            "their time is part of it (shown as nan)")
    for path, entry in result.loops.items():
        if len(path) > 1:
            entry["seconds"] = float("nan")
    result.nodes = [Stat(s.path, s.name, s.op, s.calls, -1.0) for s in counts.nodes]
    return result


def profile(model, feeds: dict[str, Any], backend: str = "numpy",
            max_iterations: int | None = None, repeat: int = 3) -> Profile:
    """Time per loop and per node of one run of `model` on `feeds` (see the module
    docstring for what each backend measures)."""
    from ..api import check_max_iterations, load

    model = load(model)
    max_iterations = check_max_iterations(max_iterations)
    feeds = check_feeds(model.graph, feeds)
    chosen = model.choose_backend(backend)
    if chosen == "jax":
        return _jax_profile(model, feeds, max_iterations, max(1, int(repeat)))
    return _numpy_profile(model, feeds, max_iterations)


__all__ = ["Profile", "Stat", "profile"]
