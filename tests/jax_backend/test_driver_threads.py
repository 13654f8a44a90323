"""Eight threads sharing one `Model` on the JAX backend get the results of single-threaded runs.

The model is a while-Loop with a stacked output (its length is only known at run time), so
each run goes through the Python `LoopDriver`, whose buffers double from run to run and
within a run; some runs stop at `max_iterations`.
"""

from __future__ import annotations

import threading

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig

LIMIT = 15000
LIMS = [3, 10000, 7, 50000, 5000, 20000, 1, 9000]  # iterations of each thread's runs


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def while_model() -> onnx.ModelProto:
    """x counts up from x0 while x + 1 < lim; the loop stacks x * x."""
    body = h.make_graph(
        [h.make_node("Add", ["x", "one"], ["x1"]),
         h.make_node("Less", ["x1", "lim"], ["c_out"]),
         h.make_node("Mul", ["x", "x"], ["sq"])],
        "body", [_vi("i", T.INT64, []), _vi("c", T.BOOL, []), _vi("x", T.FLOAT, [])],
        [_vi("c_out", T.BOOL, []), _vi("x1", T.FLOAT, []), _vi("sq", T.FLOAT, [])],
        [onnx.numpy_helper.from_array(np.array(1, np.float32), "one")])
    loop = h.make_node("Loop", ["", "c0", "x0"], ["xf", "sqs"], name="W", body=body)
    g = h.make_graph([loop], "g", [_vi("c0", T.BOOL, []), _vi("x0", T.FLOAT, []),
                                   _vi("lim", T.FLOAT, [])],
                     [_vi("xf", T.FLOAT, []), _vi("sqs", T.FLOAT, [None])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _feeds(lim):
    return {"c0": np.array(True), "x0": np.array(0, np.float32),
            "lim": np.array(float(lim), np.float32)}


def _run(model, lim):
    try:
        return model.run(_feeds(lim), backend="jax", max_iterations=LIMIT)
    except ig.IterationLimitError as e:
        return str(e)


def _concurrent_runs(model, runs_per_thread=3):
    """Each thread runs its `LIMS` entry `runs_per_thread` times, all starting together."""
    got: list[list] = [[] for _ in LIMS]
    errors: list[str] = []
    barrier = threading.Barrier(len(LIMS))

    def work(i):
        try:
            barrier.wait()
            for _ in range(runs_per_thread):
                got[i].append(_run(model, LIMS[i]))
        except Exception as e:
            errors.append(f"thread {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(LIMS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got, errors


def test_eight_threads_share_one_model_on_the_jax_driver():
    m = while_model()
    want = [_run(ig.load(m), lim) for lim in LIMS]  # one model per run, one thread
    assert [isinstance(w, str) for w in want] == [lim > LIMIT for lim in LIMS]
    for _ in range(2):  # the first runs (compiling) race too
        got, errors = _concurrent_runs(ig.load(m))
        assert not errors, errors
        for i, runs in enumerate(got):
            for r in runs:
                if isinstance(want[i], str):
                    assert r == want[i]
                else:
                    assert list(r) == list(want[i])
                    for k in r:
                        np.testing.assert_array_equal(r[k], want[i][k], err_msg=f"{i} {k}")
