"""Engines compared output by output, and step by step to the first divergence.

``compare(model, feeds, engines, atol, rtol)`` runs `model` on each engine (ONNX Runtime and
OpenVINO on the model's own file when it is in their format, else on the file itergraph
writes), and compares every other engine with the first, output by output, in the manner of
Polygraphy: an output PASSES when ``|out - ref| <= atol + rtol * |ref|`` everywhere, and the
report gives the absolute and relative differences' max, mean and median and the index of the
worst element. When an engine disagrees, both engines trace every body tensor of every loop
(`tracing.trace`, through the mark transform on the peers) and the report names the first
divergence in execution order: the loop, the step of each enclosing loop, the body tensor and
the two values, or a loop that ran a different number of steps (a trip-count mismatch). The
report names the loop each differing output comes from; when marking makes a peer's fault
vanish, that loop's body runs as a step model one step at a time on both engines, which
tells a fault in the body from one in how the peer runs the loop.

A stateful model (OpenVINO ``ReadValue``/``Assign``) is compared over one step from the
state it holds (``Model.query_state()``; a model given as a file holds none, so the step is
the first one from a reset state): every engine runs that step (`engines.run_on`: OpenVINO in
an ``InferRequest`` given the same state), and the next value of each variable is compared
as output ``<variable id>/next``. The model's own state is left as it was.

`CompareReport.status` is 0 when all engines agree, 1 when some disagree, 2 when an engine
failed to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.loop_features import node_label
from ..errors import Error, InputError
from ..ir.loop import Loop
from ..ir.types import TensorType
from ..tracing.engines import ENGINES, installed_engines, run_on
from ..tracing.names import TensorIndex
from ..tracing.state_step import held_state
from ..tracing.trace import trace

#: what `compare` runs when not told: every engine of these that is installed
DEFAULT_ENGINES = ("numpy", "jax", "onnxruntime", "openvino")


@dataclass
class OutputCheck:
    """One output of `engine` against `reference`'s."""

    output: str
    reference: str
    engine: str
    passed: bool
    detail: str
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class Divergence:
    """Where `engine` first departs from `reference` inside the loops.

    `kind` is ``"value"`` (the `tensor` differs at `steps`) or ``"trip-count"`` (the loop ran
    `count_reference` steps on `reference` and `count_engine` on `engine`; `steps` is the first
    step one of them ran and the other did not)."""

    reference: str
    engine: str
    kind: str
    loop: str
    steps: tuple[int, ...]
    tensor: str
    value_reference: Any = None
    value_engine: Any = None
    count_reference: int | None = None
    count_engine: int | None = None

    def text(self) -> str:
        at = ", ".join(f"{name} step {s}" for name, s in
                       zip(self.loop.split(" > "), self.steps))
        if self.kind == "trip-count":
            return (f"trip-count mismatch in loop '{self.loop}': {self.reference} ran "
                    f"{self.count_reference} steps, {self.engine} ran {self.count_engine} "
                    f"(first step only one ran: {at}; tensor '{self.tensor}')")
        return (f"first divergence: loop '{self.loop}', {at}, body tensor '{self.tensor}':\n"
                f"      {self.reference}: {_show(self.value_reference)}\n"
                f"      {self.engine}: {_show(self.value_engine)}")


