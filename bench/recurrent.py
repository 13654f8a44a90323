"""Recurrent bench: LSTM/GRU/RNN in every form exporters write, on four engines.

    .venv/bin/python bench/recurrent.py [--cells lstm,gru,rnn] [--forms op,...]
        [--batch 1,16] [--seq 256] [--hidden 128] [--input 64] [--full] [--markdown]

The matrix is cell kind x form (`recurrent_models.FORMS`) x batch x sequence length x hidden
size; the default is a representative subset (every cell and form, batch 1 and 16, 256
steps, 64 -> 128), ``--full`` is the whole matrix (batch 1/4/16/64, sequence
32/256/1024, hidden 128 and 512: hours on a 2-core machine). Each model runs, in this one
process, on itergraph-numpy, itergraph-jax, ONNX Runtime and OpenVINO with one thread each
(OpenVINO forms: not on ONNX Runtime). Times are medians after warm-up; first-run times
(load, compile, first run) and each engine's peak resident set (the rise over the resident
set before it) are reported apart. Every engine's outputs are checked against a plain
float64 loop; a differing cell is marked MISMATCH.

Ratios are to ONNX Runtime on the same model (OpenVINO forms: on the ``op`` form), and
(``/ORT op``) to ONNX Runtime running the fused ``LSTM``/``GRU``/``RNN`` operator for the
same shapes. The floor columns are the time of the recurrent products alone, one
``[B, H] x [H, G*H]`` product per step, times the steps: ``floor np`` with
``numpy.matmul`` (the NumPy backend's BLAS), ``floor xla`` in a jitted ``lax.scan`` doing
nothing else (XLA's CPU code); an engine doing one such product per step cannot beat them by
much. ``--sgemm`` prints this machine's SGEMM rate at those shapes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="lstm,gru,rnn")
    p.add_argument("--forms", default=None, help="comma-separated forms (default: all)")
    p.add_argument("--batch", default="1,16")
    p.add_argument("--seq", default="256")
    p.add_argument("--hidden", default="128")
    p.add_argument("--input", type=int, default=64, help="input size (64)")
    p.add_argument("--full", action="store_true", help="the whole matrix (hours)")
    p.add_argument("--engines", default="numpy,jax,ort,ov")
    p.add_argument("--budget", type=float, default=1.0,
                   help="seconds of steady-state timing per engine and model (1.0)")
    p.add_argument("--max-repeats", type=int, default=200)
    p.add_argument("--sgemm", action="store_true", help="print the machine's SGEMM rates")
    p.add_argument("--markdown", action="store_true")
    return p.parse_args(argv)


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split(",") if t.strip()]


# ----------------------------------------------------------------------------- memory


def _status_kib(field_: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_ + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


@dataclass
class Row:
    spec: object
    form: str
    timings: dict = field(default_factory=dict)  # engine key -> Timing
    rss: dict = field(default_factory=dict)  # engine key -> bytes or None
    floor: float | None = None  # seconds: the recurrent products alone, numpy.matmul
    xla_floor: float | None = None  # the same in a jitted lax.scan


# ----------------------------------------------------------------------------- floor


def gemm_time(batch: int, hidden: int, gh: int, repeats: int = 200) -> float:
    """Median seconds of one ``[batch, hidden] x [hidden, gh]`` float32 numpy.matmul into a
    preallocated output (single thread: set before numpy is imported)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((batch, hidden)).astype(np.float32)
    b = rng.standard_normal((hidden, gh)).astype(np.float32)
    out = np.empty((batch, gh), np.float32)
    for _ in range(10):
        np.matmul(a, b, out=out)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.matmul(a, b, out=out)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def xla_time(batch: int, hidden: int, gh: int, steps: int) -> float | None:
    """Seconds of a jitted ``lax.scan`` of `steps` steps doing only ``h = (h @ R)[:, :H]``:
    the recurrent product as XLA's CPU code runs it, with the loop around it."""
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np

        from itergraph.backends.jax.config import compiler_options
    except ImportError:
        return None
    r = jnp.asarray(np.random.default_rng(0).standard_normal((hidden, gh)).astype(np.float32)
                    / np.sqrt(hidden))

    def fn(h):
        return jax.lax.scan(lambda c, _: ((c @ r)[:, :hidden], None), h, None, length=steps)[0]

    f = jax.jit(fn, compiler_options=compiler_options())
    h0 = jnp.ones((batch, hidden), jnp.float32)
    jax.block_until_ready(f(h0))
    best = float("inf")
    for _ in range(max(3, min(50, int(0.3 / max(steps * 1e-6, 1e-6))))):
        t0 = time.perf_counter()
        jax.block_until_ready(f(h0))
        best = min(best, time.perf_counter() - t0)
    return best


