"""Loop benchmark: itergraph (NumPy and JAX backends) against ONNX Runtime and OpenVINO.

    .venv/bin/python bench/loops.py [--quick] [--only NAME[,NAME]] [--threads N] [--markdown]

Every workload of `workloads.py` is written to an ONNX file and run, in this one process, by
each engine with the same thread count. For each engine the table gives the steady-state
time (median of repeated runs after warm-up; µs per loop iteration for the loop-overhead
workloads, else ms) and, separately, the first-run time (load/compile + first run). Every
engine's outputs are checked against the itergraph NumPy backend's (itergraph NumPy itself
against the workload's NumPy oracle); a differing cell is marked MISMATCH. An engine that
refuses a model shows ``rejected: <reason>`` in its cell; full texts follow the table.

`ti_lstm_xml` is the TI spec's Example 2 built with OpenVINO's Python API as a real
TensorIterator and saved as OpenVINO IR; it runs on OpenVINO and on itergraph's OpenVINO reader.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

ENGINE_KEYS = ("numpy", "jax", "ort", "ov")
COLUMNS = ("itergraph-numpy", "itergraph-jax", "ORT", "OpenVINO")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short timing budget (CI-ish speed)")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--threads", type=int, default=1, help="threads for every engine (1)")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    p.add_argument("--engines", default=",".join(ENGINE_KEYS),
                   help=f"comma-separated subset of {','.join(ENGINE_KEYS)}")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of steady-state timing per engine and workload (1.5; quick 0.15)")
    return p.parse_args(argv)


def configure_threads(n: int) -> None:
    """Fix the thread count of NumPy's BLAS and XLA's CPU backend; must run before imports.

    With one thread, XLA's CPU client is also made while the process may use only one core:
    the client sizes the pool its library kernels (YNNPACK's products and reductions) run on
    from the cores the process may use, whatever its flags say, so on two cores a "one-thread"
    JAX engine ran its work on two worker threads (magika: 85 + 86 ticks of CPU time on
    them, 15 on the calling thread, over 200 calls) while ONNX Runtime used one. The pool's
    thread keeps that one core; the process gets all its cores back at once, since
    OpenVINO's CPU plugin crashes on some models (ISTFT, a Loop reading its iteration
    number) in a process that may use only one core of several."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[var] = str(n)
    flags = os.environ.get("XLA_FLAGS", "")
    if n == 1 and "multi_thread_eigen" not in flags:
        flags += " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    os.environ["XLA_FLAGS"] = flags.strip()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if n == 1 and hasattr(os, "sched_setaffinity"):
        usable = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(usable)})
        try:
            import jax

            jax.devices("cpu")
            _ONE_CORE_POOL.append(True)
        except Exception:  # noqa: BLE001 - no JAX here: nothing to size
            pass
        finally:
            os.sched_setaffinity(0, usable)


_ONE_CORE_POOL: list[bool] = []  # whether XLA's pool was made on one core


# ----------------------------------------------------------------------------- machine


def machine_lines(threads: int, load_before: float | None) -> list[str]:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "onnx", "onnxruntime", "openvino", "jax"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            versions[mod] = "not installed"
    pinned = " (XLA's worker pool made on one core)" if _ONE_CORE_POOL else ""
    lines = [f"CPU: {cpu}, {cores} cores available, threads per engine: {threads}{pinned}",
             "versions: " + ", ".join(f"{k} {v}" for k, v in versions.items())]
    lines.append(f"itergraph-jax device: {jax_device()}")
    if load_before is not None:
        lines.append(f"load average (1 min) before/after the run: {load_before:.1f} / "
                     f"{_load():.1f} (timings are noisy when it exceeds the core count)")
    return lines


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def jax_device() -> str:
    try:
        import jax

        dev = jax.devices()[0]
        kind = getattr(dev, "device_kind", "")
        return f"{dev.platform}" + (f" ({kind})" if kind and dev.platform != "cpu" else "")
    except Exception as exc:
        return f"unavailable ({type(exc).__name__})"


# ----------------------------------------------------------------------------- cases


def build_cases(names: set[str], workdir: Path, notes: list[str]):
    import onnx
    import workloads
    from engines import Case

    cases = []
    for w in workloads.WORKLOADS:
        if names and w.name not in names:
            continue
        model, feeds, desc = w.make()
        path = workdir / f"{w.name}.onnx"
        onnx.save(model, str(path))
        cases.append(Case(w.name, desc, feeds, [o.name for o in model.graph.output], w.oracle,
                          onnx_path=str(path), iterations=w.iterations))
    if not names or "ti_lstm_xml" in names:
        try:
            xml = workdir / "ti_lstm.xml"
            feeds, desc = workloads.ti_lstm_openvino(xml)
            cases.append(Case("ti_lstm_xml", desc, feeds, ["Y"], workloads.ti_lstm_oracle,
                              xml_path=str(xml)))
        except Exception as exc:
            notes.append(f"ti_lstm_xml: could not build the TensorIterator with OpenVINO: {exc}")
    return cases


def make_engines(keys: list[str], threads: int) -> dict[str, object]:
    from engines import Itergraph, OnnxRuntime, OpenVino

    makers = {"numpy": lambda: Itergraph("numpy"), "jax": lambda: Itergraph("jax"),
              "ort": lambda: OnnxRuntime(threads), "ov": lambda: OpenVino(threads)}
    return {k: makers[k]() for k in keys}


