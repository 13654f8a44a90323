"""Where a run spends its time: per loop and per node, weighted by how often each ran.

On NumPy the model runs on an instrumented plan (`backends.numpy.CompileContext` with a
profiler): once to warm up (first calls allocate and import; they are not counted), then
`repeat` times; every kernel call is timed and counted, and every loop body call counts as one
iteration, so a node in a body nested two deep is counted outer steps x inner steps times. The
run time is the median of the repeats, with their spread; each node's and loop's time is the
median of its times in the repeats. A node without a name is shown as ``<OpType#k>``, numbered
per op type within its loop. The plan is compiled without the loop rewrites (`optimize=False`)
so each count and time belongs to a node of the user's file; the numbers include the
instrumentation's own cost (about a microsecond per call).

On JAX, XLA fuses a loop body into one program, so its nodes have no separate times. Each
loop, at any depth, is compiled on its own (a graph holding only that loop) and timed after
a first, compiling, run on the values it received in its first run in an instrumented NumPy
run; its total is that time times its runs (a nested loop's later runs see other values,
and its time alone includes one dispatch per run, so this is an estimate). The whole model
is timed the same way. Node counts, which do not depend on the backend, come from the
instrumented NumPy run.

A stateful model (OpenVINO ``ReadValue``/``Assign``) is profiled over one step from the state
it holds (``Model.query_state()``): its step graph, the state fed as inputs
(`tracing.state_step`; a ``ReadValue`` shows as an ``Identity`` of its name). The profile
stores nothing: the model's state is left as it was.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
    node: Any = field(default=None, repr=False, compare=False)
    first_args: tuple | None = field(default=None, repr=False, compare=False)


@dataclass
class Profile:
    """The result of `profile`: per-loop and per-node statistics of one run."""

    model: str
    backend: str
    seconds: float  # the whole run (the median of the repeats)
    loops: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)
    runs: list[float] = field(default_factory=list)  # each timed run, in seconds
    nodes: list[Stat] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def node(self, name: str) -> Stat:
        """The statistics of the node called `name` (qualified ``outer/inner/name`` or bare)."""
        hits = [s for s in self.nodes if "/".join((*s.path, s.name)) == name or s.name == name]
        if len(hits) != 1:
            raise InputError(f"no single node '{name}' in the profile ({len(hits)} match)")
        return hits[0]

    def as_dict(self) -> dict[str, Any]:
        """The profile as plain data (``itergraph profile --json``): seconds per run, each
        timed run, loops by their ``outer/inner`` path and nodes, most time first (a node
        whose time is not measured separately has ``seconds`` None)."""
        return {"model": self.model, "backend": self.backend, "seconds": self.seconds,
                "runs": list(self.runs),
                "loops": [{"loop": "/".join(path), **s} for path, s in self.loops.items()],
                "nodes": [{"node": "/".join((*s.path, s.name)), "op": s.op, "calls": s.calls,
                           "seconds": s.seconds if s.seconds >= 0 else None}
                          for s in sorted(self.nodes, key=lambda s: -s.seconds)],
                "notes": list(self.notes)}

    def text(self) -> str:
        """The two tables, loops then nodes (most time first)."""
        ms = 1e3
        out = [f"profile of {self.model} on {self.backend}: {self.seconds * ms:.3f} ms per run"]
        if len(self.runs) > 1:
            out[0] += (f" (median of {len(self.runs)} runs after a warm-up; "
                       f"{min(self.runs) * ms:.3f} .. {max(self.runs) * ms:.3f} ms)")
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
        op_w = max([14, *(len(s.op) for s in self.nodes)])
        out.append(f"{'node':<40} {'op':<{op_w}} {'calls':>10} {'total ms':>11} "
                   f"{'us/call':>10} {'%':>6}")
        for s in sorted(self.nodes, key=lambda s: -s.seconds):
            name = "/".join((*s.path, s.name))
            if s.seconds < 0:
                timing = f"{'-':>11} {'-':>10} {'-':>6}"
            else:
                timing = (f"{s.seconds * ms:>11.3f} {s.seconds * 1e6 / max(s.calls, 1):>10.2f} "
                          f"{100 * s.seconds / max(self.seconds, 1e-12):>6.1f}")
            out.append(f"{name:<40} {s.op:<{op_w}} {s.calls:>10} {timing}")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)


class _Profiler:
    """The hooks `CompileContext(profiler=...)` calls while compiling a plan."""

    def __init__(self, keep_loop_args: bool = False):
        self.keep_loop_args = keep_loop_args  # the arguments of each loop's first run
        self.nodes: dict[tuple, Stat] = {}
        self.loops: dict[tuple[str, ...], list] = {}  # path -> [iterations, seconds of body]
        self._unnamed: dict[tuple, int] = {}
        self.fused = 0  # kernels that run two nodes or more (`backends.numpy.fusions`)

    def reset(self) -> None:
        """Forget the counts and times so far (after a warm-up run)."""
        for st in self.nodes.values():
            st.calls, st.seconds = 0, 0.0
        for counter in self.loops.values():
            counter[0] = 0

    def _name(self, path: tuple[str, ...], node) -> str:
        if node.name:
            return node.name
        k = self._unnamed.get((path, node.op_type), 0) + 1
        self._unnamed[(path, node.op_type)] = k
        return f"<{node.op_type}#{k}>"

    def kernel(self, path: tuple[str, ...], node, fn, fused=None):
        key = (path, id(node))
        st = self.nodes.get(key)
        if st is None:
            op = "+".join([node.op_type, *(f.op_type for f in fused or ())])
            st = self.nodes[key] = Stat(path, self._name(path, node), op, node=node)
            if fused is not None:
                self.fused += 1
        clock = time.perf_counter
        keep = self.keep_loop_args and isinstance(node, Loop)

        def timed(*args):
            if keep and st.first_args is None:
                st.first_args = tuple(np.array(a) if isinstance(a, np.ndarray) else a
                                      for a in args)
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


def _numpy_profile(model, feeds, max_iterations, keep_loop_args: bool = False,
                   repeat: int = 1) -> Profile:
    from ..backends.numpy import CompileContext, run_plan

    prof = _Profiler(keep_loop_args)
    plan = CompileContext(max_iterations, optimize=False, fuse=True,
                          profiler=prof).compile(model.graph)
    run_plan(plan, feeds)  # the warm-up: first calls import, allocate and fill caches
    prof.reset()
    runs, per_run = [], []  # per run: each node's seconds
    for _ in range(repeat):
        before = {k: st.seconds for k, st in prof.nodes.items()}
        t = time.perf_counter()
        run_plan(plan, feeds)
        runs.append(time.perf_counter() - t)
        per_run.append({k: st.seconds - before.get(k, 0.0) for k, st in prof.nodes.items()})
    result = Profile(model.source or model.graph.name, "numpy", float(np.median(runs)),
                     runs=runs)
    loop_stats = {(*s.path, s.name): s for s in prof.nodes.values() if s.op == "Loop"}
    for k, st in prof.nodes.items():  # one run's calls; the median run's seconds
        st.calls = st.calls // repeat
        st.seconds = float(np.median([r.get(k, 0.0) for r in per_run]))
    for path, (steps,) in prof.loops.items():
        s = loop_stats.get(path)
        result.loops[path] = {"runs": s.calls if s else 0, "steps": steps // repeat,
                              "seconds": s.seconds if s else 0.0}
    result.nodes = list(prof.nodes.values())
    if prof.fused:
        result.notes.append(f"{prof.fused} kernels run two nodes or more each, as on every "
                            "NumPy run (op 'A+B': B's constants folded into A's or B computed "
                            "in A's result, timed as one)")
    return result


def _standalone(graph: Graph, loop: Loop, args: tuple) -> tuple[Graph, dict[str, Any]]:
    """A graph holding only a copy of `loop`, whose outer reads are inputs ``in0``, ``in1``
    ..., and the feeds that give them `args` (the loop kernel's arguments: the node's inputs,
    then its captures)."""
    mapping: dict[int, Value] = {}
    feeds: dict[str, Any] = {}
    for v, a in zip([*loop.inputs, *loop.captured()], args):
        if v is None or v.uid in mapping or (v.const is not None and v.producer is None):
            continue
        name = f"in{len(mapping)}"
        mapping[v.uid] = Value(name, v.type)
        feeds[name] = a
    inputs = list(mapping.values())
    copy = clone_node(loop, mapping)  # (adds the values the copy defines to `mapping`)
    g = Graph(f"{loop.name} alone", inputs, copy.outputs, [copy],
              opset_imports=graph.opset_imports)
    return g, feeds


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

    counts = _numpy_profile(model, feeds, max_iterations, keep_loop_args=True)
    total = _best_time(lambda: model.run(feeds, backend="jax", max_iterations=max_iterations),
                       repeat)
    result = Profile(model.source or model.graph.name, "jax", total)
    result.notes.append(f"times are the best of {repeat} runs after a compiling run; a loop "
                        "is compiled and timed alone on the values of its first run, times "
                        "its runs; nodes: calls from an instrumented NumPy run, no time (XLA "
                        "fuses loop bodies)")
    loop_stats = {(*s.path, s.name): s for s in counts.nodes if s.op == "Loop"}
    for path, c in counts.loops.items():
        entry = {"runs": c["runs"], "steps": c["steps"], "seconds": float("nan")}
        result.loops[path] = entry
        st = loop_stats.get(path)
        if st is None or st.first_args is None:
            continue
        g, loop_feeds = _standalone(model.graph, st.node, st.first_args)
        try:
            cg = jb.compile_graph(g)
            one = _best_time(lambda cg=cg, f=loop_feeds: cg.run(f, max_iterations=max_iterations),
                             repeat)
        except Error as e:
            result.notes.append(f"loop '{'/'.join(path)}' not timed alone: {e}")
            continue
        entry["seconds"] = one * c["runs"]
    result.notes.append("each run timed alone includes the dispatch of a compiled graph "
                        f"(a one-node graph: {_dispatch_time(repeat) * 1e6:.0f} us per run)")
    result.nodes = [Stat(s.path, s.name, s.op, s.calls, -1.0) for s in counts.nodes]
    return result


def _dispatch_time(repeat: int) -> float:
    """The time of one run of a compiled one-node graph (Neg of a scalar) on JAX."""
    from ..backends import jax as jb
    from ..ir import Node
    from ..ir.types import DataType, TensorType

    x = Value("x", TensorType(DataType.FLOAT32, ()))
    node = Node("Neg", [x], [Value("y", TensorType(DataType.FLOAT32, ()))], version=13)
    cg = jb.compile_graph(Graph("dispatch", [x], node.outputs, [node],
                                opset_imports={"": 13}))
    feeds = {"x": np.float32(1.0)}
    return _best_time(lambda: cg.run(feeds), max(repeat, 3))


def profile(model, feeds: dict[str, Any], backend: str = "numpy",
            max_iterations: int | None = None, repeat: int = 5) -> Profile:
    """Time per loop and per node of one run of `model` on `feeds` (see the module
    docstring for what each backend measures)."""
    from ..model import Model, load
    from ..session import check_max_iterations
    from ..tracing.state_step import held_state, one_step

    model = load(model)
    max_iterations = check_max_iterations(max_iterations)
    feeds = check_feeds(model.graph, feeds)
    step, feeds, ports = one_step(model.graph, feeds, held_state(model))
    if ports is not None:
        model = Model(step, model.source or model.graph.name)
    chosen = model.choose_backend(backend)
    if chosen == "jax":
        return _jax_profile(model, feeds, max_iterations, max(1, int(repeat)))
    return _numpy_profile(model, feeds, max_iterations, repeat=max(1, int(repeat)))


__all__ = ["Profile", "Stat", "profile"]