def sgemm_lines(shapes: set[tuple[int, int, int]]) -> list[str]:
    lines = []
    big = gemm_time(1024, 1024, 1024, repeats=5)
    lines.append(f"SGEMM 1024^3, one thread: {2 * 1024 ** 3 / big / 1e9:.0f} GFLOP/s")
    for b, hdn, gh in sorted(shapes):
        t = gemm_time(b, hdn, gh)
        lines.append(f"SGEMM [{b}x{hdn}] x [{hdn}x{gh}]: {t * 1e6:.2f} us "
                     f"({2 * b * hdn * gh / t / 1e9:.1f} GFLOP/s)")
    return lines


# ----------------------------------------------------------------------------- cases


def make_case(spec, form: str, workdir: Path):
    import onnx
    import recurrent_models as rm
    from engines import Case

    feeds = rm.form_feeds(form, spec.feeds(), spec)
    name = f"{spec.cell}-{form}-b{spec.batch}-t{spec.seq}-h{spec.hidden}"
    names = ["Y", *spec.finals]

    def check(_feeds):
        return rm.oracle(spec, spec.feeds(), rm.form_lengths(spec, form))

    if form in rm.ONNX_FORMS:
        path = workdir / f"{name}.onnx"
        onnx.save(rm.onnx_model(spec, form), str(path))
        return Case(name, form, feeds, names, check, onnx_path=str(path))
    path = workdir / f"{name}.xml"
    rm.openvino_model(spec, form, str(path))
    return Case(name, form, feeds, names, check, xml_path=str(path))


def run_row(row: Row, case, engines: dict, budget: float, max_repeats: int) -> None:
    import gc

    import recurrent_models as rm
    from engines import compare, measure

    want = case.oracle(case.feeds)
    tol = {"rtol": 1e-3, "atol": 1e-4}
    for key, engine in engines.items():
        gc.collect()
        _reset_peak()
        before = _status_kib("VmRSS")
        t = measure(engine, case, budget, 1, max_repeats)
        peak = _status_kib("VmHWM")
        row.rss[key] = None if before is None or peak is None else (peak - before) * 1024
        if t.outputs is not None:
            t.mismatch = compare(rm.canonical(row.form, t.outputs), want, **tol)
            t.outputs = None
        row.timings[key] = t


# ----------------------------------------------------------------------------- tables


def _ms(t) -> str:
    if t is None:
        return "-"
    if t.error is not None:
        return t.error if len(t.error) <= 30 else t.error[:27] + "..."
    return f"{t.steady * 1e3:.3g}" + (" MISMATCH" if t.mismatch else "")


def _ratio(a, b) -> str:
    if a is None or b is None or a.steady is None or b.steady is None:
        return "-"
    return f"{a.steady / b.steady:.2f}x"


def _mib(x) -> str:
    return "-" if x is None else f"{x / 2**20:.0f}"


