"""The per-call floor of the JAX backend: an Add of two float[4] through an itergraph session,
through a bare ``jax.jit`` (called with NumPy arrays, its result converted back), through the
executable itergraph compiled called directly, and through ONNX Runtime; one thread each, in
one process, the four taking turns in rounds (a shared VM's speed drifts).

    .venv/bin/python bench/call_floor.py [--calls 5000] [--round 200]

Prints p50 / p99 per call in µs and the ratio of p50 to ONNX Runtime's. The gap between the
session and the bare jit is what itergraph adds (feed checks, the signature lookup, output
dicts); the gap between the bare jit and ONNX Runtime is JAX's dispatch.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from loops import configure_threads  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=5000, help="timed calls per engine (5000)")
    p.add_argument("--round", type=int, default=200, help="calls per engine per round (200)")
    args = p.parse_args(argv)
    configure_threads(1)
    import jax
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper as h

    import itergraph as ig

    vi = h.make_tensor_value_info
    model = h.make_model(h.make_graph([h.make_node("Add", ["a", "b"], ["y"])], "add",
                                      [vi("a", T.FLOAT, [4]), vi("b", T.FLOAT, [4])],
                                      [vi("y", T.FLOAT, [4])]),
                         opset_imports=[h.make_opsetid("", 17)])
    path = os.path.join(tempfile.mkdtemp(), "add.onnx")
    onnx.save(model, path)
    a = np.arange(4, dtype=np.float32)
    feeds = {"a": a, "b": a}
    sess = ig.load(path).compile("jax")
    sess.run(feeds)
    sess.run(feeds)  # the second run prepares the direct call (`backends.jax.fast_call`)
    cg = sess.model.jax_compiled()
    fast = cg.prepared_call(cg.signature(feeds, None))
    bare = jax.jit(lambda x, y: x + y)
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    engines = {
        "itergraph jax (session.run)": lambda: sess.run(feeds),
        "bare jax.jit + np.asarray": lambda: np.asarray(bare(a, a)),
        "ONNX Runtime": lambda: s.run(None, feeds),
    }
    if fast is not None:
        engines["itergraph executable + np.array"] = lambda: np.array(fast.compiled(a, a)[0])
    for fn in engines.values():
        for _ in range(50):
            fn()
    times: dict[str, list[float]] = {k: [] for k in engines}
    pc = time.perf_counter
    load = os.getloadavg()[0]
    for _ in range(max(1, args.calls // args.round)):
        for k, fn in engines.items():
            t = times[k]
            for _ in range(args.round):
                t0 = pc()
                fn()
                t.append(pc() - t0)
    ort_p50 = sorted(times["ONNX Runtime"])[len(times["ONNX Runtime"]) // 2]
    for k, t in times.items():
        t.sort()
        p50, p99 = t[len(t) // 2], t[int(len(t) * 0.99)]
        print(f"{k:34s} {p50 * 1e6:7.1f} / {p99 * 1e6:7.1f} µs  ({p50 / ort_p50:.2f}x)")
    print(f"load average (1 min) before/after: {load:.1f} / {os.getloadavg()[0]:.1f}, "
          f"{len(os.sched_getaffinity(0))} cores")


if __name__ == "__main__":
    main()
