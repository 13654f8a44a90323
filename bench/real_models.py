"""Per-call latency on real models: itergraph (NumPy, JAX, auto) against ONNX Runtime and
OpenVINO, one thread each, in one process.

    .venv/bin/python bench/real_models.py [--calls 1000] [--seconds 20] [--markdown]
                                          [--only NAME[,NAME]] [--engines numpy,jax,auto,ort,ov]
                                          [--cache DIR] [--offline]

Rows:
- the models packages ship (`shipped_models.MODELS`: the silero VAD family from the
  silero-vad, faster-whisper and @ricky0123/vad-web packages; RapidOCR's PP-OCR classifier,
  recogniser and detector, its orientation classifier and layout detector; ddddocr's quantized
  CRNN with ONNX Runtime contrib ops, its current recogniser and its YOLOX detector; NudeNet's
  YOLOv8n), fetched into `--cache` the first time (needs the package registries once);
- trivial models: an Add of two float[4], one LSTM operator (8 steps, 16 -> 32), a 10-step
  scalar Loop;
- `lowlatency2-lstm`: an OpenVINO LowLatency2 step model (an LSTM TensorIterator whose state
  lives in ReadValue/Assign), called chunk by chunk (no ONNX form: ORT n/a);
- `varying-length`: an LSTM operator over 1 to 64 frames, the length drawn anew for every call
  (as audio chunks and prompts come), to show what a new shape costs at p99.

Every engine streams the same inputs: the recurrent models get back the state they returned
(as a VAD is called every 32 ms of audio). For each engine: the first call (load, compile and
run), then 20 warm-up calls ("auto": and until it has judged its signatures), then `--calls`
timed calls (fewer, not under 200, where the slowest engine would need over `--seconds`),
the engines taking turns in rounds of 50 calls (a shared VM's speed drifts; so each engine
sees the same drift); p50 and p99 per call, and the ratio of p50 to ONNX
Runtime's (OpenVINO's for the IR row). Outputs of every engine's first call are
checked against ONNX Runtime's (OpenVINO's for the IR row); a differing cell says MISMATCH.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from loops import configure_threads, machine_lines  # noqa: E402

ENGINES = ("numpy", "jax", "auto", "ort", "ov")
HEAD = {"numpy": "itergraph numpy", "jax": "itergraph jax", "auto": "itergraph auto",
        "ort": "ONNX Runtime", "ov": "OpenVINO"}


@dataclass
class Row:
    name: str
    what: str
    onnx: Path | None                       # None: the row has only an OpenVINO IR
    xml: Path | None = None
    stream: Callable[[int], list[dict]] | None = None   # call k -> feeds (state filled in)
    carry: dict[str, int] = field(default_factory=dict)  # state input <- output position


@dataclass
class Result:
    first: float | None = None
    p50: float | None = None
    p99: float | None = None
    outputs: list | None = None
    error: str | None = None
    engine_used: str = ""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=1000, help="timed calls per engine (1000)")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--seconds", type=float, default=20.0,
                   help="at most about this long per engine and row: fewer timed calls "
                        f"(not under {MIN_CALLS}) for a row whose slowest engine needs it")
    p.add_argument("--only", default="", help="comma-separated row names")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--cache", default=str(HERE / ".cache"),
                   help="where the shipped models are kept (bench/.cache)")
    p.add_argument("--offline", action="store_true",
                   help="use only the models already in --cache (no download)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args(argv)


# ----------------------------------------------------------------------------- rows


def _declared(path: Path) -> list[tuple[str, list, str]]:
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    out = []
    for v in m.graph.input:
        if v.name in init:
            continue
        t = v.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        out.append((v.name, dims, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)))
    return out


def shipped_row(model, cache: Path, offline: bool = False):
    import numpy as np
    import onnx
    from shipped_models import fetch

    path = model.path(cache) if offline else fetch(model, cache)
    if not path.exists():
        raise FileNotFoundError(f"{path} (offline)")
    inputs = _declared(path)
    outputs = [o.name for o in onnx.load(str(path), load_external_data=False).graph.output]
    rng = np.random.default_rng(0)
    images = {"image": (1, 3, 48, 192), "text-rec": (1, 3, 48, 320), "page": (1, 3, 256, 256),
              "photo-224": (1, 3, 224, 224), "photo-320": (1, 3, 320, 320),
              "photo-416": (1, 3, 416, 416), "layout": (1, 3, 800, 608)}
    if model.kind in images:
        x = rng.random(images[model.kind], np.float32)
        return Row(model.name, model.what, path, stream=lambda k: {inputs[0][0]: x})
    if model.kind == "file-bytes":
        x = rng.integers(0, 256, (1, 2048)).astype(np.int32)
        return Row(model.name, model.what, path, stream=lambda k: {inputs[0][0]: x})
    if model.kind == "text-line":
        x = rng.random((1, 1, 64, 160), np.float32)
        return Row(model.name, model.what, path, stream=lambda k: {inputs[0][0]: x})
    frame = next(d[1] for n, d, _ in inputs if n == "input")
    frame = frame if isinstance(frame, int) and frame > 0 else 512
    t = np.arange(frame * 64, dtype=np.float32) / 16000
    audio = (0.3 * np.sin(2 * np.pi * 220 * t) * (t % 1 < 0.5)
             + 0.02 * rng.standard_normal(t.size)).astype(np.float32)
    fixed = {}
    carry = {}
    for n, dims, dt in inputs:
        if n == "sr":
            fixed[n] = np.array(16000, np.int64).reshape([1] * len(dims))
        elif n != "input":
            shape = [d if d else 1 for d in dims]
            fixed[n] = np.zeros(shape, dt)
            out_name = {"state": "stateN", "h": "hn", "c": "cn"}.get(n, n + "N")
            carry[n] = outputs.index(out_name) if out_name in outputs else \
                [i for i, o in enumerate(outputs) if o.startswith(n[0])][-1]

    def stream(k):
        j = k % 64
        return {"input": audio[j * frame:(j + 1) * frame][None], **fixed}

    return Row(model.name, model.what, path, stream=stream, carry=carry)


def trivial_rows(workdir: Path) -> list[Row]:
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    def save(m, name):
        p = workdir / f"{name}.onnx"
        onnx.save(m, p)
        return p

    def vi(n, t, s):
        return h.make_tensor_value_info(n, t, s)

    ops = [h.make_opsetid("", 17)]
    add = h.make_model(h.make_graph([h.make_node("Add", ["a", "b"], ["y"])], "add",
                                    [vi("a", T.FLOAT, [4]), vi("b", T.FLOAT, [4])],
                                    [vi("y", T.FLOAT, [4])]), opset_imports=ops)
    rng = np.random.default_rng(1)
    W = onnx.numpy_helper.from_array(rng.standard_normal((1, 128, 16)).astype(np.float32) * .3,
                                     "W")
    R = onnx.numpy_helper.from_array(rng.standard_normal((1, 128, 32)).astype(np.float32) * .3,
                                     "R")
    lstm = h.make_model(h.make_graph(
        [h.make_node("LSTM", ["X", "W", "R"], ["Y", "Yh", "Yc"], hidden_size=32)], "lstm",
        [vi("X", T.FLOAT, [None, 1, 16])],
        [vi("Y", T.FLOAT, [None, 1, 1, 32]), vi("Yh", T.FLOAT, [1, 1, 32]),
         vi("Yc", T.FLOAT, [1, 1, 32])], [W, R]), opset_imports=ops)
    body = h.make_graph([h.make_node("Identity", ["c"], ["co"]),
                         h.make_node("Add", ["x", "one"], ["xo"])], "body",
                        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("x", T.FLOAT, [])],
                        [vi("co", T.BOOL, []), vi("xo", T.FLOAT, [])],
                        [onnx.numpy_helper.from_array(np.array(1, np.float32), "one")])
    loop = h.make_model(h.make_graph([h.make_node("Loop", ["M", "", "x0"], ["x"], body=body)],
                                     "loop", [vi("M", T.INT64, []), vi("x0", T.FLOAT, [])],
                                     [vi("x", T.FLOAT, [])]), opset_imports=ops)
    a = np.arange(4, dtype=np.float32)
    X = rng.standard_normal((8, 1, 16)).astype(np.float32)
    M, x0 = np.array(10, np.int64), np.array(0, np.float32)
    lstm_var = Row("varying-length", "LSTM 16 -> 32 over 1-64 frames, a new length each call",
                   save(lstm, "lstm_var"), stream=_varying(rng))
    return [
        Row("add", "Add of two float[4]", save(add, "add"), stream=lambda k: {"a": a, "b": a}),
        Row("lstm-op", "one LSTM operator, 8 steps, 16 -> 32, batch 1", save(lstm, "lstm"),
            stream=lambda k: {"X": X}),
        Row("loop-10", "a 10-step scalar Loop (x = x + 1)", save(loop, "loop"),
            stream=lambda k: {"M": M, "x0": x0}),
        lstm_var,
    ]


def _varying(rng):
    import numpy as np

    lengths = rng.integers(1, 65, size=4096)
    frames = rng.standard_normal((64, 1, 16)).astype(np.float32)
    return lambda k: {"X": frames[:lengths[k % lengths.size]]}


def lowlatency_row(workdir: Path) -> Row:
    """An LSTM TensorIterator over 10-frame chunks (40 features, 128 hidden), made stateful
    by OpenVINO's LowLatency2: each call continues the sequence of the previous one."""
    import numpy as np
    import openvino as ov
    import openvino.opset8 as ops
    from openvino._offline_transformations import apply_low_latency_transformation

    rng = np.random.default_rng(2)
    b, seq, n_in, hs = 1, 10, 40, 128
    w = [rng.standard_normal(s).astype(np.float32) * 0.1
         for s in [(4 * hs, n_in), (4 * hs, hs), (4 * hs,)]]
    X = ops.parameter([b, seq, n_in], np.float32, name="X")
    H0 = ops.parameter([b, hs], np.float32, name="H0")
    C0 = ops.parameter([b, hs], np.float32, name="C0")
    xi = ops.parameter([b, 1, n_in], np.float32, name="xi")
    hi = ops.parameter([b, hs], np.float32, name="hi")
    ci = ops.parameter([b, hs], np.float32, name="ci")
    cell = ops.lstm_cell(ops.squeeze(xi, ops.constant(np.array([1], np.int64))), hi, ci,
                         ops.constant(w[0]), ops.constant(w[1]), ops.constant(w[2]), hs)
    rh, rc = ops.result(cell.output(0)), ops.result(cell.output(1))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rh, rc], [xi, hi, ci], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, H0.output(0), rh.output(0))
    ti.set_merged_input(ci, C0.output(0), rc.output(0))
    model = ov.Model([ti.get_iter_value(rh.output(0), -1)], [X, H0, C0], "lstm_ti")
    apply_low_latency_transformation(model, True)
    xml = workdir / "lowlatency2_lstm.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    xs = rng.standard_normal((64, b, seq, n_in)).astype(np.float32)
    zeros = np.zeros((b, hs), np.float32)
    return Row("lowlatency2-lstm", "OpenVINO LowLatency2 LSTM step (10 frames, 40 -> 128), "
               "state in ReadValue/Assign", None, xml=xml,
               stream=lambda k: {"X": xs[k % 64], "H0": zeros, "C0": zeros})


