"""``fuse-cells`` bench: ONNX Runtime and OpenVINO on recurrent-cell loops before and after.

    .venv/bin/python bench/transforms_cells.py [--cells lstm,gru,rnn] [--forms ...]
        [--batch 1,16] [--seq 256] [--hidden 128] [--input 64] [--budget 1.0] [--markdown]

Each model of `recurrent_models` written as a loop (ONNX forms ``scan_matmul``,
``scan_gemm``, ``loop_gather``; OpenVINO forms ``ti_cell``, ``ti_decomposed``) goes through
``itergraph.transforms.optimize(model, ["fuse-cells"])`` and is written back in its own
format and in the other one. Timed, one thread each, median after warm-up:

- ``ORT``: ONNX Runtime on the original ONNX file (OpenVINO forms: none) and on the fused one;
- ``OV``: OpenVINO's CPU plugin (f32) on the original file (ONNX forms: read by OpenVINO's
  own ONNX frontend) and on the fused IR (``LSTMSequence``...).

The fused files' outputs are checked against the original's (``MISMATCH`` otherwise). File
sizes are those of the original and the fused file in the original's format (IR: ``.xml``
plus ``.bin``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LOOP_FORMS = ("scan_matmul", "scan_gemm", "loop_gather", "ti_cell", "ti_decomposed")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="lstm,gru,rnn")
    p.add_argument("--forms", default=",".join(LOOP_FORMS))
    p.add_argument("--batch", default="1,16")
    p.add_argument("--seq", default="256")
    p.add_argument("--hidden", default="128")
    p.add_argument("--input", type=int, default=64)
    p.add_argument("--budget", type=float, default=1.0, help="seconds of timing per run")
    p.add_argument("--markdown", action="store_true")
    return p.parse_args(argv)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def median_time(fn, budget: float, warmup: int = 2, max_repeats: int = 200) -> float:
    for _ in range(warmup):
        fn()
    times: list[float] = []
    end = time.perf_counter() + budget
    while len(times) < 3 or (time.perf_counter() < end and len(times) < max_repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def ort_runner(path: Path, feeds: dict):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return lambda: s.run(None, feeds)


def ov_runner(path: Path, feeds: dict):
    import openvino as ov

    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                          "INFERENCE_NUM_THREADS": 1})
    request = compiled.create_infer_request()
    names = [p.get_any_name() for p in compiled.inputs]

    def run():
        request.infer({n: feeds[n] for n in names})
        return [request.get_output_tensor(k).data.copy() for k in range(len(compiled.outputs))]

    return run


def size(path: Path) -> int:
    extra = path.with_suffix(".bin")
    return path.stat().st_size + (extra.stat().st_size if path.suffix == ".xml" else 0)


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        np.allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-5) for x, y in zip(a, b))


def bench_case(spec, form: str, work: Path, budget: float) -> dict:
    import recurrent_models as rm

    import itergraph as ig
    from itergraph.transforms import optimize

    feeds = rm.form_feeds(form, spec.feeds())
    stem = work / f"{spec.cell}_{form}_{spec.batch}_{spec.seq}_{spec.hidden}"
    if form in rm.OV_FORMS:
        orig = stem.with_suffix(".xml")
        rm.openvino_model(spec, form, str(orig))
    else:
        orig = stem.with_suffix(".onnx")
        import onnx

        onnx.save(rm.onnx_model(spec, form), str(orig))
    t0 = time.perf_counter()
    fused = optimize(ig.load(orig), ["fuse-cells"])
    t_opt = time.perf_counter() - t0
    ops = sorted({n.op_type for n in fused.graph.nodes if n.op_type in ("LSTM", "GRU", "RNN",
                                                                         "Loop")})
    f_onnx, f_xml = Path(f"{stem}_fused.onnx"), Path(f"{stem}_fused.xml")
    ig.save(fused, f_onnx)
    ig.save(fused, f_xml)
    row = {"cell": spec.cell, "form": form, "batch": spec.batch, "seq": spec.seq,
           "hidden": spec.hidden, "ops": "/".join(ops), "optimize_s": t_opt,
           "size_orig": size(orig), "ok": True,
           "size_fused": size(f_xml if orig.suffix == ".xml" else f_onnx)}
    ref = ov_runner(orig, feeds)() if form in rm.OV_FORMS else ort_runner(orig, feeds)()
    for key, runner, path in (("ort_orig", ort_runner, orig if orig.suffix == ".onnx" else None),
                              ("ort_fused", ort_runner, f_onnx),
                              ("ov_orig", ov_runner, orig), ("ov_fused", ov_runner, f_xml)):
        if path is None:
            row[key] = None
            continue
        fn = runner(path, feeds)
        row["ok"] &= _same(fn(), ref)
        row[key] = median_time(fn, budget)
    return row


def _ms(t) -> str:
    return "-" if t is None else f"{t * 1e3:.2f}"


def _x(a, b) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def render(rows: list[dict], markdown: bool) -> str:
    head = ["cell", "form", "B", "T", "H", "fused to", "ORT loop ms", "ORT fused ms",
            "ORT speedup", "OV loop ms", "OV fused ms", "OV speedup", "KiB before/after"]
    lines = []
    for r in rows:
        lines.append([r["cell"], r["form"], str(r["batch"]), str(r["seq"]), str(r["hidden"]),
                      r["ops"] + ("" if r["ok"] else " MISMATCH"),
                      _ms(r["ort_orig"]), _ms(r["ort_fused"]), _x(r["ort_orig"], r["ort_fused"]),
                      _ms(r["ov_orig"]), _ms(r["ov_fused"]), _x(r["ov_orig"], r["ov_fused"]),
                      f"{r['size_orig'] // 1024}/{r['size_fused'] // 1024}"])
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(x) + " |" for x in lines]
        return "\n".join(out)
    widths = [max(len(x[k]) for x in [head, *lines]) for k in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(x, widths)) for x in [head, *lines])


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    import recurrent_models as rm

    rows = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for cell in args.cells.split(","):
            for hidden in _ints(args.hidden):
                for seq in _ints(args.seq):
                    for batch in _ints(args.batch):
                        spec = rm.Spec(cell, batch=batch, seq=seq, inp=args.input,
                                       hidden=hidden)
                        for form in args.forms.split(","):
                            rows.append(bench_case(spec, form, Path(tmp), args.budget))
                            print(render(rows[-1:], False).splitlines()[-1], flush=True)
    print()
    print(f"load average before/after: {load[0]:.1f}/{os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; one thread per engine")
    print(render(rows, args.markdown))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
