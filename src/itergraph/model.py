"""`Model` (run, compile, explain, trace, info) and `load`/`save`, the formats' entry points.

Below the tools that take a model (`inspect`, `transforms`, `portability`); `itergraph.api`
re-exports this module for users."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from .describe import describe
from .errors import Error, InputError, ModelError
from .feeds import check_feeds
from .ir import Graph, verify
from .ir.state import has_state
from .session import BACKENDS, Session, check_max_iterations, choose_backend


class Model:
    """A loaded model: an IR graph plus compiled plans cached per backend and options."""

    def __init__(self, graph: Graph, source: str = ""):
        self.graph = graph
        self.source = source
        self._numpy_plans: dict[Any, Any] = {}
        self._sessions: dict[Any, Session] = {}  # by (backend, max_iterations), for `run`
        self._jax = None
        self._compiling = threading.Lock()  # threads sharing the model compile each plan once
        self._state = None  # `stateful.State` of a model with variables, made by the first run

    @property
    def inputs(self) -> list:
        return [v for v in self.graph.inputs if v.const is None]

    @property
    def outputs(self) -> list:
        return list(self.graph.outputs)

    def compile(self, backend: str | None = None,
                max_iterations: int | None = None) -> Session:
        """The model prepared for repeated calls on one engine (`session.Session`):
        ``sess = m.compile("jax"); sess.run(feeds)``. `backend`: ``"numpy"``, ``"jax"`` or
        ``"auto"`` (None: the default, ``"auto"`` unless ``$ITERGRAPH_BACKEND`` says
        otherwise); ``sess.backend`` is the engine that runs."""
        return Session(self, backend, max_iterations)

    def run(self, feeds: dict[str, Any], backend: str | None = None,
            max_iterations: int | None = None, progress=None) -> dict[str, Any]:
        """Run the model; returns ``{output name: value}`` in the graph's output order.

        `backend` is ``"numpy"``, ``"jax"`` or ``"auto"`` (None: the default engine, see
        `compile`). `max_iterations` bounds every loop (a runaway loop raises
        `IterationLimitError`); the default is unlimited. `progress`, a callable ``(loop
        name, steps done, done)``, hears from the outermost loops as they run
        (`backends.common.progress`; `inspect.progress.Reporter` prints).
        """
        if progress is None:
            try:
                session = self._sessions.get((backend, max_iterations))
            except TypeError:  # an unhashable option: the session's checks word it
                session = None
            if session is None:
                session = Session(self, backend, max_iterations)
                with self._compiling:
                    if len(self._sessions) < 32:
                        self._sessions[(backend, max_iterations)] = session
            return session.run(feeds)
        return self._run_reporting(feeds, backend, max_iterations, progress)

    def _run_reporting(self, feeds, backend, max_iterations, progress) -> dict[str, Any]:
        from .backends.common.progress import reporting

        max_iterations = check_max_iterations(max_iterations)
        feeds = check_feeds(self.graph, feeds)
        if has_state(self.graph):
            return self.state.run(feeds, backend, max_iterations=max_iterations,
                                  progress=progress)
        chosen = self.choose_backend(backend)
        with reporting(progress):
            if chosen == "jax":
                return self.jax_compiled().run(feeds, max_iterations=max_iterations)
            from .backends.numpy import run_plan

            return run_plan(self.numpy_plan(max_iterations, True), feeds)

    def numpy_plan(self, max_iterations: int | None, progress: bool):
        """The NumPy plan for these options, compiled once."""
        key = (max_iterations, progress)
        plan = self._numpy_plans.get(key)
        if plan is None:
            with self._compiling:
                plan = self._numpy_plans.get(key)
                if plan is None:
                    from .backends.numpy import CompileContext

                    plan = self._numpy_plans[key] = CompileContext(
                        max_iterations, progress=progress).compile(self.graph)
        return plan

    @property
    def state(self):
        """The variables of a stateful model (OpenVINO ReadValue/Assign) and the values they
        hold between runs: a `stateful.State`; `reset_state`/`query_state`/`set_state` below."""
        if self._state is None:
            from .stateful import State

            with self._compiling:
                if self._state is None:
                    self._state = State(self.graph, lambda g: Model(g, self.source))
        return self._state

    def reset_state(self, variable_id: str | None = None) -> None:
        """Variables read their init value again (OpenVINO's ``InferRequest.reset_state``)."""
        self.state.reset(variable_id)

    def query_state(self) -> dict[str, np.ndarray]:
        """``{variable id: value}`` of the variables that hold a value."""
        return self.state.query()

    def set_state(self, values: dict[str, Any]) -> None:
        """Set variables as if a previous run had assigned `values` (``{id: array}``)."""
        self.state.set(values)

    def run_many(self, feeds_iterable, batch_size: int = 16, backend: str = "numpy",
                 batch_axes: dict[str, int] | None = None, buckets: list[int] | None = None,
                 pad_axes: dict[str, int] | None = None, devices=None,
                 max_iterations: int | None = None):
        """Yield ``run(feeds)`` for each feeds dict, in order, batching inputs where that is
        provably exact; see `itergraph.scale.run_many`."""
        from .scale.run_many import run_many

        return run_many(self, feeds_iterable, batch_size=batch_size, backend=backend,
                        batch_axes=batch_axes, buckets=buckets, pad_axes=pad_axes,
                        devices=devices, max_iterations=check_max_iterations(max_iterations))

    def choose_backend(self, backend: str | None = None) -> str:
        """The engine (``"numpy"`` or ``"jax"``) that `backend` runs this model on."""
        return choose_backend(self, backend)

    def jax_compiled(self):
        """The JAX backend's compiled graph of this model, built once (thread-safe)."""
        if self._jax is None:
            with self._compiling:
                if self._jax is None:
                    from .backends import jax as jax_backend

                    self._jax = jax_backend.compile_graph(self.graph)
        return self._jax

    def explain(self, backend: str = "jax") -> str:
        """Which parts of the model compile on `backend` and why others fall back; for
        ``"auto"``, first which engine it picks. The text of `explanation`."""
        return explanation_text(self.explanation(backend))

    def explanation(self, backend: str = "jax") -> dict[str, Any]:
        """`explain` as plain data: ``{"backend", "summary", "elements": [{"element",
        "engine", "reason"}]}``; for ``"auto"`` also ``"engine"`` (what it picks) and
        ``"then"``, the explanation of the backend whose plan it prepares."""
        if backend not in BACKENDS:
            raise InputError(f"unknown backend '{backend}'; choose one of {BACKENDS}")
        if backend == "auto":
            from .session import worth_compiling

            chosen = self.choose_backend("auto")
            compiles = worth_compiling(self.graph)
            why = ("the whole graph compiles with XLA: each input signature runs on NumPy "
                   "while it compiles, then on the engine measured faster for it"
                   if chosen == "jax" else
                   "too little work for a compiled program's dispatch to pay off"
                   if not compiles else "not everything compiles with XLA")
            return {"backend": "auto", "engine": "numpy and jax" if chosen == "jax" else chosen,
                    "summary": why, "elements": [],
                    "then": self.explanation("jax" if compiles else "numpy")}
        if backend == "numpy":
            return {"backend": "numpy", "elements": [],
                    "summary": "the whole graph runs on the NumPy reference backend"}
        from .backends import jax as jax_backend

        if not jax_backend.available():
            return {"backend": "jax", "elements": [], "summary":
                    "not installed (pip install itergraph[jax]); numpy runs everything"}
        graph = self.graph
        if has_state(graph):  # what runs is the step graph, state in and state out
            from .passes.state_io import step_graph

            graph = step_graph(graph, self.state.table)[0]
        records = jax_backend.explain(graph)
        falls = sum(1 for r in records if not r.compiles)
        return {"backend": "jax",
                "summary": f"{falls} element(s) fall back to NumPy" if falls
                else "everything compiles with XLA",
                "elements": [{"element": r.element, "engine": "xla" if r.compiles else "numpy",
                              "reason": r.reason} for r in records]}

    def info(self) -> str:
        return describe(self.graph)

    def trace(self, feeds: dict[str, Any], tensors=None, steps=None, backend: str = "numpy",
              path: str | os.PathLike | None = None, **options):
        """Per-step values of loop body tensors (default: every carried value and loop
        condition), as an `itergraph.tracing.trace_file.Trace`; see `itergraph.tracing.trace`.
        A stateful model is traced over one step from the state it holds, which the trace
        leaves as it was (`itergraph.tracing.state_step`)."""
        from .tracing.state_step import held_state
        from .tracing.trace import trace

        return trace(self.graph, feeds, tensors, steps, backend, path, model=self.source,
                     state=held_state(self), **options)

    def save(self, path: str | os.PathLike) -> None:
        save(self, path)

    def with_input_shapes(self, shapes: dict[str, Any] | str) -> Model:
        """A copy whose inputs have the given static shapes (``{"input": (1, 512)}`` or
        ``"input:[1,512]"``), shapes inferred and the ``If`` nodes they decide inlined
        (`itergraph.shapes.fix_shapes`); as ``ovc --input`` does before writing IR."""
        from .shapes.fix_shapes import fix_input_shapes, parse_input_shapes

        if isinstance(shapes, str):
            shapes = parse_input_shapes(shapes)
        return Model(fix_input_shapes(self.graph, {k: tuple(int(d) for d in v)
                                                   for k, v in shapes.items()}), self.source)


def explanation_text(e: dict[str, Any]) -> str:
    """`Model.explanation` as `explain` prints it."""
    if e["backend"] == "auto":
        return (f"backend auto: {e['engine']} ({e['summary']})\n"
                + explanation_text(e["then"]))
    lines = [f"backend {e['backend']}: {e['summary']}"]
    lines += [f"  [{r['engine']}] {r['element']}: {r['reason']}" for r in e["elements"]]
    return "\n".join(lines)


def load(model: Any, weights: str | os.PathLike | bytes | None = None) -> Model:
    """Load an ONNX file/`ModelProto`, an OpenVINO ``.xml`` (+ ``.bin``), a `Graph` or a Network."""
    try:
        return _load(model, weights)
    except RecursionError as e:  # hostile or absurd nesting of subgraphs
        raise ModelError("the model nests subgraphs too deeply to be read") from e


def _load(model: Any, weights) -> Model:
    is_xml = isinstance(model, str | os.PathLike) and Path(model).suffix.lower() == ".xml"
    if weights is not None and not is_xml:
        raise InputError("weights apply to an OpenVINO .xml model only, not to a "
                         f"{type(model).__name__}" + (f" ('{model}')" if isinstance(
                             model, str | os.PathLike) else ""))
    if isinstance(model, Model):
        return model
    if isinstance(model, Graph):
        graph, source = model, "graph"
    elif hasattr(model, "to_graph"):
        graph, source = model.to_graph(), "network"
    elif isinstance(model, str | os.PathLike):
        path = Path(model)
        suffix = path.suffix.lower()
        if not path.is_file():
            raise InputError(f"cannot load '{path}': no such file")
        if suffix == ".xml":
            from .frontends.openvino import read as read_openvino

            graph = read_openvino(path, weights)
        elif suffix == ".onnx" or suffix == ".pb":
            from .frontends.onnx import read as read_onnx

            graph = read_onnx(path)
        else:
            raise InputError(f"cannot tell the format of '{path}': expected .onnx or .xml")
        source = str(path)
    else:
        try:
            import onnx
        except ImportError:  # pragma: no cover - onnx is a core dependency
            onnx = None
        if onnx is not None and isinstance(model, onnx.ModelProto | bytes):
            from .frontends.onnx import read as read_onnx

            graph, source = read_onnx(model), "onnx.ModelProto"
        else:
            raise InputError(f"cannot load a {type(model).__name__}: expected a path, an "
                             "onnx.ModelProto, an itergraph Graph or a Network")
    verify(graph)
    from .shapes.infer_shapes import complete_step_types

    complete_step_types(graph)  # a zero-iteration loop's outputs (as ONNX Runtime)
    return Model(graph, source)


def save(model: Model | Graph, path: str | os.PathLike) -> None:
    """Write `model` in the format its suffix names: ``.onnx`` or ``.xml`` (+ ``.bin``)."""
    graph = model.graph if isinstance(model, Model) else model
    if not isinstance(graph, Graph):
        raise InputError(f"cannot save a {type(model).__name__}: expected a Model or a Graph")
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"cannot save to a {type(path).__name__}: expected a path ending in "
                         ".onnx or .xml")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".onnx", ".xml"):
        raise InputError(f"cannot tell the format to write from '{path}': use .onnx or .xml")
    if "\0" in str(path):
        raise InputError(f"cannot write {str(path)!r}: the path holds a NUL character")
    fmt = "ONNX" if suffix == ".onnx" else "OpenVINO IR"
    try:
        if suffix == ".onnx":
            import onnx

            from .frontends.onnx import write as write_onnx

            proto = write_onnx(graph)
            try:
                onnx.save(proto, str(path))
            except OSError as e:
                raise _unwritable(path, e) from None
        else:
            from .frontends.openvino import write as write_openvino

            write_openvino(graph, path)
    except Error:
        raise
    except OSError as e:
        raise _unwritable(path, e) from None
    except Exception as e:  # a writer's own fault: say so, not that the path is wrong
        raise ModelError(f"the {fmt} writer failed on this model, not on the path '{path}': "
                         f"{type(e).__name__}: {e}") from e


def _unwritable(path: Path, e: OSError) -> InputError:
    return InputError(f"cannot write '{path}': {e.strerror or e}")


__all__ = ["Model", "load", "save"]