def tables(rows: list[Row], keys: list[str]):
    from loops import COLUMNS, ENGINE_KEYS

    cols = [COLUMNS[ENGINE_KEYS.index(k)] for k in keys]
    ort_op = {}
    for r in rows:
        if r.form == "op":
            ort_op[r.spec] = r.timings.get("ort")
    head = ["cell", "form", "B", "T", "H", *cols, "floor np", "floor xla", "numpy/ORT",
            "jax/ORT", "jax/ORT op"]
    steady = [head]
    first = [["cell", "form", "B", "T", "H", *(f"{c} first" for c in cols),
              *(f"{c} MiB" for c in cols)]]
    for r in rows:
        s = r.spec
        ort = r.timings.get("ort")
        if ort is None or ort.steady is None:
            ort = ort_op.get(s)
        op = ort_op.get(s)
        base = [s.cell, r.form, str(s.batch), str(s.seq), str(s.hidden)]
        steady.append([*base, *(_ms(r.timings.get(k)) for k in keys),
                       "-" if r.floor is None else f"{r.floor * 1e3:.3g}",
                       "-" if r.xla_floor is None else f"{r.xla_floor * 1e3:.3g}",
                       _ratio(r.timings.get("numpy"), ort), _ratio(r.timings.get("jax"), ort),
                       _ratio(r.timings.get("jax"), op)])
        firsts = []
        for k in keys:
            t = r.timings.get(k)
            firsts.append("-" if t is None or t.first is None else f"{t.first * 1e3:.0f}")
        first.append([*base, *firsts, *(_mib(r.rss.get(k)) for k in keys)])
    return steady, first


def mismatches(rows: list[Row], keys: list[str]) -> list[str]:
    out = []
    for r in rows:
        for k in keys:
            t = r.timings.get(k)
            if t is not None and t.mismatch:
                out.append(f"- {r.spec.cell} {r.form} b{r.spec.batch} t{r.spec.seq} "
                           f"h{r.spec.hidden} / {k}: {t.mismatch}")
            elif t is not None and t.detail:
                out.append(f"- {r.spec.cell} {r.form} b{r.spec.batch} / {k}: {t.detail[:300]}")
    return out


# ----------------------------------------------------------------------------- main


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    from loops import configure_threads

    configure_threads(1)
    import recurrent_models as rm
    from engines import preload
    from loops import _load, machine_lines, make_engines, render

    if args.full:
        args.batch, args.seq, args.hidden = "1,4,16,64", "32,256,1024", "128,512"
    cells = [c for c in args.cells.split(",") if c]
    forms = args.forms.split(",") if args.forms else list(rm.FORMS)
    keys = [k for k in args.engines.split(",") if k]
    specs = [rm.Spec(c, b, t, args.input, hdn) for c in cells for hdn in _ints(args.hidden)
             for t in _ints(args.seq) for b in _ints(args.batch)]
    floors, xla_floors = {}, {}
    for s in specs:
        key = (s.batch, s.hidden, s.gh)
        if key not in floors:
            floors[key] = gemm_time(*key)
        if "jax" in keys and (*key, s.seq) not in xla_floors:
            xla_floors[(*key, s.seq)] = xla_time(*key, s.seq)
    engines = make_engines(keys, 1)
    preload(engines)
    load_before = _load()
    rows = []
    with tempfile.TemporaryDirectory(prefix="itergraph-rnn-") as tmp:
        for s in specs:
            for form in forms:
                print(f"running {s.cell} {form} b{s.batch} t{s.seq} h{s.hidden} ...",
                      file=sys.stderr, flush=True)
                key = (s.batch, s.hidden, s.gh)
                row = Row(s, form, floor=floors[key] * s.seq,
                          xla_floor=xla_floors.get((*key, s.seq)))
                case = make_case(s, form, Path(tmp))
                run_row(row, case, engines, args.budget, args.max_repeats)
                rows.append(row)
    md = args.markdown
    bullet = "- " if md else ""
    out = [*(bullet + line for line in machine_lines(1, load_before))]
    if args.sgemm:
        out += [bullet + line for line in sgemm_lines(set(floors))]
    steady, first = tables(rows, keys)
    out += ["", "Steady state (ms, median after warm-up):", "", render(steady, md), "",
            "First run (load + compile + first run, ms) and peak RSS rise (MiB):", "",
            render(first, md)]
    problems = mismatches(rows, keys)
    if problems:
        out += ["", "Mismatches and errors:", "", *problems]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
