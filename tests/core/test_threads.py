"""Eight threads sharing one `Model` get the results (and errors) a single thread gets.

The shared model starts cold: the threads, released together, race through its first
compilations (NumPy plans per `max_iterations`, XLA programs and loop-driver buffers per
shape) while running inputs that need different iteration counts, output lengths and limits.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from onnx_builders import I64, B, F, assert_same, body, const, model, vi

THREADS = 8
ROUNDS = 3


def while_model():
    """Loop(M, cond): x = 2 x + i while x < limit; scan output: every x (run-time length)."""
    b = body([h.make_node("Cast", ["i"], ["fi"], to=F),
              h.make_node("Mul", ["x_in", "two"], ["x2"]),
              h.make_node("Add", ["x2", "fi"], ["x_out"]),
              h.make_node("ReduceMax", ["x_out"], ["top"], keepdims=0),
              h.make_node("Less", ["top", "limit"], ["c_out"]),
              h.make_node("Identity", ["x_out"], ["trace"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [3])],
             [vi("c_out", B, []), vi("x_out", F, [3]), vi("trace", F, [3])],
             [const("two", 2.0, np.float32)])
    return model([h.make_node("Loop", ["M", "cond", "x0"], ["x", "xs"], body=b, name="doubling")],
                 [vi("M", I64, []), vi("cond", B, []), vi("x0", F, [3]), vi("limit", F, [])],
                 [vi("x", F, [3]), vi("xs", F, [None, 3])])


def scan_model():
    """Scan over the rows of X (any length): running sum s, and every s scaled by w."""
    b = body([h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
              h.make_node("Mul", ["s_out", "w"], ["y"])],
             [vi("s_in", F, [4]), vi("x_t", F, [4])], [vi("s_out", F, [4]), vi("y", F, [4])])
    return model([h.make_node("Scan", ["s0", "X"], ["s", "Y"], body=b, num_scan_inputs=1,
                              name="running_sum")],
                 [vi("s0", F, [4]), vi("X", F, [None, 4]), vi("w", F, [])],
                 [vi("s", F, [4]), vi("Y", F, [None, 4])])


def while_case(k: int):
    """Thread k's feeds and limit: loops of 1..9 iterations, every fourth one stopped by a
    `max_iterations` below what it needs."""
    feeds = {"M": np.array(100 if k % 3 else 6, np.int64), "cond": np.array(k != 5),
             "x0": np.array([0.5, 1.0, 0.25], np.float32) * (k + 1),
             "limit": np.array(50.0 * (k + 1), np.float32)}
    return feeds, (2 if k % 4 == 3 else None)


def scan_case(k: int):
    rng = np.random.default_rng(k)
    feeds = {"s0": rng.standard_normal(4).astype(np.float32),
             "X": rng.standard_normal((1 + 3 * k, 4)).astype(np.float32),
             "w": np.array(k * 0.5, np.float32)}
    return feeds, (4 if k % 4 == 3 else None)


def outcome(m: ig.Model, feeds, backend: str, limit):
    """The results of one run, or its error as (class, message)."""
    try:
        return m.run(feeds, backend=backend, max_iterations=limit)
    except ig.Error as e:
        return type(e), str(e)




@pytest.mark.parametrize("make,case,backend", [
    pytest.param(while_model, while_case, "numpy", id="while-numpy"),
    pytest.param(while_model, while_case, "jax", id="while-jax"),
    pytest.param(scan_model, scan_case, "numpy", id="scan-numpy"),
    pytest.param(scan_model, scan_case, "jax", id="scan-jax"),
])
def test_eight_threads_share_one_model(make, case, backend):
    onnx_model = make()
    cases = [case(k) for k in range(THREADS)]
    alone = ig.load(onnx_model)
    want = [outcome(alone, feeds, backend, limit) for feeds, limit in cases]
    assert any(isinstance(w, tuple) for w in want) and any(isinstance(w, dict) for w in want)
    shared = ig.load(onnx_model)
    start = threading.Barrier(THREADS)

    def work(k: int) -> list:
        feeds, limit = cases[k]
        start.wait()
        return [outcome(shared, feeds, backend, limit) for _ in range(ROUNDS)]

    with ThreadPoolExecutor(THREADS) as pool:
        got = list(pool.map(work, range(THREADS)))
    for k in range(THREADS):
        for r, result in enumerate(got[k]):
            if isinstance(want[k], tuple):
                assert result == want[k], (k, r)
            else:
                assert isinstance(result, dict), (k, r, result)
                assert_same(result, want[k])


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_threads_sharing_a_cold_model_compile_it_once(backend, monkeypatch):
    from itergraph.backends import jax as jax_backend
    from itergraph.backends.numpy import CompileContext

    calls = []
    barrier = threading.Barrier(THREADS)
    if backend == "jax":
        original = jax_backend.compile_graph

        def counting(graph, *a, **kw):
            calls.append(1)
            return original(graph, *a, **kw)

        monkeypatch.setattr(jax_backend, "compile_graph", counting)
    else:
        original = CompileContext.compile

        def counting(self, graph, *a, **kw):
            if graph is m.graph:
                calls.append(1)
            return original(self, graph, *a, **kw)

        monkeypatch.setattr(CompileContext, "compile", counting)
    m = ig.load(scan_model())
    cases = [scan_case(k) for k in range(THREADS)]

    def run(k):
        barrier.wait()
        return outcome(m, cases[k][0], backend, cases[k][1])

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(run, range(THREADS)))
    # one JAX program; one NumPy plan per max_iterations
    assert len(calls) == (1 if backend == "jax" else len({limit for _, limit in cases}))