@dataclass
class CompareReport:
    engines: list[str]
    atol: float
    rtol: float
    checks: list[OutputCheck] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    divergences: list[Divergence] = field(default_factory=list)
    trip_counts: list[Divergence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.errors and all(c.passed for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``itergraph compare --json``): status, each output
        check, engine errors, where an engine first diverged, notes."""
        def plain(x):
            if isinstance(x, np.generic):
                return x.item()
            if isinstance(x, np.ndarray):
                return {"shape": list(x.shape), "dtype": str(x.dtype)}
            if isinstance(x, dict):
                return {str(k): plain(v) for k, v in x.items()}
            if isinstance(x, list | tuple):
                return [plain(v) for v in x]
            return x

        def div(d: Divergence) -> dict[str, Any]:
            return {"reference": d.reference, "engine": d.engine, "kind": d.kind,
                    "loop": d.loop, "steps": list(d.steps), "tensor": d.tensor,
                    "count_reference": d.count_reference, "count_engine": d.count_engine}

        return {"status": self.status, "engines": self.engines, "atol": self.atol,
                "rtol": self.rtol,
                "checks": [{"output": c.output, "reference": c.reference, "engine": c.engine,
                            "passed": c.passed, "detail": c.detail, "stats": plain(c.stats)}
                           for c in self.checks],
                "errors": dict(self.errors), "divergences": [div(d) for d in self.divergences],
                "trip_counts": [div(d) for d in self.trip_counts], "notes": list(self.notes)}

    @property
    def status(self) -> int:
        return 2 if self.errors else 0 if self.agree else 1

    def text(self) -> str:
        lines = [f"engines: {', '.join(self.engines)} (reference: {self.engines[0]}); "
                 f"tolerance [abs={self.atol:g}, rel={self.rtol:g}]"]
        for e, msg in self.errors.items():
            lines.append(f"[ERROR] {e}: {msg}")
        for c in self.checks:
            lines.append(f"[{'PASSED' if c.passed else 'FAILED'}] output '{c.output}': "
                         f"{c.engine} vs {c.reference}: {c.detail}")
        for d in self.trip_counts:
            lines.append("  " + d.text())
        for d in self.divergences:
            lines.append(f"  {d.engine} vs {d.reference}: " + d.text())
        lines += ["  " + n for n in self.notes]
        verdict = {0: "PASSED: all engines agree", 1: "FAILED: engines disagree",
                   2: "ERROR: an engine failed"}[self.status]
        return "\n".join([*lines, verdict])


def _show(v) -> str:
    if v is None:
        return "(not computed)"
    a = np.asarray(v)
    return f"shape {a.shape} " + np.array2string(a, threshold=12, edgeitems=3,
                                                 precision=6, max_line_width=100)


def _as_array(v) -> np.ndarray | None:
    if v is None:
        return None
    if isinstance(v, list):
        return np.concatenate([np.asarray(x).reshape(-1) for x in v]) if v else np.zeros(0)
    return np.asarray(v)


def check_output(ref, got, atol: float, rtol: float) -> tuple[bool, str, dict]:
    """Whether `got` matches `ref` within tolerance, with Polygraphy-style statistics."""
    a, b = _as_array(got), _as_array(ref)
    if a is None or b is None:
        ok = a is None and b is None
        return ok, "both empty optionals" if ok else "one engine gave an empty optional", {}
    if isinstance(ref, list) != isinstance(got, list) or (
            isinstance(ref, list) and len(ref) != len(got)):
        return False, "sequence lengths differ", {}
    if a.shape != b.shape:
        return False, f"shape {a.shape} != reference shape {b.shape}", {}
    if a.size == 0:
        return True, "empty", {}
    if a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        ok = bool(np.array_equal(a, b))
        return ok, "equal" if ok else "differ", {}
    x, y = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(x) & np.isnan(y)
    diff = np.where(both_nan, 0.0, np.abs(x - y))
    diff = np.where(np.isnan(diff), np.inf, diff)
    rel = diff / np.maximum(np.abs(y), np.finfo(np.float64).tiny)
    rel = np.where(diff == 0, 0.0, rel)
    exact = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    bad = diff > (0 if exact else atol + rtol * np.abs(y))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    stats = {"max_abs": float(diff.max()), "mean_abs": float(diff.mean()),
             "median_abs": float(np.median(diff)), "max_rel": float(rel.max()),
             "mean_rel": float(rel.mean()), "median_rel": float(np.median(rel)),
             "worst_index": tuple(int(i) for i in worst), "mismatched": int(bad.sum()),
             "size": int(a.size)}
    detail = (f"abs diff max={stats['max_abs']:.4g} at {stats['worst_index']}, "
              f"mean={stats['mean_abs']:.4g}, median={stats['median_abs']:.4g} | rel diff "
              f"max={stats['max_rel']:.4g}, mean={stats['mean_rel']:.4g}, "
              f"median={stats['median_rel']:.4g}")
    if bad.any():
        detail += (f" | {stats['mismatched']}/{stats['size']} elements out of tolerance; "
                   f"worst: {x[worst]:.6g} vs reference {y[worst]:.6g}")
    return not bad.any(), detail, stats


def compare(model, feeds: dict, engines=None, atol: float = 1e-5,
            rtol: float = 1e-5, max_iterations: int | None = None) -> CompareReport:
    """Run `model` (anything `itergraph.load` takes) on `engines` and compare them; see the
    module docstring."""
    from ..model import load

    if engines is None:
        engines = [e for e in DEFAULT_ENGINES if e in installed_engines()]
    if isinstance(engines, str):
        engines = [e.strip() for e in engines.split(",") if e.strip()]
    engines = list(engines)
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        raise InputError(f"unknown engine{'s' if len(bad) > 1 else ''} "
                         f"{', '.join(repr(e) for e in bad)}; the engines: {', '.join(ENGINES)}")
    if len(engines) < 2:
        missing = [e for e in ENGINES if e not in installed_engines()]
        raise InputError(f"compare needs two or more engines; got {', '.join(engines) or 'none'}"
                         + (f" ({', '.join(missing)} not installed: pip install "
                            f"'itergraph[jax,peers]')" if missing else ""))
    m = load(model)
    source = m.source if m.source not in ("", "graph", "network", "onnx.ModelProto") else None
    report = CompareReport(engines, atol, rtol)
    state = held_state(m)
    outs: dict[str, dict] = {}
    for e in engines:
        try:
            outs[e] = run_on(e, m.graph, feeds, source=source, max_iterations=max_iterations,
                             state=state)
        except InputError:
            raise
        except Error as err:
            report.errors[e] = str(err)
    ref = engines[0]
    if ref not in outs:
        return report
    for e in engines[1:]:
        if e not in outs:
            continue
        failed = False
        for (name, want), got in zip(outs[ref].items(), outs[e].values()):
            ok, detail, stats = check_output(want, got, atol, rtol)
            report.checks.append(OutputCheck(name, ref, e, ok, detail, stats))
            failed |= not ok
        if failed:
            bad = [c.output for c in report.checks if c.engine == e and not c.passed]
            report.notes += _sources(m.graph, bad)
            if not _diverge(report, m.graph, feeds, ref, e, atol, rtol, max_iterations,
                            outs[ref], state):
                _step_by_step(report, m.graph, feeds, ref, e, atol, rtol, bad)
    return report


def _loops_behind(graph, output: str) -> list:
    """The loops nearest to graph output `output` among those it is computed from (walking
    back through the producers of the top-level graph, stopping at each loop)."""
    start = [v for v in graph.outputs if v.name == output]
    seen: set[int] = set()
    found: list = []
    todo = list(start)
    while todo:
        v = todo.pop()
        if v is None or v.uid in seen:
            continue
        seen.add(v.uid)
        node = v.producer
        if node is None or node not in graph.nodes:
            continue
        if isinstance(node, Loop):
            if node not in found:
                found.append(node)
            continue
        todo.extend(node.reads())
    return found


def _sources(graph, outputs: list[str]) -> list[str]:
    """One note per loop the differing `outputs` come from, naming it as the file does."""
    by_loop: dict[int, tuple[Any, list[str]]] = {}
    for name in outputs:
        for loop in _loops_behind(graph, name):
            by_loop.setdefault(id(loop), (loop, []))[1].append(name)
    return [f"{', '.join(repr(n) for n in names)} "
            f"{'comes' if len(names) == 1 else 'come'} from {_label(loop)}"
            for loop, names in by_loop.values()]


def _label(node) -> str:
    """``TensorIterator 'ti'`` as the file names it, with the element it was read from."""
    element = node.meta.get("element")
    return node_label(node) + (f" ({element})" if element else "")


#: the longest loop `_step_by_step` drives one step at a time on a peer (one call a step)
STEP_BY_STEP_MAX = 256


def _step_by_step(report: CompareReport, graph, feeds, ref: str, eng: str, atol, rtol,
                  bad: list[str]) -> None:
    """Localise without marking: each top-level loop the differing outputs come from runs
    as its step model (`transforms.step_model`: the body alone, its state explicit), one
    call per step, on `ref` and on `eng`. Equal results put the fault in how `eng` runs the
    loop itself (its port map and back edges); different ones in the body, at a step."""
    from ..transforms.step_model import build_step, run_steps

    loops = {id(lp): lp for name in bad for lp in _loops_behind(graph, name)}
    for loop in loops.values():
        label = _label(loop)
        try:
            step_graph, _ = build_step(graph, loop)
        except Error as err:
            report.notes.append(f"{label}: no step model to localise with ({err})")
            continue
        runs: dict[str, dict] = {}
        try:
            for e in (ref, eng):
                runs[e] = run_steps(graph, feeds, loop.name or None,
                                    step=lambda ins, e=e, g=step_graph: run_on(e, g, ins),
                                    max_iterations=STEP_BY_STEP_MAX)
        except Error as err:
            report.notes.append(f"{label}: its step model could not be run step by step on "
                                f"{', '.join(runs) or ref}: {err}")
            continue
        differ = [k for k, w in runs[ref].items()
                  if not check_output(w, runs[eng].get(k), atol, rtol)[0]]
        if differ:
            report.notes.append(
                f"{label}: its body alone (the step model, one call per step) already gives "
                f"other values on {eng} than on {ref} (loop output(s) "
                f"{', '.join(repr(k) for k in differ)}): {eng} computes the body differently")
        else:
            report.notes.append(
                f"{label}: its body alone (the step model, one call per step) gives {ref}'s "
                f"values on {eng}: {eng} goes wrong in how it runs the loop itself (its port "
                "map or back edges), not in the body")


def _traceable(index: TensorIndex) -> list[str]:
    return [k for k, t in index.tensors.items()
            if t.value.type is None or isinstance(t.value.type, TensorType)]


def _reproduces(tr, want: dict, atol, rtol) -> bool:
    return any(not check_output(w, tr.outputs.get(k), atol, rtol)[0] for k, w in want.items())


def _diverge(report: CompareReport, graph, feeds, ref: str, eng: str, atol, rtol,
             max_iterations, want: dict, state: dict) -> bool:
    """Trace both engines and record the first divergence; False when marking makes the
    difference vanish. Marking changes the file a peer optimises, and a peer's bug may
    vanish with it: every body tensor is traced first, then only the carried values and
    conditions, and the first set under which the peer still disagrees on the model's
    outputs is used."""
    index = TensorIndex(graph)
    sets = [_traceable(index), [t.key for t, _ in index.defaults()]]
    sets = [s for i, s in enumerate(sets) if s and s not in sets[:i]]
    if not sets:
        report.notes.append("the model has no loop body tensors to trace")
        return True
    traces: dict[str, Any] = {}
    for keys in sets:
        traces = {}
        try:
            traces = {e: trace(graph, feeds, keys, backend=e, max_iterations=max_iterations,
                               state=state) for e in (ref, eng)}
        except Error as err:
            report.notes.append(f"cannot trace {len(keys)} body tensors: {err}")
            continue
        if _reproduces(traces[eng], want, atol, rtol):
            break
    else:
        if traces:
            report.notes.append(
                f"{eng} agrees with {ref} on the marked file (every body tensor, or the carried "
                "values and conditions, exposed as loop outputs): the difference lies in how "
                f"{eng} runs the file as given, which marking changes")
            return False
        return True
    first, trips = first_divergence(index, traces[ref], traces[eng], ref, eng, atol, rtol)
    report.trip_counts += trips
    if first is not None:
        if first.kind == "value":
            report.divergences.append(first)
    else:
        report.notes.append(f"{eng} and {ref} agree on every traced body tensor at every "
                            "step: the difference arises outside the loop bodies (in how "
                            "the loops' outputs are assembled)")
    return True


def first_divergence(index: TensorIndex, a, b, ref: str, eng: str, atol: float,
                     rtol: float) -> tuple[Divergence | None, list[Divergence]]:
    """The first divergence, in execution order, between traces `a` (of `ref`) and `b` (of
    `eng`) of the tensors of `index`, and every loop whose step count differs."""
    trips: list[Divergence] = []
    candidates: list[tuple[tuple, Divergence]] = []
    loop_counts: dict[str, tuple[int, int, tuple, str, tuple]] = {}
    for key in a:
        if key not in b:
            continue
        t = index.tensors[key]
        ea, eb = a[key], b[key]
        loop = " > ".join(t.loop_names)
        rows_b = {tuple(r): i for i, r in enumerate(eb.steps.tolist())}
        rows_a = {tuple(r): i for i, r in enumerate(ea.steps.tolist())}
        ca = len({r for r in rows_a})
        cb = len({r for r in rows_b})
        only = sorted(set(rows_a) ^ set(rows_b))
        if only and loop not in loop_counts:
            loop_counts[loop] = (ca, cb, only[0], key, t.order(only[0]))
        for r, i in rows_a.items():
            j = rows_b.get(r)
            if j is None:
                continue
            va, vb = ea.values[i], eb.values[j]
            if not check_output(va, vb, atol, rtol)[0]:
                candidates.append((t.order(r), Divergence(ref, eng, "value", loop, r, key,
                                                          np.asarray(va), np.asarray(vb))))
                break
    for loop, (ca, cb, first, key, order) in loop_counts.items():
        d = Divergence(ref, eng, "trip-count", loop, first, key, count_reference=ca,
                       count_engine=cb)
        trips.append(d)
        candidates.append((order, d))
    if not candidates:
        return None, trips
    candidates.sort(key=lambda c: c[0])
    return candidates[0][1], trips