# ----------------------------------------------------------------------------- engines


def prepare(engine: str, row: Row, threads: int):
    """A function feeds -> list of outputs, everything a user pays once already paid."""
    import numpy as np

    if engine in ("numpy", "jax", "auto"):
        import itergraph as ig

        sess = ig.load(row.xml or row.onnx).compile(engine)
        run = sess.run
        prepare.used = sess.backend
        prepare.session = sess
        return lambda f: list(run(f).values())
    if engine == "ort":
        import onnxruntime as ort

        if row.onnx is None:
            raise LookupError("n/a (OpenVINO IR)")
        so = ort.SessionOptions()
        so.intra_op_num_threads = so.inter_op_num_threads = threads
        s = ort.InferenceSession(str(row.onnx), so, providers=["CPUExecutionProvider"])
        names = {i.name for i in s.get_inputs()}
        return lambda f: s.run(None, {k: v for k, v in f.items() if k in names})
    import openvino as ov

    core = ov.Core()
    cfg = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
           "PERFORMANCE_HINT": "LATENCY"}
    compiled = core.compile_model(core.read_model(str(row.xml or row.onnx)), "CPU", cfg)
    req = compiled.create_infer_request()
    outs = list(compiled.outputs)
    return lambda f: [np.array(r) for r in (lambda res: [res[o] for o in outs])(req.infer(f))]