def run_case(case, engines: dict, budget: float, quick: bool) -> dict:
    """Time every engine on `case` and check its outputs; returns {engine key: Timing}."""
    from engines import compare, measure

    warmup, max_repeats = (1, 50) if quick else (2, 2000)
    results = {k: measure(e, case, budget, warmup, max_repeats) for k, e in engines.items()}
    oracle = case.oracle(case.feeds)
    ref = results.get("numpy")
    if ref is not None and ref.outputs is not None:
        ref.mismatch = compare(ref.outputs, oracle)
        reference = ref.outputs if ref.mismatch is None else oracle
    else:
        reference = oracle
    for key, t in results.items():
        if key != "numpy" and t.outputs is not None:
            t.mismatch = compare(t.outputs, reference)
    return results


# ----------------------------------------------------------------------------- table


def _unit(case, results) -> tuple[str, float]:
    """('µs/iter', seconds -> µs per iteration) for loop-overhead workloads, else ('ms', ...)."""
    if case.iterations is not None:
        outs = next((t.outputs for t in results.values() if t.outputs is not None), None)
        if outs is not None:
            n = case.iterations(case.feeds, outs)
            if n > 0:
                return "µs/iter", 1e6 / n
    return "ms", 1e3


def _num(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _cell(t, scale: float, notes: Notes, case: str, engine: str, first: bool = False) -> str:
    if t is None:
        return "-"
    if t.error is not None:
        if not t.detail:
            return t.error
        kind, _, reason = t.error.partition(": ")
        text = f"{kind} [{notes.ref(engine, t.detail, case)}]: {reason}"
        return text if len(text) <= 44 else text[:41] + "..."
    text = _num((t.first if first else t.steady) * scale)
    return text + (" MISMATCH" if t.mismatch else "")


def _ratio(a, b) -> str:
    if a is None or b is None or a.steady is None or b.steady is None:
        return "-"
    return f"{a.steady / b.steady:.2g}x"


class Notes:
    """Numbered full error texts, one per engine and distinct text, naming their workloads."""

    def __init__(self):
        self.items: dict[tuple[str, str], list[str]] = {}

    def ref(self, engine: str, detail: str, case: str) -> int:
        where = self.items.setdefault((engine, detail[:1500]), [])
        if case not in where:
            where.append(case)
        return list(self.items).index((engine, detail[:1500])) + 1

    def lines(self) -> list[str]:
        return [f"- [{n}] {engine} on {', '.join(where)}: {text}"
                for n, ((engine, text), where) in enumerate(self.items.items(), 1)]


def tables(cases, all_results, keys: list[str], notes: Notes) -> tuple[list, list]:
    cols = [COLUMNS[ENGINE_KEYS.index(k)] for k in keys]
    steady = [["workload", "unit", *cols, "numpy/ORT", "jax/ORT"]]
    first = [["workload", *cols]]
    for case, res in zip(cases, all_results):
        unit, scale = _unit(case, res)
        steady.append([case.name, unit,
                       *(_cell(res.get(k), scale, notes, case.name, c) for k, c in zip(keys, cols)),
                       _ratio(res.get("numpy"), res.get("ort")),
                       _ratio(res.get("jax"), res.get("ort"))])
        first.append([case.name, *(_cell(res.get(k), 1e3, notes, case.name, c, first=True)
                                   for k, c in zip(keys, cols))])
    return steady, first


def render(rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        out = ["| " + " | ".join(rows[0]) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(rows[0]))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(out)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def mismatch_lines(cases, all_results, keys: list[str]) -> list[str]:
    lines = []
    for case, res in zip(cases, all_results):
        for k in keys:
            t = res.get(k)
            if t is not None and t.mismatch:
                ref = "the NumPy oracle" if k == "numpy" else "itergraph-numpy"
                name = COLUMNS[ENGINE_KEYS.index(k)]
                lines.append(f"- {case.name} / {name}: MISMATCH vs {ref}: {t.mismatch}")
    return lines


# ----------------------------------------------------------------------------- main


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_threads(args.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    keys = [k.strip() for k in args.engines.split(",") if k.strip()]
    bad = [k for k in keys if k not in ENGINE_KEYS]
    if bad:
        print(f"unknown engine(s) {bad}; choose from {ENGINE_KEYS}", file=sys.stderr)
        return 2
    names = {n.strip() for n in args.only.split(",") if n.strip()}
    budget = args.budget if args.budget is not None else (0.15 if args.quick else 1.5)

    notes: list[str] = []
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="itergraph-bench-") as tmp:
        cases = build_cases(names, Path(tmp), notes)
        known = {c.name for c in cases}
        for n in sorted(names - known):
            notes.append(f"unknown workload '{n}'")
        engines = make_engines(keys, args.threads)
        from engines import preload

        preload(engines)  # imports and one-time engine start-up are not part of first runs
        all_results = []
        for case in cases:
            print(f"running {case.name} ...", file=sys.stderr, flush=True)
            all_results.append(run_case(case, engines, budget, args.quick))

    table_notes = Notes()
    steady, first = tables(cases, all_results, keys, table_notes)
    md = args.markdown
    bullet = "- " if md else ""
    out = [*(bullet + line for line in machine_lines(args.threads, load_before)), ""]
    out += ["Steady state (median after warm-up; lower is better):", "", render(steady, md), ""]
    out += ["First run (load/compile + first run, ms):", "", render(first, md), ""]
    out += ["Workloads:", ""] + [f"- {c.name}: {c.description}" for c in cases]
    details = (table_notes.lines() + mismatch_lines(cases, all_results, keys)
               + [f"- {n}" for n in notes])
    if details:
        out += ["", "Errors, rejections and mismatches:", "", *details]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
