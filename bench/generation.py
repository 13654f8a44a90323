"""Generation bench: tokens per second and time to the first token of greedy, beam and
sampling decoding of a small GPT-2-style transformer (random weights, fixed seeds) on
itergraph (NumPy, JAX, auto), ONNX Runtime and OpenVINO, one thread each, in one process.

    .venv/bin/python bench/generation.py [--quick] [--only NAME[,NAME]] [--markdown]
                                         [--engines numpy,jax,auto,ort,ov,ovfe]
                                         [--new-tokens N]

Rows (models from `generation_models.py`; batch 1, an 8-token prompt):
- `greedy-ort`, `beam4-ort`, `sampling-ort`: ONNX Runtime's ``com.microsoft`` GreedySearch,
  BeamSearch (4 beams, 1 sequence returned) and Sampling over a decoder holding ORT's fused
  ops (Attention with a growing past, SkipLayerNormalization, FastGelu). Sampling draws with
  top_p 1e-6 (one candidate survives each step), as itergraph does not reproduce ORT's
  random generator: the tokens can then be checked; the draw's work (softmax, sort, cumsum)
  is still done;
- `greedy-loop`, `beam4-loop`: the same weights as standard-ONNX decoders: a prefill, then an
  ONNX Loop of one decoder step per token, its K/V caches grown by Concat, the token by
  ArgMax (greedy) or by TopK over 4 beams x vocab, the beams' caches and sequences reordered
  by Gather (beam; no end token, the best beam returned).

min_length = max_length, so every call makes exactly `--new-tokens` tokens. OpenVINO runs
the IR itergraph writes for the model (input shapes fixed, as ``ovc --input`` does; `ov`: a
model itergraph cannot write to IR says why in its cell) and the ONNX file read by its own
ONNX frontend (`ovfe`).

For each engine and row: the first call (load, compile, run with `--new-tokens` tokens),
warm-up calls ("auto": and until it has judged both signatures), then timed calls in
rounds, the engines taking turns (a shared VM's speed drifts): calls making `--new-tokens`
tokens give tokens per second (new tokens / median call time), calls making one token give
the time to the first token (median). Every engine's tokens are checked against ONNX
Runtime's, for both calls; a differing cell says MISMATCH.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from loops import configure_threads, machine_lines  # noqa: E402

ENGINES = ("numpy", "jax", "auto", "ort", "ov", "ovfe")
HEAD = {"numpy": "itergraph numpy", "jax": "itergraph jax", "auto": "itergraph auto",
        "ort": "ONNX Runtime", "ov": "OpenVINO (itergraph's IR)",
        "ovfe": "OpenVINO (its ONNX reader)"}
SIZES = {"vocab": 256, "hidden": 64, "heads": 4, "layers": 2, "seed": 4}
PROMPT = 8
ROWS = ("greedy-ort", "beam4-ort", "sampling-ort", "greedy-loop", "beam4-loop")


@dataclass
class Row:
    name: str
    what: str
    onnx: Path
    full: dict            # feeds for a call making `new` tokens
    first: dict           # feeds for a call making one token
    new: int
    xml: Path | None = None
    xml_error: str | None = None


@dataclass
class Result:
    first_call: float | None = None
    tok_s: float | None = None
    ttft: float | None = None
    tokens: list = field(default_factory=list)   # [full, first] outputs
    error: str | None = None
    used: str = ""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="a smoke run: 8 new tokens, short timing (0.1 s, 2 rounds)")
    p.add_argument("--only", default="", help=f"comma-separated rows of {','.join(ROWS)}")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--new-tokens", type=int, default=None, help="new tokens per call (32)")
    p.add_argument("--budget", type=float, default=None,
                   help="timed seconds per engine, row and call kind (1.5; quick 0.1)")
    p.add_argument("--rounds", type=int, default=None, help="rounds of timing (5; quick 2)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    args.new_tokens = args.new_tokens or (8 if args.quick else 32)
    args.budget = args.budget if args.budget is not None else (0.1 if args.quick else 1.5)
    args.rounds = args.rounds or (2 if args.quick else 5)
    return args


# ----------------------------------------------------------------------------- rows


def make_rows(names: set[str], new: int, work: Path) -> list[Row]:
    import generation_models as gm
    import numpy as np
    import onnx

    ids = np.random.default_rng(0).integers(2, SIZES["vocab"], (1, PROMPT))
    rows = []
    dec = None
    for name in ROWS:
        if names and name not in names:
            continue
        if name.endswith("-loop"):
            beams = 4 if name.startswith("beam") else 0
            model = gm.loop_model(**SIZES, beams=beams)
            full = {"input_ids": ids.astype(np.int64), "max_new": np.array(new, np.int64)}
            first = {**full, "max_new": np.array(1, np.int64)}
            what = ("standard ONNX: prefill, then a Loop of decoder steps (K/V caches grown "
                    "by Concat, " + ("4 beams: LogSoftmax, TopK, beams reordered by Gather)"
                                     if beams else "ArgMax)"))
        else:
            op = {"greedy": "GreedySearch", "beam4": "BeamSearch",
                  "sampling": "Sampling"}[name.split("-")[0]]
            dec = dec or gm.fused_decoder(**SIZES)
            full = {"input_ids": ids.astype(np.int32),
                    "max_length": np.array([PROMPT + new], np.int32),
                    "min_length": np.array([PROMPT + new], np.int32)}
            attrs = {}
            if op == "BeamSearch":
                full.update(num_beams=np.array([4], np.int32),
                            num_return_sequences=np.array([1], np.int32),
                            length_penalty=np.array([1.0], np.float32))
            full["attention_mask"] = np.ones((1, PROMPT), np.int32)
            if op == "Sampling":
                full["seed"] = np.array([7], np.int32)
                attrs = {"top_p": 1e-6, "temperature": 0.8}
            model = gm.search_model(op, dec, list(full), **attrs)
            first = {**full, "max_length": np.array([PROMPT + 1], np.int32),
                     "min_length": np.array([PROMPT + 1], np.int32)}
            what = {"GreedySearch": "com.microsoft GreedySearch",
                    "BeamSearch": "com.microsoft BeamSearch, 4 beams, 1 returned",
                    "Sampling": "com.microsoft Sampling, top_p 1e-6, temperature 0.8"}[op]
        path = work / f"{name}.onnx"
        onnx.save(model, str(path))
        row = Row(name, what, path, full, first, new)
        _write_ir(row, work)
        rows.append(row)
    return rows


def _write_ir(row: Row, work: Path) -> None:
    import itergraph as ig

    shapes = {k: v.shape for k, v in row.full.items()}
    try:
        xml = work / f"{row.name}.xml"
        ig.save(ig.load(row.onnx).with_input_shapes(shapes), xml)
        row.xml = xml
    except Exception as e:
        row.xml_error = "no IR: " + _first_line(e)


def _first_line(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith("-- ")]  # OpenVINO: the op it failed on
    said += [ln for ln in lines if not ln.startswith(("Exception from", "Check ", "[CPU]",
                                                       "FrontEnd API"))]
    line = (said or lines or [type(e).__name__])[0]
    line = re.sub(r"^\S+ node '[^']*': ", "", line)  # itergraph's "<Op> node '<name>': "
    return line if len(line) <= 80 else line[:77] + "..."


# ----------------------------------------------------------------------------- engines


def prepare(engine: str, row: Row, threads: int):
    """(feeds -> first output, the itergraph session or None), load and compile paid."""
    import numpy as np

    if engine in ("numpy", "jax", "auto"):
        import itergraph as ig

        sess = ig.load(row.onnx).compile(engine)
        return (lambda f: next(iter(sess.run(f).values()))), sess
    if engine == "ort":
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = so.inter_op_num_threads = threads
        s = ort.InferenceSession(str(row.onnx), so, providers=["CPUExecutionProvider"])
        return (lambda f: s.run(None, f)[0]), None
    if engine == "ov" and row.xml is None:
        raise LookupError(row.xml_error or "no IR")
    import openvino as ov

    core = ov.Core()
    cfg = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
           "PERFORMANCE_HINT": "LATENCY"}
    src = row.xml if engine == "ov" else row.onnx
    compiled = core.compile_model(core.read_model(str(src)), "CPU", cfg)
    req = compiled.create_infer_request()
    out = compiled.outputs[0]
    return (lambda f: np.array(req.infer(f)[out])), None


SETTLE_S = 30.0  # a loaded machine compiles a beam search in 10 s or more, behind the calls


def _settle(run, sess, feeds: list[dict]) -> str:
    """For "auto": call until both signatures are compiled and judged (at most `SETTLE_S`);
    the engine it chose for the first (long) call."""
    from itergraph.tiered import TieredRunner

    runner = getattr(sess, "_call", None)
    if not isinstance(runner, TieredRunner):
        return ""
    end = time.perf_counter() + SETTLE_S
    while time.perf_counter() < end:
        for f in feeds:
            run(f)
        busy = runner.pending or (runner.worker is not None and runner.worker.is_alive())
        if not busy and all(runner.engine_for(f) is not None for f in feeds):
            break
    return runner.engine_for(feeds[0]) or "undecided"


def _preload_generation(engines: list[str], threads: int, work: Path) -> None:
    import generation_models as gm
    import numpy as np
    import onnx

    path = work / "preload.onnx"
    feeds = {"input_ids": np.array([[3, 4]], np.int32), "max_length": np.array([4], np.int32),
             "min_length": np.array([4], np.int32), "attention_mask": np.ones((1, 2), np.int32)}
    onnx.save(gm.search_model("GreedySearch", gm.fused_decoder(), list(feeds)), str(path))
    row = Row("preload", "", path, feeds, feeds, 2)
    for e in engines:
        try:
            prepare(e, row, threads)[0](feeds)
        except Exception:  # reported per row, by the engine itself
            pass


def _clear_jax() -> None:
    """Forget what JAX compiled for earlier rows (they share one decoder), so that every
    first call pays its own compile."""
    if "jax" in sys.modules:
        sys.modules["jax"].clear_caches()


def measure_row(row: Row, engines: list[str], args) -> dict[str, Result]:
    import numpy as np

    res = {e: Result() for e in engines}
    runs = {}
    for e in engines:
        r = res[e]
        try:
            _clear_jax()
            t0 = time.perf_counter()
            run, sess = prepare(e, row, args.threads)
            out = np.asarray(run(row.full))
            r.first_call = time.perf_counter() - t0
            r.tokens = [out, np.asarray(run(row.first))]
            for _ in range(2):
                run(row.full), run(row.first)
            if e == "auto":
                r.used = _settle(run, sess, [row.full, row.first]) or sess.backend
            runs[e] = run
        except Exception as exc:
            r.error = str(exc) if isinstance(exc, LookupError) else \
                f"error: {type(exc).__name__}: {_first_line(exc)}"
    times = {e: ([], []) for e in runs}
    slot = args.budget / args.rounds
    for _ in range(args.rounds):
        for e, run in list(runs.items()):
            try:
                for kind, feeds in enumerate((row.full, row.first)):
                    end = time.perf_counter() + slot
                    while True:
                        a = time.perf_counter()
                        run(feeds)
                        b = time.perf_counter()
                        times[e][kind].append(b - a)
                        if b >= end:
                            break
            except Exception as exc:
                res[e].error = f"error: {type(exc).__name__}: {_first_line(exc)}"
                del runs[e]
    for e in runs:
        full, first = (float(np.median(t)) for t in times[e])
        res[e].tok_s = row.new * row.full["input_ids"].shape[0] / full
        res[e].ttft = first
    return res


def _mismatch(got: list, want: list) -> str | None:
    import numpy as np

    if not got or not want:
        return None
    for kind, g, w in zip(("tokens", "first token"), got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"{kind}: shape {g.shape}, expected {w.shape}"
        if not np.array_equal(g, w):
            return f"{kind}: {int(np.sum(g != w))} of {w.size} differ"
    return None


# ----------------------------------------------------------------------------- table


def _ms(x: float) -> str:
    return f"{x * 1e3:.2f}" if x < 0.1 else f"{x * 1e3:,.0f}"


def cell(r: Result, ref: Result | None, engine: str) -> str:
    if r.error:
        return r.error
    ratio = f" ({r.tok_s / ref.tok_s:.2f}x)" if ref and ref.tok_s and r is not ref else ""
    used = f" [{r.used}]" if r.used else ""
    bad = _mismatch(r.tokens, ref.tokens if ref and r is not ref else [])
    return (f"{r.tok_s:,.0f} tok/s{ratio}, {_ms(r.ttft)} ms{used}"
            + (f" MISMATCH vs ONNX Runtime: {bad}" if bad else ""))


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_threads(args.threads)
    import os
    import tempfile

    engines = [e for e in args.engines.split(",") if e]
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        print(f"unknown engine(s) {bad}; choose from {ENGINES}", file=sys.stderr)
        return 2
    only = {n for n in args.only.split(",") if n}
    load_before = os.getloadavg()[0]
    results = {}
    with tempfile.TemporaryDirectory(prefix="itergraph-gen-") as tmp:
        rows = make_rows(only, args.new_tokens, Path(tmp))
        from real_models import _preload, trivial_rows

        # one-time process costs (imports, JAX's start, OpenVINO's plugin, what the
        # generation ops compile whatever the model) are no row's: each engine runs a trivial
        # model and a GreedySearch over a decoder of other sizes first
        _preload(trivial_rows(Path(tmp))[0], engines, args.threads)
        _preload_generation(engines, args.threads, Path(tmp))
        for row in rows:
            results[row.name] = measure_row(row, engines, args)
            print(f"measured {row.name}", file=sys.stderr, flush=True)
    print_table(rows, results, engines, args, load_before)
    return 0


def print_table(rows, results, engines, args, load_before) -> None:
    md = args.markdown
    head = ["row"] + [HEAD[e] for e in engines] + ["first call (s): " + ", ".join(engines)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] if md \
        else [" | ".join(head)]
    for row in rows:
        res = results[row.name]
        ref = res.get("ort")
        cells = [cell(res[e], ref, e) for e in engines]
        firsts = ", ".join("-" if res[e].first_call is None else f"{res[e].first_call:.2f}"
                           for e in engines)
        lines.append(("| " if md else "") + " | ".join([row.name, *cells, firsts])
                     + (" |" if md else ""))
    print("\n".join(lines))
    print()
    s = SIZES
    print(f"Each cell: new tokens per second ({args.new_tokens} new tokens per call after an "
          f"{PROMPT}-token prompt, batch 1; median call) (x = relative to ONNX Runtime, "
          "higher is faster), then the time to the first token (median of calls making one "
          f"token, ms). Timed calls: {args.budget:g} s per engine, row and call kind in "
          f"{args.rounds} rounds, the engines taking turns, after 2 warm-up calls of each kind "
          f"(auto: and until its signatures are judged, at most {SETTLE_S:.0f} s; [numpy] / "
          "[jax]: the engine it chose). First call: load, compile and one call making all "
          "the tokens. Tokens are checked against ONNX Runtime's. Model: GPT-2-style, "
          f"vocab {s['vocab']}, hidden {s['hidden']}, {s['heads']} heads, {s['layers']} "
          f"layers, random weights (seed {s['seed']}).")
    for row in rows:
        print(f"- {row.name}: {row.what}")
    for line in machine_lines(args.threads, load_before):
        print(line)


if __name__ == "__main__":
    raise SystemExit(main())
