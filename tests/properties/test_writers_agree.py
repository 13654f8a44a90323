"""The writers, differentially: random Loop, Scan and If-in-Loop models (zero iterations,
nested loops, Ifs nested in Ifs in a loop, every port kind) are written by itergraph to
OpenVINO IR, which OpenVINO runs, and to ONNX (passing ONNX's full check), which ONNX Runtime
runs; both give ONNX Runtime's outputs on the original (NumPy's where ONNX Runtime refuses an
empty Scan). A seeded, bounded run here; ``IG_WRITER_EXAMPLES=N`` runs N examples per form.
A counterexample is kept as a test below it."""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
import openvino as ov
from hypothesis import given
from hypothesis import strategies as st
from loopgen import (
    bounded,
    build_growing,
    build_loop,
    build_scan,
    empty_scan_result,
    growing_feeds,
    growing_specs,
    loop_feeds,
    loop_specs,
    scan_feeds,
    scan_specs,
)
from onnx import helper as h

import itergraph as ig
from onnx_builders import I64, B, F, body, const, model, run_ort, vi

EXAMPLES = int(os.environ.get("IG_WRITER_EXAMPLES", "25"))
INT32_MAX = 2**31 - 1
CORE = ov.Core()


def _close(got, want, who: str) -> None:
    assert len(got) == len(want), who
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{who}, output {i}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5,
                                   atol=1e-5, err_msg=f"{who}, output {i}")


def written_agree(m: onnx.ModelProto, feeds: dict, want: list, tmp, ort_runs: bool = True,
                  fixed: bool = False):
    """`m` written as IR (run by OpenVINO) and as ONNX (run by ONNX Runtime, or where it
    cannot, as for an empty Scan on which it dies, read back by itergraph) gives `want`.
    `fixed`: written with the feeds' shapes as static input shapes (``--input-shapes``)."""
    loaded = ig.load(m)
    if fixed:
        loaded = loaded.with_input_shapes({k: np.shape(v) for k, v in feeds.items()})
    xml = tmp / "m.xml"
    loaded.save(xml)
    compiled = CORE.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    # OpenVINO's CPU plugin computes int64 inputs as int32: a fed trip count of 2**63 - 1
    # ("unbounded", as exporters write it) arrives as -1; 2**31 - 1 is as unbounded for these
    res = compiled({k: np.minimum(v, INT32_MAX) if v.dtype == np.int64 else v
                    for k, v in feeds.items()})
    _close([res[o] for o in compiled.outputs], want, "OpenVINO on the written IR")
    path = tmp / "m.onnx"
    loaded.save(path)
    written = onnx.load(path)
    onnx.checker.check_model(written, full_check=True)
    if ort_runs:
        _close(list(run_ort(written, feeds).values()), want, "ONNX Runtime on the written ONNX")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ig.LeniencyWarning)
        again = list(ig.load(written).run(feeds, backend="numpy").values())
    _close(again, want, "itergraph on the written ONNX")


@bounded(EXAMPLES)
@given(spec=loop_specs(), seed=st.integers(0, 3))
def test_random_loops_written_run_as_the_original(spec, seed, tmp_path_factory):
    m = build_loop(spec)
    feeds = loop_feeds(spec, seed)
    written_agree(m, feeds, list(run_ort(m, feeds).values()), tmp_path_factory.mktemp("w"))


@bounded(EXAMPLES)
@given(spec=scan_specs(), seed=st.integers(0, 3))
def test_random_scans_written_run_as_the_original(spec, seed, tmp_path_factory):
    m = build_scan(spec)
    feeds = scan_feeds(spec, seed)
    if spec.length:
        want = list(run_ort(m, feeds).values())
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ig.LeniencyWarning)
            want = list(empty_scan_result(spec, feeds).values())
    written_agree(m, feeds, want, tmp_path_factory.mktemp("w"), ort_runs=bool(spec.length))


@bounded(EXAMPLES)
@given(spec=growing_specs(), seed=st.integers(0, 3), fixed=st.booleans())
def test_random_growing_caches_written_run_as_the_original(spec, seed, fixed, tmp_path_factory):
    """A carried value grown by ``Concat`` (a K/V cache), read in four ways, returned or not,
    written with input shapes left dynamic or fixed; both backends run the original too."""
    m = build_growing(spec)
    feeds = growing_feeds(spec, seed)
    want = list(run_ort(m, feeds).values())
    for backend in ("numpy", "jax"):
        _close(list(ig.load(m).run(feeds, backend=backend).values()), want, backend)
    try:
        written_agree(m, feeds, want, tmp_path_factory.mktemp("w"), fixed=fixed)
    except RuntimeError as e:
        # OpenVINO's limit (its own ONNX reader fails the same way): after zero iterations
        # it copies out the initial cache into an output it sized "at least one piece long"
        if spec.trip != 0 or "Can not clone with new dims" not in str(e):
            raise


