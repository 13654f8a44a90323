"""Engine adapters for the loop benchmark: itergraph (NumPy, JAX), ONNX Runtime, OpenVINO.

Each engine's `prepare(case)` does everything a user pays for once (load, compile, session
creation) and returns a zero-argument runner that executes the model once and returns its
outputs as NumPy arrays in graph output order. `prepare` raises `Rejected` when the engine
refuses the model (import/compile failure) and `NotApplicable` when the case has no form
the engine reads; any other exception is a run failure. Thread settings must be in the
environment before this module is imported (see `loops.configure_threads`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Runner = Callable[[], list[np.ndarray]]


class Rejected(Exception):
    """The engine refused to load or compile the model."""


class NotApplicable(Exception):
    """The case has no form this engine reads (e.g. an OpenVINO .xml for ONNX Runtime)."""


@dataclass
class Case:
    """One benchmark row: the model as files on disk plus its feeds and how to check it."""

    name: str
    description: str
    feeds: dict[str, np.ndarray]
    output_names: list[str]
    oracle: Callable[[dict], list[np.ndarray]]
    onnx_path: str | None = None
    xml_path: str | None = None
    iterations: Callable[[dict, list], int] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.onnx_path or self.xml_path or ""


def _as_arrays(values) -> list[np.ndarray]:
    return [np.asarray(v) for v in values]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


class Itergraph:
    """itergraph's public API: `ig.load(path)` then `Model.run(feeds, backend=...)`."""

    def __init__(self, backend: str):
        self.backend = backend
        self.name = f"itergraph-{backend}"

    def prepare(self, case: Case) -> Runner:
        import itergraph as ig

        if self.backend == "jax":
            try:
                import itergraph.backends.jax as jax_backend  # noqa: F401
            except Exception as exc:  # the JAX backend may be missing or broken
                raise Rejected(f"backend unavailable: {_short(exc)}") from exc
        try:
            model = ig.load(case.path)
        except Exception as exc:
            raise Rejected(_short(exc)) from exc
        feeds, backend = case.feeds, self.backend
        return lambda: _as_arrays(model.run(feeds, backend=backend).values())


class OnnxRuntime:
    """ONNX Runtime CPU session with intra/inter-op threads fixed to the benchmark's count."""

    name = "ORT"

    def __init__(self, threads: int):
        self.threads = threads

    def prepare(self, case: Case) -> Runner:
        import onnxruntime as ort

        if case.onnx_path is None:
            raise NotApplicable("n/a (OpenVINO IR)")
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = self.threads
        try:
            sess = ort.InferenceSession(case.onnx_path, so, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise Rejected(_short(exc)) from exc
        wanted = {i.name for i in sess.get_inputs()}
        feeds = {k: v for k, v in case.feeds.items() if k in wanted}
        return lambda: _as_arrays(sess.run(None, feeds))


class OpenVino:
    """OpenVINO CPU plugin; ONNX files go through OpenVINO's own ONNX importer (read_model)."""

    name = "OpenVINO"

    def __init__(self, threads: int):
        self.threads = threads

    def prepare(self, case: Case) -> Runner:
        import openvino as ov

        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": self.threads, "INFERENCE_PRECISION_HINT": "f32",
                  "PERFORMANCE_HINT": "LATENCY"}
        try:
            compiled = core.compile_model(core.read_model(case.path), "CPU", config)
        except Exception as exc:
            raise Rejected(_short(exc)) from exc
        request = compiled.create_infer_request()
        outputs = _order_outputs(compiled.outputs, case.output_names)
        feeds = case.feeds

        def run() -> list[np.ndarray]:
            result = request.infer(feeds)
            return [np.array(result[o]) for o in outputs]

        return run


def _order_outputs(ports, names: list[str]) -> list:
    """OpenVINO output ports in the graph's output order (by tensor name, else by position)."""
    by_name = {}
    for port in ports:
        for n in port.get_names():
            by_name[n] = port
    if all(n in by_name for n in names):
        return [by_name[n] for n in names]
    return list(ports)


def preload(engines: dict) -> None:
    """Run every engine once on a 2-iteration Loop so that no workload's first-run time
    includes one-time process costs (module imports, plugin loading, lazy registries)."""
    import tempfile

    import onnx
    from workloads import tiny_loop, tiny_loop_oracle

    model, feeds, _ = tiny_loop(2)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/warm.onnx"
        onnx.save(model, path)
        case = Case("warm-up", "", feeds, ["x"], tiny_loop_oracle, onnx_path=path)
        for engine in engines.values():
            try:
                engine.prepare(case)()
            except Exception:  # reported later, per workload, by the engine itself
                pass


# ----------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """Result of one engine on one case: times in seconds, or why there are none."""

    first: float | None = None       # prepare + first run
    steady: float | None = None      # median of the steady-state runs
    repeats: int = 0
    outputs: list[np.ndarray] | None = None
    error: str | None = None         # 'rejected: ...', 'error: ...', 'n/a ...'
    detail: str | None = None        # full error text for the notes
    mismatch: str | None = None      # set when outputs differ from the reference


def measure(engine, case: Case, budget: float, warmup: int, max_repeats: int) -> Timing:
    """Prepare + first run (timed together), `warmup` more runs, then the median of enough
    runs to fill about `budget` seconds (at least 3, or 1 when `max_repeats` is 1)."""
    try:
        t0 = time.perf_counter()
        runner = engine.prepare(case)
    except NotApplicable as exc:
        return Timing(error=str(exc))
    except Rejected as exc:
        return Timing(error=f"rejected: {exc}", detail=_detail(exc))
    except Exception as exc:
        return Timing(error=f"error: {_short(exc)}", detail=_detail(exc))
    try:
        outputs = runner()
        first = time.perf_counter() - t0
        for _ in range(warmup):
            runner()
        t1 = time.perf_counter()
        runner()
        probe = time.perf_counter() - t1
        repeats = max(min(3, max_repeats), min(max_repeats, int(budget / max(probe, 1e-9))))
        times = []
        for _ in range(repeats):
            t1 = time.perf_counter()
            runner()
            times.append(time.perf_counter() - t1)
    except Exception as exc:
        return Timing(error=f"error: {_short(exc)}", detail=_detail(exc))
    return Timing(first=first, steady=statistics.median(times), repeats=repeats, outputs=outputs)


def _detail(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    return f"{type(cause).__name__}: {str(cause).strip()}"


# ----------------------------------------------------------------------------- checking


def compare(got: list[np.ndarray], want: list[np.ndarray], rtol=1e-4, atol=1e-5) -> str | None:
    """None when `got` matches `want` (allclose for floats, exact otherwise), else why not."""
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"output {k}: shape {g.shape}, expected {w.shape}"
        if np.issubdtype(w.dtype, np.floating):
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                err = float(np.max(np.abs(g.astype(np.float64) - w)))
                return f"output {k}: max abs error {err:.3g}"
        elif not np.array_equal(g, w):
            return f"output {k}: values differ"
    return None
