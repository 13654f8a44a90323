"""Per-step traces of body tensors: ``trace(graph, feeds, tensors, steps, backend)``.

The graph is marked (`inspect.mark`) and run on the backend: the NumPy and JAX backends of
itergraph, or ONNX Runtime / OpenVINO on the marked file written in their format; the traced
values are what that engine computed inside its loop (on JAX, outputs of the compiled scan).
Stack mode is tried first; when an inner loop's step count or a tensor's shape varies from
step to step, the run is repeated in thread mode (not on OpenVINO, which has no sequences).

`steps` selects steps: ``"0:10"`` (a Python slice, on the outermost loop's step index),
``"0:10,2"`` (one selector per loop level, outermost first), or an int. With `path`, entries
are written to that trace file as they come, in groups whose size keeps the values in memory
under `memory_budget` bytes (the first group has one entry and measures it), and the
returned `Trace` reads them back from the file.

A stateful model (OpenVINO ``ReadValue``/``Assign``) is traced over one step: the step graph
fed `state` (``{variable id: value}``, the values the model holds; `Model.trace` passes
``query_state()``; none: each variable reads its init value), and nothing is stored, so the
trace never advances the model's state (`inspect.state_step`). `Trace.outputs` then holds the
model's outputs and ``<variable id>/next``, the value each ``Assign`` would store.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Error, ExecutionError, InputError
from ..ir.graph import Graph
from ..ir.types import TensorType
from .engines import ENGINES, run_on
from .mark import Marked, mark, resolve
from .state_step import one_step
from .trace_file import Trace, TraceEntry, TraceWriter, load_trace

DEFAULT_BUDGET = 256 << 20


def parse_steps(steps) -> list[Any] | None:
    """`steps` as one selector (int or slice) per loop level, outermost first."""
    if steps is None:
        return None
    if isinstance(steps, int | slice):
        return [steps]
    if isinstance(steps, list | tuple):
        return list(steps)
    out: list[Any] = []
    for part in str(steps).split(","):
        part = part.strip()
        try:
            if ":" in part:
                bits = [int(b) if b.strip() else None for b in part.split(":")]
                if len(bits) > 3:
                    raise ValueError
                out.append(slice(*bits))
            else:
                out.append(int(part))
        except ValueError:
            raise InputError(f"--steps expects START:STOP[:STEP] or an index per loop level "
                             f"(comma-separated), got '{steps}'") from None
    return out


def _selected(sel, col: np.ndarray) -> np.ndarray:
    if isinstance(sel, slice):
        start, stop, step = sel.start or 0, sel.stop, sel.step or 1
        if start < 0 or (stop is not None and stop < 0) or step <= 0:
            raise InputError("step selections are non-negative and increasing "
                             f"(got {sel.start}:{sel.stop}:{sel.step})")
        ok = (col >= start) & ((col - start) % step == 0)
        return ok if stop is None else ok & (col < stop)
    return col == int(sel)


def select(entry: TraceEntry, sel: list[Any] | None) -> TraceEntry:
    """`entry` restricted to the steps `sel` selects (levels beyond its depth are ignored)."""
    if sel is None:
        return entry
    keep = np.ones(len(entry), bool)
    for level, s in enumerate(sel[: entry.steps.shape[1]]):
        keep &= _selected(s, entry.steps[:, level])
    idx = np.flatnonzero(keep)
    values = [entry.values[i] for i in idx] if entry.ragged else entry.values[idx]
    return TraceEntry(entry.key, entry.tensor, entry.loops, entry.kind, values,
                      entry.steps[idx])


def _entry(m: Marked, outs: dict[str, Any]) -> TraceEntry:
    depth = len(m.loops)
    if m.mode == "stack":
        v = np.asarray(outs[m.values])
        counts = v.shape[:depth]
        for d, name in enumerate(m.counts, start=1):
            ran = np.asarray(outs[name])
            if ran.size and not np.all(ran == counts[d]):
                raise ExecutionError(
                    f"loop '{m.loops[d]}' ran {int(ran.min())} to {int(ran.max())} steps at "
                    f"different steps of '{m.loops[d - 1]}': its tensors cannot be stacked "
                    "(ONNX Runtime, NumPy and JAX trace them as sequences; OpenVINO has no "
                    "sequences)")
        steps = np.indices(counts).reshape(depth, -1).T.astype(np.int64)
        values: Any = v.reshape((math.prod(counts), *v.shape[depth:]))
    else:
        seq, rows = list(outs[m.values]), list(outs[m.steps])
        steps = np.stack(rows).astype(np.int64) if rows else np.zeros((0, depth), np.int64)
        shapes = {np.shape(x) for x in seq}
        values = np.stack(seq) if len(shapes) == 1 else (list(map(np.asarray, seq))
                                                          if seq else np.zeros((0,)))
    return TraceEntry(m.key, m.tensor, list(m.loops), m.kind, values, steps.reshape(-1, depth))


def _run_marked(graph: Graph, feeds: dict, names: list[str] | None, backend: str,
                max_iterations: int | None) -> tuple[list[TraceEntry], dict[str, Any]]:
    def run(mode: str) -> tuple[list[TraceEntry], dict[str, Any]]:
        marked, records = mark(graph, names, mode)
        outs = run_on(backend, marked, feeds, max_iterations=max_iterations)
        return [_entry(m, outs) for m in records.values()], outs

    try:
        entries, outs = run("stack")
    except Error as first:
        if backend == "openvino" or isinstance(first, InputError):
            raise
        try:
            entries, outs = run("thread")
        except Error:
            raise first from None
    return entries, {v.name: outs[v.name] for v in graph.outputs}


def trace(graph: Graph, feeds: dict, tensors=None, steps=None, backend: str = "numpy",
          path=None, model: str = "", memory_budget: int = DEFAULT_BUDGET,
          max_iterations: int | None = None, state: dict | None = None) -> Trace:
    """Trace `tensors` (default: every carried value and loop condition) of `graph` run on
    `feeds` with `backend`; a stateful `graph` runs one step reading `state` (see the module
    docstring)."""
    if backend not in ENGINES:
        raise InputError(f"unknown trace backend '{backend}'; choose from {', '.join(ENGINES)}")
    if isinstance(tensors, str):
        tensors = [tensors]
    sel = parse_steps(steps)
    graph, feeds, _ = one_step(graph, feeds, state)
    chosen = resolve(graph, tensors)  # unknown names fail here, early
    skipped = []
    if tensors is None:  # by default, what is not a tensor (a carried list) is left out
        skipped = [t.key for t, _ in chosen if not _is_tensor(t.value)]
        chosen = [(t, k) for t, k in chosen if _is_tensor(t.value)]
    keys = [t.key for t, _ in chosen]
    if path is None:
        entries, own = _run_marked(graph, feeds, keys, backend, max_iterations) if keys \
            else ([], {})
        out = Trace(model, backend, {e.key: select(e, sel) for e in entries})
        out.outputs = own
        out.skipped = skipped
        return out
    path = Path(path)
    part = path.with_name(f".{path.name}.part")
    try:
        with TraceWriter(part, model, backend) as w:
            todo, size = list(keys), 1
            while todo:
                group, todo = todo[:size], todo[size:]
                biggest = 1
                for e in _run_marked(graph, feeds, group, backend, max_iterations)[0]:
                    e = select(e, sel)
                    biggest = max(biggest, _nbytes(e))
                    w.add(e)
                    del e
                size = max(1, memory_budget // biggest)
        os.replace(part, path)  # a failed trace leaves no file behind
    finally:
        if part.exists():
            part.unlink()
    out = load_trace(path)
    out.skipped = skipped
    return out


def _is_tensor(v) -> bool:
    return v.type is None or isinstance(v.type, TensorType)


def _nbytes(e: TraceEntry) -> int:
    if e.ragged:
        return sum(np.asarray(v).nbytes for v in e.values) + e.steps.nbytes
    return np.asarray(e.values).nbytes + e.steps.nbytes