def if_in_loop(depth: int, trip: int, shape: tuple, scan: bool) -> onnx.ModelProto:
    """``for i in range(trip): x = f(x, i)`` where f is `depth` nested Ifs on the iteration's
    bits (``i & 1``, ``i & 2``...), each branch scaling or shifting x; optionally x per step."""
    def branch(level: int, name: str, src: str) -> onnx.GraphProto:
        if level == depth:
            return h.make_graph([h.make_node("Mul" if name.endswith("t") else "Add",
                                             [src, "k" + name], ["r" + name])],
                                name, [], [vi("r" + name, F, list(shape))],
                                [const("k" + name, 0.5 + level + len(name) * 0.25, np.float32)])
        bit = 1 << level
        nodes = [h.make_node("BitwiseAnd", ["i", f"b{name}"], [f"a{name}"]),
                 h.make_node("Greater", [f"a{name}", "zero_i"], [f"c{name}"]),
                 h.make_node("If", [f"c{name}"], ["r" + name],
                             then_branch=branch(level + 1, name + "t", src),
                             else_branch=branch(level + 1, name + "e", src))]
        return h.make_graph(nodes, name, [], [vi("r" + name, F, list(shape))],
                            [const(f"b{name}", bit)])
    top = branch(0, "g", "x_in")
    nodes = list(top.node) + [h.make_node("Identity", ["c_in"], ["c_out"]),
                              h.make_node("Identity", ["rg"], ["x_out"])]
    outs = [vi("c_out", B, []), vi("x_out", F, list(shape))]
    if scan:
        nodes.append(h.make_node("Identity", ["rg"], ["x_t"]))
        outs.append(vi("x_t", F, list(shape)))
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, list(shape))], outs,
             list(top.initializer))
    graph_out = [vi("x", F, list(shape))] + ([vi("xs", F, [None, *shape])] if scan else [])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x"] + (["xs"] if scan else []),
                              body=b, name="outer")],
                 [vi("M", I64, []), vi("x0", F, list(shape))], graph_out,
                 [const("zero_i", 0)], opset=18)


@bounded(EXAMPLES)
@given(depth=st.integers(1, 3), trip=st.integers(0, 5), shape=st.sampled_from([(), (3,)]),
       scan=st.booleans())
def test_ifs_nested_in_a_loop_written_run_as_the_original(depth, trip, shape, scan,
                                                          tmp_path_factory):
    m = if_in_loop(depth, trip, shape, scan)
    feeds = {"M": np.array(trip, np.int64),
             "x0": np.linspace(1, 2, int(np.prod(shape))).astype(np.float32).reshape(shape)}
    written_agree(m, feeds, list(run_ort(m, feeds).values()), tmp_path_factory.mktemp("w"))


def test_a_constant_trip_count_of_2_63_runs_in_openvino(tmp_path):
    """TorchScript and tf2onnx write "unbounded" as a constant 2**63 - 1, which OpenVINO's CPU
    plugin would read as a 32-bit -1 and then as 0 after ONNX's clamp of negative counts: the
    writer bounds it to 2**31 - 1, and the loop stops by its condition as in ONNX Runtime."""
    from loopgen import INT64_MAX, LoopSpec

    spec = LoopSpec(shape=(3,), trip=INT64_MAX, cond0=None, stop="count", stop_at=3,
                    second=False, scans=("x",), opset=17)
    m = build_loop(spec)
    feeds = loop_feeds(spec, 0)
    m.graph.initializer.append(onnx.numpy_helper.from_array(feeds.pop("M"), "M"))
    del m.graph.input[0]
    written_agree(m, feeds, list(run_ort(m, feeds).values()), tmp_path)


def test_an_if_in_an_if_in_a_loop_compiles_in_openvino(tmp_path):
    """OpenVINO's CPU plugin crashed compiling an If nested in an If when a constant was an
    input of the outer one: the writer repeats captured constants inside the branches."""
    m = if_in_loop(3, 5, (3,), True)
    feeds = {"M": np.array(5, np.int64), "x0": np.ones(3, np.float32)}
    written_agree(m, feeds, list(run_ort(m, feeds).values()), tmp_path)
