"""Carried values grown by a Concat every iteration (K/V caches), run by the JAX backend as
fixed-capacity buffers with a valid length (`backends.jax.loops.growing`): the rewritten loop
gives what the NumPy backend and ONNX Runtime give; reads the rule table does not cover fall
back to NumPy."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from jaxutil import assert_same
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import itergraph as ig
from itergraph.backends import jax as jb
from itergraph.backends.jax.analysis import analyze
from itergraph.backends.numpy import run_graph as numpy_run
from itergraph.frontends.onnx import read

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generation_models  # noqa: E402

ort = pytest.importorskip("onnxruntime")
HERE = Path(__file__).resolve().parents[1] / "realworld" / "models"
GROWN = "fixed-capacity buffers"


def _loop_records(cg):
    return [r for r in cg.explain() if r.element.startswith("Loop")]


def _grown(cg) -> bool:
    recs = _loop_records(cg)
    return all(r.compiles for r in recs) and any(GROWN in r.reason for r in recs)


def _check(model: onnx.ModelProto, feeds: dict, grown: bool = True, ort_too: bool = True,
           **kw):
    """JAX == NumPy (== ONNX Runtime); the loop rewritten (`grown`) or not."""
    g = read(model)
    want = numpy_run(g, feeds)
    cg = jb.compile_graph(g, **kw)
    got = cg.run(feeds)
    assert_same(got, want, rtol=1e-5, atol=1e-5)
    if ort_too:
        ref = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
        for (k, v), r in zip(got.items(), ref):
            assert v.shape == r.shape, k
            np.testing.assert_allclose(v, r, rtol=1e-4, atol=1e-5, err_msg=k)
    assert _grown(cg) == grown, cg.explain()
    _explain_told_the_truth(g, cg)
    again = cg.run(feeds)  # the compiled path a second time (prepared call, learned capacity)
    assert_same(again, want, rtol=1e-5, atol=1e-5)
    return got, cg


def _explain_told_the_truth(g, cg) -> None:
    """The static explain (no feeds) says XLA exactly where the run compiled."""
    said = all(r.compiles for r in analyze(g))
    ran = all(r.compiles for r in cg.explain())
    assert said == ran, (analyze(g), cg.explain())


# ----------------------------------------------------------------------------- hand-built


def attention_loop(read_: str = "softmax", trip: str = "input", scan_out: bool = False,
                   d: int = 4) -> onnx.ModelProto:
    """A cache k [B, T, d] grown by one row per iteration (Concat axis 1) and attended to by
    the carried query y [B, 1, d]: softmax(y k^T) k. `read_` picks how the body reads the
    cache: "softmax"; "reducesum" (softmax written out: ReduceMax, Exp, ReduceSum along the
    grown axis); "argmax" (ArgMax along the grown axis: no rule, falls back); "shape" (its
    valid length, from Shape); "last" (its last row, a Slice from the end); "first" (its
    first row, a Gather at 0); "range" (its valid length as a Range bound, which XLA needs
    when compiling: falls back); "softsign" (an element-wise op, then a ReduceSum along the
    grown axis: kinds read from `ir.padded_axes`). `trip`:
    "input" (run-time trip count), "const" (3, known when compiling: a scan) or "cond" (no
    trip count; a condition stops it after M iterations)."""
    n = []
    n.append(h.make_node("Add", ["y", "c_bias"], ["yb"]))
    n.append(h.make_node("Tanh", ["yb"], ["piece"]))
    n.append(h.make_node("Concat", ["k", "piece"], ["k2"], axis=1))
    n.append(h.make_node("Transpose", ["k2"], ["kt"], perm=[0, 2, 1]))
    n.append(h.make_node("MatMul", ["y", "kt"], ["s0"]))
    n.append(h.make_node("Mul", ["s0", "c_scale"], ["s"]))
    if read_ == "reducesum":  # softmax written out: max, exp, sum, divide
        n.append(h.make_node("ReduceMax", ["s"], ["mx"], axes=[-1], keepdims=1))
        n.append(h.make_node("Sub", ["s", "mx"], ["sm"]))
        n.append(h.make_node("Exp", ["sm"], ["e"]))
        n.append(h.make_node("ReduceSum", ["e", "c_axm1"], ["z"], keepdims=1))
        n.append(h.make_node("Div", ["e", "z"], ["p"]))
    else:
        n.append(h.make_node("Softmax", ["s"], ["p"], axis=-1))
    n.append(h.make_node("MatMul", ["p", "k2"], ["att"]))
    n.append(h.make_node("Add", ["att", "piece"], ["y1"]))
    if read_ == "shape":
        n.append(h.make_node("Shape", ["k2"], ["sh"]))
        n.append(h.make_node("Gather", ["sh", "c_i1"], ["tl"], axis=0))
        n.append(h.make_node("Cast", ["tl"], ["tf"], to=T.FLOAT))
        n.append(h.make_node("Div", ["c_one", "tf"], ["inv"]))
        n.append(h.make_node("Add", ["y1", "inv"], ["y_out"]))
    elif read_ == "last":
        n.append(h.make_node("Slice", ["k2", "c_m1", "c_big", "c_ax1"], ["lastrow"]))
        n.append(h.make_node("Sub", ["y1", "lastrow"], ["y_out"]))
    elif read_ == "range":  # the valid length as a Range bound: needed at trace time
        n.append(h.make_node("Shape", ["k2"], ["sh"]))
        n.append(h.make_node("Gather", ["sh", "c_i1"], ["tl"], axis=0))
        n.append(h.make_node("Range", ["c_i0", "tl", "c_i1"], ["rg"]))
        n.append(h.make_node("Cast", ["rg"], ["rgf"], to=T.FLOAT))
        n.append(h.make_node("ReduceSum", ["rgf"], ["rs"], keepdims=0))
        n.append(h.make_node("Mul", ["rs", "c_scale"], ["rss"]))
        n.append(h.make_node("Add", ["y1", "rss"], ["y_out"]))
    elif read_ == "argmax":  # no exact rule: ArgMax along the grown axis
        n.append(h.make_node("ArgMax", ["s"], ["am"], axis=-1, keepdims=1))
        n.append(h.make_node("Cast", ["am"], ["amf"], to=T.FLOAT))
        n.append(h.make_node("Add", ["y1", "amf"], ["y_out"]))
    elif read_ == "softsign":
        n.append(h.make_node("Softsign", ["k2"], ["ks"]))
        n.append(h.make_node("ReduceSum", ["ks", "c_ax1"], ["kr"], keepdims=1))
        n.append(h.make_node("Add", ["y1", "kr"], ["y_out"]))
    elif read_ == "first":
        n.append(h.make_node("Gather", ["k2", "c_i0"], ["row0"], axis=1))
        n.append(h.make_node("Unsqueeze", ["row0", "c_ax1"], ["row0u"]))
        n.append(h.make_node("Add", ["y1", "row0u"], ["y_out"]))
    else:
        n.append(h.make_node("Identity", ["y1"], ["y_out"]))
    n.append(h.make_node("Identity", ["k2"], ["k_out"]))
    if trip == "cond":
        n.append(h.make_node("Add", ["i", "c_i64_1"], ["i1"]))
        n.append(h.make_node("Less", ["i1", "M"], ["cond_out"]))
    else:
        n.append(h.make_node("Identity", ["cond"], ["cond_out"]))
    outs = [h.make_tensor_value_info("cond_out", T.BOOL, []),
            h.make_tensor_value_info("y_out", T.FLOAT, ["B", 1, d]),
            h.make_tensor_value_info("k_out", T.FLOAT, ["B", None, d])]
    if scan_out:
        n.append(h.make_node("Identity", ["y1"], ["y_scan"]))
        outs.append(h.make_tensor_value_info("y_scan", T.FLOAT, ["B", 1, d]))
    body = h.make_graph(n, "body", [h.make_tensor_value_info("i", T.INT64, []),
                                    h.make_tensor_value_info("cond", T.BOOL, []),
                                    h.make_tensor_value_info("y", T.FLOAT, ["B", 1, d]),
                                    h.make_tensor_value_info("k", T.FLOAT, ["B", None, d])],
                        outs)
    consts = {"c_bias": np.linspace(-1, 1, d).astype(np.float32),
              "c_scale": np.array(0.7, np.float32), "c_axm1": np.array([-1], np.int64),
              "c_i1": np.array(1, np.int64), "c_i0": np.array(0, np.int64),
              "c_one": np.array(1, np.float32), "c_m1": np.array([-1], np.int64),
              "c_big": np.array([1 << 40], np.int64), "c_ax1": np.array([1], np.int64),
              "c_i64_1": np.array(1, np.int64), "c_true": np.array(True)}
    inputs = [h.make_tensor_value_info("y0", T.FLOAT, ["B", 1, d]),
              h.make_tensor_value_info("k0", T.FLOAT, ["B", "L", d])]
    if trip == "const":
        consts["M"] = np.array(3, np.int64)
    else:
        inputs.append(h.make_tensor_value_info("M", T.INT64, []))
    loop_in = ["" if trip == "cond" else "M", "c_true", "y0", "k0"]
    louts = ["y", "k"] + (["ys"] if scan_out else [])
    g = h.make_graph([h.make_node("Loop", loop_in, louts, body=body)], "g", inputs,
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in louts],
                     [nh.from_array(v, k) for k, v in consts.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _feeds(trip: str = "input", m: int = 5, length: int = 3, b: int = 2, d: int = 4):
    rng = np.random.default_rng(1)
    f = {"y0": rng.standard_normal((b, 1, d)).astype(np.float32),
         "k0": rng.standard_normal((b, length, d)).astype(np.float32)}
    if trip != "const":
        f["M"] = np.array(m, np.int64)
    return f


@pytest.mark.parametrize("read_", ["softmax", "reducesum", "shape", "last", "first",
                                   "softsign"])
@pytest.mark.parametrize("trip", ["input", "const", "cond"])
def test_rewritten_loop_equals_numpy_and_ort(read_, trip):
    got, _ = _check(attention_loop(read_, trip), _feeds(trip))
    assert got["k"].shape == (2, 3 + (3 if trip == "const" else 5), 4)


def test_scan_outputs_and_a_grown_value_share_the_driver():
    got, _ = _check(attention_loop(scan_out=True), _feeds(m=6))
    assert got["ys"].shape == (6, 2, 1, 4)


def test_capacity_doubles_when_the_loop_runs_past_it():
    """No trip count (a condition stops the loop): buffers sized per driver step, doubled
    and resumed when full; the next run starts at the capacity that held this one."""
    g = read(attention_loop(trip="cond"))
    feeds = _feeds("cond", m=11)
    cg = jb.compile_graph(g, initial_capacity=2)
    got = cg.run(feeds)
    assert_same(got, numpy_run(g, feeds), rtol=1e-5, atol=1e-5)
    (step,) = [s for s in cg.root.last_plan.steps if hasattr(s, "driver")]
    assert step.driver.capacities == [2, 4, 8]
    assert _grown(cg)
    assert_same(cg.run(feeds), got)
    assert step.driver.capacities == [16]


@pytest.mark.parametrize("m", [0, 1])
def test_zero_and_one_trip(m):
    got, _ = _check(attention_loop(), _feeds(m=m))
    assert got["k"].shape == (2, 3 + m, 4)


def test_zero_trip_in_the_condition_form_and_empty_initial_cache():
    _check(attention_loop(trip="cond"), _feeds("cond", m=0), grown=True)
    _check(attention_loop(), _feeds(m=4, length=0), grown=True, ort_too=False)


def test_read_without_an_exact_rule_falls_back_to_numpy():
    """ArgMax along the grown axis: no rule, so the loop is not rewritten and runs as before
    (on NumPy), with the same results; both explains say why."""
    model = attention_loop("argmax")
    _, cg = _check(model, _feeds(), grown=False)
    (rec,) = [r for r in cg.explain() if r.element.startswith("Loop")]
    assert not rec.compiles and "not rewritten" in rec.reason and "ArgMax" in rec.reason
    (static,) = [r for r in analyze(read(model)) if r.element.startswith("Loop")]
    assert not static.compiles and "ArgMax" in static.reason


def test_static_explain_says_the_grown_values_run_as_buffers():
    (rec,) = [r for r in analyze(read(attention_loop())) if r.element.startswith("Loop")]
    assert rec.compiles and "'k'" in rec.reason and GROWN in rec.reason


def reordered_attention_loop(trip: str, rows: int = 3, hidden: int = 8, heads: int = 2
                             ) -> onnx.ModelProto:
    """ONNX Runtime's Attention on a carried query y [rows, 1, hidden] with a past
    ``[2, rows, heads, T, head size]`` whose rows are reordered first every iteration, as a
    beam search reorders its caches (a Gather on axis 1 by ``max((r + i) mod rows - 1, 0)``:
    rows repeated and dropped); the present carried, and the loop's final value. `trip` as
    `attention_loop` takes it."""
    rng = np.random.default_rng(4)
    consts = {"w": (0.5 * rng.standard_normal((hidden, 3 * hidden))).astype(np.float32),
              "b": (0.1 * rng.standard_normal(3 * hidden)).astype(np.float32),
              "c_i0": np.array(0, np.int64), "c_i1": np.array(1, np.int64),
              "c_rows": np.array(rows, np.int64), "c_true": np.array(True)}
    n = [h.make_node("Range", ["c_i0", "c_rows", "c_i1"], ["r"]),
         h.make_node("Add", ["r", "i"], ["shifted"]),
         h.make_node("Mod", ["shifted", "c_rows"], ["turned"]),
         h.make_node("Sub", ["turned", "c_i1"], ["down"]),
         h.make_node("Max", ["down", "c_i0"], ["parents"]),
         h.make_node("Gather", ["past", "parents"], ["past_g"], axis=1),
         h.make_node("Attention", ["y", "w", "b", "", "past_g"], ["att", "present"],
                     domain="com.microsoft", num_heads=heads, unidirectional=1),
         h.make_node("Tanh", ["att"], ["y_out"]),
         h.make_node("Identity", ["present"], ["past_out"])]
    if trip == "cond":
        consts["c_i64_1"] = np.array(1, np.int64)
        n += [h.make_node("Add", ["i", "c_i64_1"], ["i1"]),
              h.make_node("Less", ["i1", "M"], ["cond_out"])]
    else:
        n.append(h.make_node("Identity", ["cond"], ["cond_out"]))
    past_t = h.make_tensor_value_info("past", T.FLOAT, [2, rows, heads, None, hidden // heads])
    body = h.make_graph(n, "body", [h.make_tensor_value_info("i", T.INT64, []),
                                    h.make_tensor_value_info("cond", T.BOOL, []),
                                    h.make_tensor_value_info("y", T.FLOAT, [rows, 1, hidden]),
                                    past_t],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []),
                         h.make_tensor_value_info("y_out", T.FLOAT, [rows, 1, hidden]),
                         h.make_tensor_value_info("past_out", T.FLOAT, None)])
    inputs = [h.make_tensor_value_info("y0", T.FLOAT, [rows, 1, hidden]),
              h.make_tensor_value_info("past0", T.FLOAT, [2, rows, heads, None,
                                                          hidden // heads])]
    if trip == "const":
        consts["M"] = np.array(3, np.int64)
    else:
        inputs.append(h.make_tensor_value_info("M", T.INT64, []))
    loop = h.make_node("Loop", ["" if trip == "cond" else "M", "c_true", "y0", "past0"],
                       ["y", "past_last"], body=body)
    g = h.make_graph([loop], "g", inputs, [h.make_tensor_value_info(o, T.FLOAT, None)
                                           for o in ("y", "past_last")],
                     [nh.from_array(v, k) for k, v in consts.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17),
                                          h.make_opsetid("com.microsoft", 1)], ir_version=8)


@pytest.mark.parametrize("trip", ["input", "const", "cond"])
def test_rows_reordered_every_iteration(trip):
    """A K/V cache whose rows a Gather reorders every iteration before ONNX Runtime's
    Attention reads it as its past (carried with its rows in place and an ancestry table,
    `padded.Grow.rows`), and the loop's final value: what NumPy and ONNX Runtime give."""
    rng = np.random.default_rng(2)
    feeds = {"y0": rng.standard_normal((3, 1, 8)).astype(np.float32),
             "past0": rng.standard_normal((2, 3, 2, 2, 4)).astype(np.float32)}
    if trip != "const":
        feeds["M"] = np.array(6, np.int64)
    _check(reordered_attention_loop(trip), feeds)


