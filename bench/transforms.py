"""Transforms bench: ONNX Runtime and OpenVINO on original and optimized files.

    .venv/bin/python bench/transforms.py [--quick] [--models a,b] [--transforms t1,t2]
        [--threads N] [--markdown]

Every model (`MODELS`: small constant-count loops, a loop over rows, a Scan, Scan and Loop
LSTMs, and, with ``--corpus``, real-world corpus files) is crossed with every transform of
`TRANSFORMS` (``unroll``, ``unroll=4``, ``loop-to-scan``, ``scan-to-loop``, ``loop-to-ti``,
``fuse-cells``; add a name there to add its rows). Each pair gives one row: the transform
applied with `itergraph.transforms.optimize`, the original and the optimized file written,
both timed in this one process by ONNX Runtime and OpenVINO with the same thread count
(medians after warm-up, µs), their speedups, the loop ops before and after, and the file
sizes. Nothing is skipped silently: a transform that is not registered shows ``n/a (not
registered)``, one that leaves the model unchanged ``unchanged``.

Files: ONNX Runtime runs the original and the optimized ``.onnx``. OpenVINO runs the
original ``.onnx`` through its own ONNX importer and the optimized file in the transform's
target format: the ``.xml`` that ``ig.save`` writes for ``loop-to-ti`` (OpenVINO's loop form),
the ``.onnx`` otherwise. Every engine's outputs are checked against itergraph's NumPy run of
the original; a differing cell is marked MISMATCH.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRANSFORMS = ("unroll", "unroll=4", "loop-to-scan", "scan-to-loop", "loop-to-ti", "fuse-cells")
#: Transforms whose result is meant for OpenVINO's IR: OpenVINO runs the written .xml.
IR_TARGET = {"loop-to-ti"}
#: A sample of the real-world corpus the loop transforms apply to (``--corpus``).
CORPUS = ("torch/for_over_rows_op23", "torch/for_range_const_op23", "torch/scan_rnn_dynamo_op20")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short timing budget")
    p.add_argument("--models", default="", help="comma-separated model names (default: all)")
    p.add_argument("--transforms", default=",".join(TRANSFORMS))
    p.add_argument("--corpus", action="store_true", help="add real-world corpus models")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of timing per engine and file (1.0; quick 0.15)")
    p.add_argument("--markdown", action="store_true")
    return p.parse_args(argv)


# ----------------------------------------------------------------------------- models


@dataclass
class BenchModel:
    name: str
    description: str
    model: object  # onnx.ModelProto
    feeds: dict


def _count_loop(steps: int, width: int = 8):
    """``acc = acc * a + b`` for a constant number of steps, every acc kept (scan output)."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    body = h.make_graph(
        [h.make_node("Mul", ["acc", "a"], ["m"]), h.make_node("Add", ["m", "b"], ["acc2"]),
         h.make_node("Identity", ["c"], ["c2"]), h.make_node("Identity", ["acc2"], ["y"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("c", T.BOOL, []),
                 h.make_tensor_value_info("acc", T.FLOAT, [width])],
        [h.make_tensor_value_info("c2", T.BOOL, []),
         h.make_tensor_value_info("acc2", T.FLOAT, [width]),
         h.make_tensor_value_info("y", T.FLOAT, [width])])
    vi = [h.make_tensor_value_info(n, T.FLOAT, [width]) for n in ("a0", "a", "b")]
    g = h.make_graph([h.make_node("Loop", ["n", "", "a0"], ["acc", "ys"], body=body)], "g", vi,
                     [h.make_tensor_value_info("acc", T.FLOAT, [width]),
                      h.make_tensor_value_info("ys", T.FLOAT, [steps, width])],
                     [numpy_helper.from_array(np.array(steps, np.int64), "n")])
    rng = np.random.default_rng(steps)
    feeds = {k: rng.standard_normal(width).astype(np.float32) * 0.5 for k in ("a0", "a", "b")}
    return _model(g), feeds


def _row_loop(rows: int, width: int = 32):
    """torch.onnx's ``for i in range(x.shape[0])``: trip count from the shape, ``Gather`` of
    row i, ``acc = tanh(acc + x[i] * i)``, every acc kept."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    body = h.make_graph(
        [h.make_node("Gather", ["x", "i"], ["xi"], axis=0),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT), h.make_node("Mul", ["xi", "fi"], ["p"]),
         h.make_node("Add", ["acc", "p"], ["q"]), h.make_node("Tanh", ["q"], ["acc2"]),
         h.make_node("Identity", ["c"], ["c2"]), h.make_node("Identity", ["acc2"], ["y"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("c", T.BOOL, []),
                 h.make_tensor_value_info("acc", T.FLOAT, [width])],
        [h.make_tensor_value_info("c2", T.BOOL, []),
         h.make_tensor_value_info("acc2", T.FLOAT, [width]),
         h.make_tensor_value_info("y", T.FLOAT, [width])])
    g = h.make_graph(
        [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         h.make_node("Loop", ["n", "", "a0"], ["acc", "ys"], body=body)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [rows, width]),
         h.make_tensor_value_info("a0", T.FLOAT, [width])],
        [h.make_tensor_value_info("acc", T.FLOAT, [width]),
         h.make_tensor_value_info("ys", T.FLOAT, [rows, width])],
        [numpy_helper.from_array(np.array(0, np.int64), "zero")])
    rng = np.random.default_rng(rows)
    return _model(g), {"x": rng.standard_normal((rows, width)).astype(np.float32) * 0.1,
                       "a0": np.zeros(width, np.float32)}


def _scan(steps: int, width: int = 32):
    """An ONNX Scan: ``acc = relu(acc + x[t])``, every acc kept."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h

    body = h.make_graph(
        [h.make_node("Add", ["acc", "xt"], ["s"]), h.make_node("Relu", ["s"], ["acc2"]),
         h.make_node("Identity", ["acc2"], ["y"])],
        "body", [h.make_tensor_value_info("acc", T.FLOAT, [width]),
                 h.make_tensor_value_info("xt", T.FLOAT, [width])],
        [h.make_tensor_value_info("acc2", T.FLOAT, [width]),
         h.make_tensor_value_info("y", T.FLOAT, [width])])
    g = h.make_graph(
        [h.make_node("Scan", ["a0", "x"], ["acc", "ys"], body=body, num_scan_inputs=1)], "g",
        [h.make_tensor_value_info("a0", T.FLOAT, [width]),
         h.make_tensor_value_info("x", T.FLOAT, [steps, width])],
        [h.make_tensor_value_info("acc", T.FLOAT, [width]),
         h.make_tensor_value_info("ys", T.FLOAT, [steps, width])])
    rng = np.random.default_rng(steps)
    return _model(g), {"a0": np.zeros(width, np.float32),
                       "x": rng.standard_normal((steps, width)).astype(np.float32)}


def _lstm(form: str, seq: int):
    import recurrent_models as rm

    spec = rm.Spec("lstm", batch=1, seq=seq, inp=16, hidden=32)
    return rm.onnx_model(spec, form), spec.feeds()


def _model(graph):
    from onnx import helper as h

    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def build_models(quick: bool, corpus: bool) -> list[BenchModel]:
    steps = 32 if quick else 64
    out = [BenchModel("count-4", "acc = acc*a + b, 4 constant steps, [8]", *_count_loop(4)),
           BenchModel("count-16", "the same, 16 steps", *_count_loop(16)),
           BenchModel(f"rows-{steps}", f"torch-style Loop over {steps} rows of [32]",
                      *_row_loop(steps)),
           BenchModel(f"scan-{steps}", f"ONNX Scan over {steps} steps of [32]", *_scan(steps)),
           BenchModel("lstm-scan", "LSTM as a Scan (MatMul body), 32 steps, 16 -> 32",
                      *_lstm("scan_matmul", 32)),
           BenchModel("lstm-loop", "LSTM as a Loop gathering X[i], 32 steps, 16 -> 32",
                      *_lstm("loop_gather", 32))]
    if corpus:
        out += _corpus_models()
    return out


def _corpus_models() -> list[BenchModel]:
    import onnx

    sys.path.insert(0, str(HERE.parent / "tests" / "realworld"))
    from corpus import entries

    found = {e.id: e for e in entries()}
    out = []
    for cid in CORPUS:
        e = found.get(cid)
        if e is None or e.format != "onnx":
            print(f"corpus entry {cid} not found", file=sys.stderr)
            continue
        out.append(BenchModel(cid, e.description or "real-world corpus",
                              onnx.load(str(e.file)), e.feeds()))
    return out


# ----------------------------------------------------------------------------- one row


@dataclass
class Row:
    model: str
    transform: str
    status: str = ""  # "", "unchanged", "n/a (not registered)", "error: ..."
    loops: str = ""
    ort: tuple = (None, None)  # Timing of the original, of the optimized
    ov: tuple = (None, None)
    sizes: tuple = (0, 0)


def loop_ops(path: Path) -> str:
    """The loop ops of a written file, bodies included (``Loop x2, Scan``)."""
    if path.suffix == ".xml":
        import xml.etree.ElementTree as ET

        kinds = [la.get("type") for la in ET.parse(path).getroot().iter("layer")
                 if la.get("type") in ("Loop", "TensorIterator")]
    else:
        import onnx

        kinds = []

        def walk(g):
            for n in g.node:
                if n.op_type in ("Loop", "Scan", "LSTM", "GRU", "RNN"):
                    kinds.append(n.op_type)
                for a in n.attribute:
                    if a.g.node:
                        walk(a.g)
        walk(onnx.load(str(path)).graph)
    if not kinds:
        return "none"
    counts = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    return ", ".join(k if c == 1 else f"{k} x{c}" for k, c in counts.items())


def run_pair(bm: BenchModel, transform: str, workdir: Path, engines: dict, budget: float,
             want: list) -> Row:
    import onnx
    from engines import Case, compare, measure

    import itergraph as ig
    from itergraph.transforms import TRANSFORMS as REGISTERED
    from itergraph.transforms import optimize

    row = Row(bm.model if isinstance(bm.model, str) else bm.name, transform)
    name, _, arg = transform.partition("=")
    if name not in REGISTERED:
        row.status = "n/a (not registered)"
        return row
    stem = bm.name.replace("/", "_")
    orig = workdir / f"{stem}.onnx"
    if not orig.exists():
        onnx.save(bm.model, str(orig))
    try:
        p = REGISTERED[name].build(arg or None)
        changed = p(ig.load(bm.model).graph)
        optimized = optimize(bm.model, [transform])
    except Exception as exc:  # reported in the row
        row.status = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
        return row
    if not changed:
        row.status = "unchanged"
        return row
    suffix = ".xml" if name in IR_TARGET else ".onnx"
    opt = workdir / f"{stem}.{name}{arg}{suffix}"
    opt_onnx = workdir / f"{stem}.{name}{arg}.onnx"
    ig.save(optimized, opt)
    if suffix != ".onnx":
        ig.save(optimized, opt_onnx)
    row.loops = f"{loop_ops(orig)} -> {loop_ops(opt)}"
    row.sizes = (_size(orig), _size(opt))
    names = [o.name for o in bm.model.graph.output]

    def timed(engine, path: Path):
        kw = {"onnx_path": str(path)} if path.suffix == ".onnx" else {"xml_path": str(path)}
        case = Case(bm.name, "", bm.feeds, names, lambda _f: want, **kw)
        t = measure(engine, case, budget, warmup=2, max_repeats=2000)
        if t.outputs is not None:
            t.mismatch = compare(t.outputs, want)
        return t

    if "ort" in engines:
        row.ort = (timed(engines["ort"], orig), timed(engines["ort"], opt_onnx))
    if "ov" in engines:
        row.ov = (timed(engines["ov"], orig), timed(engines["ov"], opt))
    return row


def _size(path: Path) -> int:
    size = path.stat().st_size
    if path.suffix == ".xml":
        size += path.with_suffix(".bin").stat().st_size
    return size


# ----------------------------------------------------------------------------- table


def _us(t) -> str:
    if t is None:
        return "-"
    if t.error:
        return t.error[:40]
    cell = f"{t.steady * 1e6:.0f}" if t.steady >= 1e-4 else f"{t.steady * 1e6:.1f}"
    return cell + (" MISMATCH" if t.mismatch else "")


def _speedup(pair) -> str:
    a, b = pair
    if a is None or b is None or a.steady is None or b.steady is None:
        return "-"
    return f"{a.steady / b.steady:.2f}x"


def table(rows: list[Row]) -> list[list[str]]:
    out = [["model", "transform", "loop ops (orig -> opt)", "ORT orig µs", "ORT opt µs",
            "ORT speedup", "OV orig µs", "OV opt µs", "OV speedup", "size orig KB",
            "size opt KB"]]
    for r in rows:
        if r.status:
            out.append([r.model, r.transform, r.status] + ["-"] * 8)
            continue
        out.append([r.model, r.transform, r.loops, _us(r.ort[0]), _us(r.ort[1]),
                    _speedup(r.ort), _us(r.ov[0]), _us(r.ov[1]), _speedup(r.ov),
                    f"{r.sizes[0] / 1024:.1f}", f"{r.sizes[1] / 1024:.1f}"])
    return out


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    from loops import configure_threads, machine_lines, render

    configure_threads(args.threads)
    from engines import OnnxRuntime, OpenVino, preload

    import itergraph as ig

    budget = args.budget if args.budget is not None else (0.15 if args.quick else 1.0)
    models = build_models(args.quick, args.corpus)
    only = {m.strip() for m in args.models.split(",") if m.strip()}
    if only:
        models = [m for m in models if m.name in only]
    transforms = [t.strip() for t in args.transforms.split(",") if t.strip()]
    engines = {"ort": OnnxRuntime(args.threads), "ov": OpenVino(args.threads)}
    preload(engines)
    rows = []
    with tempfile.TemporaryDirectory(prefix="itergraph-xf-") as tmp:
        for bm in models:
            want = [v for v in ig.load(bm.model).run(bm.feeds).values()]
            for t in transforms:
                print(f"running {bm.name} / {t} ...", file=sys.stderr, flush=True)
                rows.append(run_pair(bm, t, Path(tmp), engines, budget, want))
    md = args.markdown
    bullet = "- " if md else ""
    out = [*(bullet + line for line in machine_lines(args.threads, None)), ""]
    out += ["Steady state, µs per run (median after warm-up); speedup = orig / opt:", "",
            render(table(rows), md), "", "Models:", ""]
    out += [f"- {m.name}: {m.description}" for m in models]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
