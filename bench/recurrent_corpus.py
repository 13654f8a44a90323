"""Recurrent models of the real-world corpus on four engines: what exporters really wrote.

    .venv/bin/python bench/recurrent_corpus.py [--budget 0.3] [--markdown]

Every corpus entry (tests/realworld) whose graph holds a recurrent cell, as a loop (Keras
RNNs as tf2onnx and OpenVINO write them, PyTorch cells in a Python loop, ``torch.onnx``'s
Scan) or as the ``LSTM``/``GRU``/``RNN`` operator (``nn.LSTM``...), runs on
itergraph-numpy, itergraph-jax, ONNX Runtime (ONNX files) and OpenVINO (both), one thread
each, medians after warm-up; outputs are checked against the framework's recorded ones. The
``fused`` column counts the loops the backends fuse into one recurrent kernel
(`passes.fuse_cells`) out of the loops the graph has. The corpus models are small (a few
steps, small hidden sizes): the times show per-run overhead more than arithmetic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECURRENT = ("lstm", "gru", "rnn", "cell")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=0.3,
                   help="seconds of steady-state timing per engine and model (0.3)")
    p.add_argument("--max-repeats", type=int, default=200)
    p.add_argument("--engines", default="numpy,jax,ort,ov")
    p.add_argument("--match", default="", help="only entries whose id contains this")
    p.add_argument("--markdown", action="store_true")
    return p.parse_args(argv)


def fused_loops(path) -> tuple[int, int]:
    """(loops the backends fuse, loops) of the model at `path`, loops at any depth."""
    import itergraph as ig
    from itergraph.ir import Loop
    from itergraph.passes.cells import fused_kind

    g = ig.load(path).graph
    found = fused = 0
    for graph, node in list(g.walk()):
        if isinstance(node, Loop):
            found += 1
            fused += fused_kind(graph, node) is not None
    return fused, found


def _ms(t) -> str:
    if t is None:
        return "-"
    if t.steady is None:
        return (t.error or "error")[:24]
    return f"{t.steady * 1e3:.3g}" + (" MISMATCH" if t.mismatch else "")


def _ratio(t, peer) -> str:
    if t is None or peer is None or t.steady is None or peer.steady is None:
        return "-"
    return f"{t.steady / peer.steady:.2f}x"


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent / "tests" / "realworld"))
    from loops import configure_threads

    configure_threads(1)
    from corpus import entries
    from engines import Case, compare, measure, preload
    from loops import _load, machine_lines, make_engines, render

    import itergraph as ig

    keys = [k for k in args.engines.split(",") if k]
    engines = make_engines(keys, 1)
    preload(engines)
    load_before = _load()
    chosen = [e for e in entries() if any(k in e.id.split("/")[-1] for k in RECURRENT)
              and args.match in e.id]
    cols = [engines[k].name for k in keys]
    rows = [["entry", "fused", *cols, "numpy/peer", "jax/peer"]]
    problems = []
    for e in chosen:
        print(f"running {e.id} ...", file=sys.stderr, flush=True)
        path = str(e.file)
        onnx = path.endswith(".onnx")
        want = e.expected()
        case = Case(e.id, e.description, e.feeds(), [], lambda _f, w=want: w,
                    onnx_path=path if onnx else None, xml_path=None if onnx else path)
        case.output_names = [v.name for v in ig.load(path).graph.outputs]  # OpenVINO's order
        times = {}
        for k in keys:
            t = measure(engines[k], case, args.budget, 1, args.max_repeats)
            if t.outputs is not None:
                t.mismatch = compare(t.outputs, want, rtol=max(e.rtol, 1e-4),
                                     atol=max(e.atol, 1e-5))
                if t.mismatch:
                    problems.append(f"- {e.id} / {k}: {t.mismatch}")
            times[k] = t
        fused, found = fused_loops(path)
        peer = times.get("ort") if onnx else times.get("ov")
        if peer is None or peer.steady is None:
            peer = times.get("ov")

        rows.append([e.id, f"{fused}/{found}" if found else "op",
                     *(_ms(times.get(k)) for k in keys),
                     _ratio(times.get("numpy"), peer), _ratio(times.get("jax"), peer)])
    md = args.markdown
    bullet = "- " if md else ""
    out = [*(bullet + line for line in machine_lines(1, load_before)),
           bullet + "peer: ONNX Runtime for ONNX files, OpenVINO for IR files", "",
           "Steady state (ms, median after warm-up):", "", render(rows, md)]
    if problems:
        out += ["", "Mismatches:", "", *problems]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