# ----------------------------------------------------------------------------- decoders


@pytest.mark.parametrize("beams", [0, 3])
def test_standard_onnx_decoder_loops_compile_as_one_while_loop(beams):
    """The generation bench's standard-ONNX decoders (prefill, then a Loop whose K/V caches
    grow by Concat): tokens identical to ONNX Runtime's and NumPy's."""
    model = generation_models.loop_model(24, 16, 2, layers=2, seed=3, beams=beams)
    ids = np.array([[3, 4, 5, 9]], np.int64)
    for new in (1, 6):
        _check(model, {"input_ids": ids, "max_new": np.array(new, np.int64)})


@pytest.mark.parametrize("name", ["torch/greedy_growing_op9", "torch/greedy_growing_op23",
                                  "torch/beam_search_op13", "torch/growing_cat_op23",
                                  "torch-unseen/grow_width_op15", "tf/while_growing_op13"])
def test_exported_loops_with_grown_values(name):
    """Loops exported by torch.onnx and tf2onnx whose carried values grow by Concat."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = onnx.load(str(HERE / f"{name}.onnx"))
        g = read(model)
    z = np.load(HERE / f"{name}.npz")
    feeds = {v.name: z[f"in{i}"] for i, v in enumerate(v for v in g.inputs
                                                        if v.const is None)}
    want = numpy_run(g, feeds)
    cg = jb.compile_graph(g)
    got = cg.run(feeds)
    assert_same(got, want, rtol=1e-5, atol=1e-5)
    assert _grown(cg), cg.explain()
    _explain_told_the_truth(g, cg)


def test_iteration_limit_as_numpy():
    """``max_iterations`` below the trip count: the same IterationLimitError as NumPy; at
    the trip count, the same results."""
    from itergraph.backends.numpy import CompileContext, run_plan

    g = read(attention_loop())
    feeds = _feeds(m=5)
    with pytest.raises(ig.IterationLimitError):
        run_plan(CompileContext(3).compile(g), feeds)
    cg = jb.compile_graph(g)
    with pytest.raises(ig.IterationLimitError):
        cg.run(feeds, max_iterations=3)
    assert_same(cg.run(feeds, max_iterations=5), numpy_run(g, feeds), rtol=1e-5, atol=1e-5)


def test_grown_loop_inside_a_counted_loop():
    """The attention loop (3 iterations, known when compiling) inside an outer loop of 2:
    the inner loop is a scan with buffers inside the outer one."""
    inner = attention_loop(trip="const").graph
    body = h.make_graph(
        [h.make_node("Loop", ["M", "c_true", "y", "k0"], ["y_in", "k_in"],
                     body=inner.node[0].attribute[0].g),
         h.make_node("Identity", ["cond"], ["cond_out"]),
         h.make_node("ReduceSum", ["k_in", "c_ax1"], ["ks"], keepdims=1),
         h.make_node("Add", ["y_in", "ks"], ["y_out"])],
        "outer", [h.make_tensor_value_info("j", T.INT64, []),
                  h.make_tensor_value_info("cond", T.BOOL, []),
                  h.make_tensor_value_info("y", T.FLOAT, ["B", 1, 4])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("y_out", T.FLOAT, ["B", 1, 4])])
    g = h.make_graph([h.make_node("Loop", ["c_two", "c_true", "y0"], ["y"], body=body)], "g",
                     list(inner.input), [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [*inner.initializer, nh.from_array(np.array(2, np.int64), "c_two")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    _check(model, _feeds("const"))


def test_valid_length_needed_when_compiling_falls_back():
    """The valid length feeding a Range bound (XLA needs it when compiling; in a buffer it
    is only known at run time): not rewritten, same results, the reason recorded."""
    _, cg = _check(attention_loop("range"), _feeds(), grown=False)
    (rec,) = [r for r in cg.explain() if r.element.startswith("Loop")]
    assert not rec.compiles and "not rewritten" in rec.reason
