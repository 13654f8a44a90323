"""Memory of long loops: peak RSS of a 10^6-iteration loop against the bytes it returns.

    .venv/bin/python bench/memory.py [--iterations N] [--width W] [--backends numpy,jax]

Each loop below runs in its own child process (Linux: the peak reading is /proc/self/status
VmHWM, reset through /proc/self/clear_refs; elsewhere ru_maxrss). The child builds the model
and its feeds, records its resident set, runs the model once, and reports the peak resident
set during the run minus the resident set before it. The outputs are alive at the peak, so
an engine that keeps nothing but its outputs has a ratio of 1; the goal, for the NumPy
backend, is at most 2.5 (the JAX rows are for information: its first run includes XLA's
compilation). A second run of the same `Model` (plans and XLA programs cached) is measured
the same way. The exit status is 1 when a NumPy row misses the goal.

Loops (every one has a scan output of `W` float32 per iteration and a carried value):

- ``counted``: ONNX Loop with trip count M, no condition (the length is known up front);
- ``while``: ONNX Loop with M = INT64_MAX and a condition that ends it after N iterations
  (the length is known only at the end: the buffer grows);
- ``scan``: ONNX Scan over an (N, W) input (the input's bytes are not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

LOOPS = ("counted", "while", "scan")
GOAL = 2.5


# ----------------------------------------------------------------------------- peak RSS


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def current_rss() -> int:
    kib = _status_kib("VmRSS")
    return (kib or 0) * 1024


def peak_rss() -> int:
    kib = _status_kib("VmHWM")
    if kib is None:  # ru_maxrss: KiB on Linux, bytes on macOS
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if sys.platform == "darwin":
            kib //= 1024
    return kib * 1024


def measured(fn):
    """(result of fn(), peak RSS during the call minus RSS before it, in bytes)."""
    import gc

    gc.collect()
    reset_peak()
    before = current_rss()
    result = fn()
    return result, peak_rss() - before


# ----------------------------------------------------------------------------- models


def build(loop: str, n: int, width: int):
    """(ONNX model, feeds) of one loop kind: N iterations, W floats per scan output entry."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    vi = helper.make_tensor_value_info

    def const(name, value, dtype):
        return numpy_helper.from_array(np.asarray(value, dtype), name)

    x0 = np.zeros(width, np.float32)
    if loop == "scan":
        body = helper.make_graph(
            [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
             helper.make_node("Mul", ["s_out", "x_t"], ["y"])], "body",
            [vi("s_in", f, [width]), vi("x_t", f, [width])],
            [vi("s_out", f, [width]), vi("y", f, [width])])
        node = helper.make_node("Scan", ["s0", "X"], ["s", "Y"], body=body, num_scan_inputs=1)
        graph = helper.make_graph([node], "scan", [vi("s0", f, [width]), vi("X", f, [n, width])],
                                  [vi("s", f, [width]), vi("Y", f, [n, width])])
        feeds = {"s0": x0, "X": np.full((n, width), 1e-6, np.float32)}
    else:
        cond = ([helper.make_node("Less", ["i", "last"], ["c_out"])] if loop == "while"
                else [helper.make_node("Identity", ["c_in"], ["c_out"])])
        body = helper.make_graph(
            [helper.make_node("Add", ["x_in", "step"], ["x_out"]),
             helper.make_node("Mul", ["x_out", "half"], ["y"]), *cond], "body",
            [vi("i", i64, []), vi("c_in", b, []), vi("x_in", f, [width])],
            [vi("c_out", b, []), vi("x_out", f, [width]), vi("y", f, [width])],
            [const("step", 1e-6, np.float32), const("half", 0.5, np.float32)])
        trip = n if loop == "counted" else np.iinfo(np.int64).max
        node = helper.make_node("Loop", ["M", "cond", "x0"], ["x", "Y"], body=body)
        graph = helper.make_graph(
            [node], loop, [vi("x0", f, [width])],
            [vi("x", f, [width]), vi("Y", f, [None, width])],
            [const("M", trip, np.int64), const("cond", True, np.bool_),
             const("last", n - 1, np.int64)])
        feeds = {"x0": x0}
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return model, feeds


def child(backend: str, loop: str, n: int, width: int) -> dict:
    import itergraph as ig

    model, feeds = build(loop, n, width)
    loaded = ig.load(model)
    del model
    first, first_peak = measured(lambda: loaded.run(feeds, backend=backend))
    out_bytes = sum(v.nbytes for v in first.values())
    length = len(first["Y"])
    del first
    _, second_peak = measured(lambda: loaded.run(feeds, backend=backend))
    return {"out_bytes": out_bytes, "first": first_peak, "second": second_peak,
            "length": length}


def run_child(backend: str, loop: str, n: int, width: int) -> dict:
    cmd = [sys.executable, __file__, "--child", backend, loop, str(n), str(width)]
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": tail[:200]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- table


def mib(x: int) -> str:
    return f"{x / 2**20:.1f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=10**6)
    p.add_argument("--width", type=int, default=16, help="float32 per scan output entry (16)")
    p.add_argument("--backends", default="numpy,jax")
    p.add_argument("--loops", default=",".join(LOOPS))
    p.add_argument("--child", nargs=4, metavar=("BACKEND", "LOOP", "N", "WIDTH"),
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        backend, loop, n, width = args.child
        print(json.dumps(child(backend, loop, int(n), int(width))))
        return 0
    print("peak RSS during a run minus RSS before it (outputs alive at the peak); "
          f"goal for NumPy: <= {GOAL}x the outputs")
    print(f"peak reading: {'VmHWM (reset per run)' if reset_peak() else 'ru_maxrss'}\n")
    head = ("backend", "loop", "iterations", "output MiB", "peak delta MiB", "ratio",
            "2nd run MiB", "2nd ratio", f"<= {GOAL}x")
    rows = []
    failed = False
    for backend in args.backends.split(","):
        for loop in args.loops.split(","):
            r = run_child(backend, loop, args.iterations, args.width)
            if "error" in r:
                rows.append((backend, loop, str(args.iterations), "-", r["error"], "-", "-", "-",
                             "error"))
                failed |= backend == "numpy"
                continue
            ratio, ratio2 = r["first"] / r["out_bytes"], r["second"] / r["out_bytes"]
            over = max(ratio, ratio2) > GOAL
            failed |= over and backend == "numpy"
            verdict = ("OVER" if over else "ok") if backend == "numpy" else "-"
            rows.append((backend, loop, str(r["length"]), mib(r["out_bytes"]), mib(r["first"]),
                         f"{ratio:.2f}x", mib(r["second"]), f"{ratio2:.2f}x", verdict))
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
