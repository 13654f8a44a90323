"""Hostile cases whose fix belongs to code that other work is restructuring (the JAX backend,
the NumPy loop runner, the OpenVINO loop importers). They fail today; the expected outcome is
written as for the suite's cases. pytest does not collect this module (its name does not match
``test_*.py``) and `test_hostile` does not load it; run it with

    python tests/hostile/harness.py pending_cases

and move a case into its ``cases_*`` module once it passes.
"""

from __future__ import annotations

import numpy as np
from cases_onnx import _loop_feeds, _one_node
from harness import Ok, Raises, case
from hostile_util import (
    I64,
    B,
    F,
    assert_close,
    const,
    counter_body,
    graph,
    ig_run,
    loop_model,
    model,
    ort_refuses,
    run_ort,
    vi,
)
from onnx import helper as h

from itergraph.errors import ExecutionError, IterationLimitError

BOTH = ("numpy", "jax")


# -- JAX backend ------------------------------------------------------------------------------

@case("onnx/tile_with_negative_repeats", Raises(ExecutionError, "tiler", "repeats"),
      backends=("jax",))
def _(c):
    # today: a raw MLIRError ("invalid tensor dimension size")
    m = _one_node("Tile", [("x", F, [2, 3]), ("r", I64, [2])], ["y"], name="tiler")
    feeds = {"x": np.ones((2, 3), np.float32), "r": np.array([1, -2], np.int64)}
    ort_refuses(m, feeds)
    ig_run(c, m, feeds)


@case("onnx/loop_tile_with_negative_repeats_in_the_body",
      Raises(ExecutionError, "tile_in_body", "repeats"), backends=("jax",))
def _(c):
    body = counter_body(scan=False, extra_nodes=[
        h.make_node("Tile", ["x", "reps"], ["t"], name="tile_in_body")])
    body.node.append(h.make_node("ReduceSum", ["t"], ["s"], keepdims=0, name="sum"))
    body.node.append(h.make_node("Add", ["x_out", "s"], ["x_next"], name="acc"))
    body.output[1].CopyFrom(vi("x_next", F, None))
    body.initializer.append(const("reps", np.array([-2], np.int64)))
    m = loop_model(body=body, outputs=("x_final",))
    ig_run(c, m, _loop_feeds())


@case("onnx/loop_huge_trip_count_with_scan_output_and_max_iterations",
      Raises(IterationLimitError, "'L'", "max_iterations=1000"), isolate=True,
      backends=("jax",))
def _(c):
    # today: the while driver sizes its first buffer as next_pow2(M), ignoring max_iterations
    ig_run(c, loop_model(), _loop_feeds(m=10**9), max_iterations=1000)


@case("onnx/loop_huge_trip_count_4096_floats_per_step_and_max_iterations",
      Raises(IterationLimitError, "'L'", "max_iterations=1000"), isolate=True,
      backends=("jax",))
def _(c):
    ig_run(c, loop_model(), _loop_feeds(m=10**9, x=np.zeros(4096, np.float32)),
           max_iterations=1000)


@case("onnx/loop_cast_of_inf_as_trip_count", Ok(), backends=("jax",))
def _(c):
    # one rule for every float -> int cast on both backends: ONNX Runtime's (and NumPy's)
    cast = h.make_node("Cast", ["Mf"], ["M"], to=I64, name="to_int")
    loop = h.make_node("Loop", ["M", "cond", "x0"], ["x_final", "xs"], name="L",
                       body=counter_body())
    m = model([cast, loop], [vi("Mf", F, []), vi("cond", B, []), vi("x0", F, [2])],
              [vi("x_final", F, None), vi("xs", F, None)])
    feeds = {"Mf": np.array(np.inf, np.float32), "cond": np.array(True),
             "x0": np.zeros(2, np.float32)}
    want = run_ort(m, feeds)
    got = ig_run(c, m, feeds, max_iterations=100)
    assert_close(got["x_final"], want["x_final"])


@case("network/concatenate_output_of_length_1e9", Raises(ExecutionError, "CONCATENATE"),
      isolate=True, backends=("jax",))
def _(c):
    from cases_network import _counting_loop

    net, _ = _counting_loop(length=10**9)
    import itergraph as ig

    ig.load(net).run({"x": np.ones(2, np.float32)}, backend=c.backend)


@case("onnx/one_hot_with_negative_depth", Raises(ExecutionError, "oh", "depth"),
      backends=("jax",))
def _(c):
    m = _one_node("OneHot", [("i", I64, [2]), ("d", I64, []), ("v", F, [2])], ["y"], name="oh")
    feeds = {"i": np.array([0, 1], np.int64), "d": np.array(-3, np.int64),
             "v": np.array([0, 1], np.float32)}
    ort_refuses(m, feeds)
    ig_run(c, m, feeds)


@case("onnx/loop_body_condition_with_two_elements", Raises(ExecutionError, "'L'", "condition"),
      backends=("jax",))
def _(c):
    # today: InputError (the caller's fault), but the model computed the condition
    body = graph([h.make_node("Constant", [], ["c_out"], value=const("", np.array([True, False]))),
                  h.make_node("Identity", ["x"], ["x_out"])],
                 [vi("i", I64, []), vi("c", B, []), vi("x", F, None)],
                 [vi("c_out", B, None), vi("x_out", F, None)])
    m = model([h.make_node("Loop", ["M", "", "x0"], ["xf"], name="L", body=body)],
              [vi("M", I64, []), vi("x0", F, [1])], [vi("xf", F, None)])
    ig_run(c, m, {"M": np.array(3, np.int64), "x0": np.ones(1, np.float32)})