class _Stream:
    """One engine streaming a row: its own carried state, its call count, its timings."""

    def __init__(self, engine: str, row: Row):
        self.engine, self.row = engine, row
        self.state: dict = {}
        self.k = 0
        self.run = None
        self.session = None
        self.times: list[float] = []
        self.res = Result()

    def feeds(self, k):
        f = dict(self.row.stream(k))
        f.update(self.state)
        return f

    def call(self, timed: bool = False):
        import numpy as np

        f = self.feeds(self.k)
        a = time.perf_counter()
        outs = self.run(f)
        if timed:
            self.times.append(time.perf_counter() - a)
        self.k += 1
        for name, pos in self.row.carry.items():
            self.state[name] = np.asarray(outs[pos])
        return outs

    def fail(self, e: Exception) -> None:
        if isinstance(e, LookupError):
            self.res.error = str(e)
        else:  # a refusal or failure is a cell of the table
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            said = [ln for ln in lines if ln.startswith("-- ")]  # OpenVINO: the failed op
            said += [ln for ln in lines if not ln.startswith(("Exception from", "Check ",
                                                               "FrontEnd API"))]
            text = (said or lines or [""])[0]
            self.res.error = f"error: {type(e).__name__}: {text[:90]}"


ROUND = 50  # calls per engine per round: engines take turns, so a machine's drift is shared
MIN_CALLS = 200  # the fewest timed calls per engine (p99 is then the 2nd-slowest call)


def measure_row(row: Row, engines: list[str], calls: int, warmup: int, threads: int,
                seconds: float = float("inf")) -> tuple[dict[str, Result], int]:
    """Prepare and first-call every engine, warm each up (and let "auto" settle), then time
    `calls` calls per engine in rounds of `ROUND`, the engines taking turns; fewer (not under
    `MIN_CALLS`) where the slowest engine's warm-up calls say they would take more than
    `seconds`. Returns the results and the number of timed calls."""
    import numpy as np

    streams = {e: _Stream(e, row) for e in engines}
    per_call = 0.0
    for e, st in streams.items():
        try:
            t0 = time.perf_counter()
            prepare.used, prepare.session = e, None
            st.run = prepare(e, row, threads)
            st.res.outputs = [np.asarray(o) for o in st.call()]
            st.res.first = time.perf_counter() - t0
            st.res.engine_used, st.session = prepare.used, prepare.session
            warm = []
            for _ in range(warmup):
                t1 = time.perf_counter()
                st.call()
                warm.append(time.perf_counter() - t1)
            # the median: a stream of new shapes compiles in some warm-up calls, not per call
            per_call = max(per_call, float(np.median(warm)) if warm else 0.0)
            _settle(st)
        except Exception as exc:
            st.fail(exc)
    if per_call * calls > seconds:
        calls = max(MIN_CALLS, int(seconds / per_call) // ROUND * ROUND)
    live = [st for st in streams.values() if st.res.error is None]
    for _ in range(-(-calls // ROUND)):
        for st in list(live):
            try:
                for _ in range(ROUND):
                    st.call(timed=True)
            except Exception as exc:
                st.fail(exc)
                live.remove(st)
    for st in live:
        t = np.array(st.times[:calls])
        st.res.p50, st.res.p99 = (float(np.percentile(t, q)) for q in (50, 99))
        if st.engine == "auto" and st.session is not None:
            st.res.engine_used = _picked(st, calls)
    return {e: st.res for e, st in streams.items()}, calls


def _picked(st: _Stream, calls: int) -> str:
    """The engines "auto" ran the timed calls' signatures on (`Session.engine_for`):
    ``numpy``, ``jax``, or their shares of the calls."""
    from collections import Counter

    picks = Counter(st.session.engine_for(st.feeds(k)) or "numpy"
                    for k in range(st.k - calls, st.k))
    if len(picks) == 1:
        return next(iter(picks))
    return " / ".join(f"{e} {n / calls:.0%}" for e, n in picks.most_common())


def _preload(row: Row, engines: list[str], threads: int) -> None:
    """Each engine once on a trivial model, so that no row's first call includes one-time
    process costs (imports, plugin loading)."""
    for e in engines:
        try:
            prepare(e, row, threads)(row.stream(0))
        except Exception:  # reported per row, by the engine itself
            pass


SETTLE_S = 15.0


def _settle(st: _Stream) -> None:
    """For "auto" on JAX: call until the stream's signatures are compiled and judged (at most
    `SETTLE_S`), so that the timed calls show its steady state."""
    from itergraph.tiered import TieredRunner

    runner = getattr(st.session, "_call", None)
    if st.engine != "auto" or not isinstance(runner, TieredRunner):
        return
    end = time.perf_counter() + SETTLE_S
    while time.perf_counter() < end:
        st.call()
        busy = runner.pending or (runner.worker is not None and runner.worker.is_alive())
        if not busy and runner.engine_for(st.feeds(st.k)) is not None:
            return


def _mismatch(got, want) -> str | None:
    import numpy as np

    if got is None or want is None:
        return None
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape}, expected {w.shape}"
        if not np.allclose(g, w, rtol=1e-3, atol=1e-4):
            return f"output {i}: max |diff| {np.max(np.abs(g - w)):.2e}"
    return None


# ----------------------------------------------------------------------------- table


def _us(x: float) -> str:
    return f"{x * 1e6:,.0f}" if x < 1e-2 else f"{x * 1e3:,.1f} ms"


def cell(r: Result, ref: Result | None, ref_name: str) -> str:
    if r.error:
        return r.error
    ratio = f" ({r.p50 / ref.p50:.2f}x)" if ref and ref.p50 and r is not ref else ""
    bad = _mismatch(r.outputs, ref.outputs if ref else None)
    used = f" [{r.engine_used}]" if r.engine_used not in ("", "ort", "ov") and \
        r.engine_used != cell.engine else ""
    return (f"{_us(r.p50)} / {_us(r.p99)}{ratio}{used}"
            + (f" MISMATCH vs {ref_name}: {bad}" if bad else ""))


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_threads(args.threads)
    import os
    import tempfile

    from shipped_models import MODELS

    engines = [e for e in args.engines.split(",") if e]
    only = {n for n in args.only.split(",") if n}
    load_before = os.getloadavg()[0]
    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for m in MODELS:
            if only and m.name not in only:
                continue
            try:
                rows.append(shipped_row(m, Path(args.cache), args.offline))
            except Exception as e:
                notes.append(f"{m.name}: not fetched ({type(e).__name__}: {e})")
        makers = [lambda: trivial_rows(work), lambda: [lowlatency_row(work)]]
        for make in makers:
            try:
                rows.extend(r for r in make() if not only or r.name in only)
            except ImportError as e:  # OpenVINO builds the LowLatency2 model
                notes.append(f"rows not built: {e}")
        results: dict[str, dict[str, Result]] = {}
        _preload(trivial_rows(work)[0], engines, args.threads)
        for row in rows:
            results[row.name], n = measure_row(row, engines, args.calls, args.warmup,
                                               args.threads, args.seconds)
            if n != args.calls:
                row.what += f" ({n} timed calls per engine)"
            print(f"measured {row.name}", file=sys.stderr, flush=True)
    print_table(rows, results, engines, args, notes, load_before)
    return 0


def print_table(rows, results, engines, args, notes, load_before) -> None:
    md = args.markdown
    head = ["model"] + [HEAD[e] for e in engines] + ["first call (s): " + ", ".join(engines)]
    lines = []
    if md:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    else:
        lines.append(" | ".join(head))
    for row in rows:
        res = results[row.name]
        ref_name = "ort" if row.onnx is not None else "ov"
        ref = res.get(ref_name)
        cells = []
        for e in engines:
            cell.engine = e
            cells.append(cell(res[e], ref, HEAD[ref_name]))
        firsts = ", ".join("-" if res[e].first is None else f"{res[e].first:.2f}"
                           for e in engines)
        lines.append(("| " if md else "") + " | ".join([row.name, *cells, firsts])
                     + (" |" if md else ""))
    print("\n".join(lines))
    print()
    print(f"p50 / p99 per call in µs (ms where marked), {args.calls} calls per engine "
          f"(fewer, not under {MIN_CALLS}, where they would take the slowest engine over "
          f"{args.seconds:.0f} s: the row's note says how many) in "
          f"rounds of {ROUND}, the engines taking turns, after {args.warmup} warm-up calls "
          f"(auto: and until the signatures it compiles behind "
          f"its calls are judged, at most {SETTLE_S:.0f} s); (x) = p50 relative to ONNX "
          "Runtime (OpenVINO on the IR row); [jax], [numpy] = the engine auto ran the timed "
          "calls on (with their shares where the signatures went to both).")
    for row in rows:
        print(f"- {row.name}: {row.what}")
    for n in notes:
        print(f"- {n}")
    for line in machine_lines(args.threads, load_before):
        print(line)


if __name__ == "__main__":
    raise SystemExit(main())
