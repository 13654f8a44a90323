"""Traces of nested loops on every backend against plain Python loops; names, steps, files."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from inspect_models import ragged_loops, scan_with_inner_loop, ti_inside_loop
from onnx import helper as h

import itergraph as ig
from itergraph.cli import main
from itergraph.frontends.onnx import write
from itergraph.tracing.mark import mark
from itergraph.tracing.trace_file import load_trace

BACKENDS = ["numpy", "jax", "onnxruntime", "openvino"]


def _check(t, want):
    for k, (v, s) in want.items():
        np.testing.assert_allclose(np.asarray(t[k].values), v, rtol=1e-5, atol=1e-6,
                                   err_msg=k)
        np.testing.assert_array_equal(t[k].steps, s, err_msg=k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_inside_scan(backend):
    m, oracle = scan_with_inner_loop(inner_trip=3)
    X = np.random.default_rng(0).random((4, 3), np.float32)
    h0 = np.full(3, 0.25, np.float32)
    want = oracle(h0, X)
    t = ig.load(m).trace({"h0": h0, "X": X}, tensors=list(want), backend=backend)
    _check(t, want)
    assert t["outer_scan/inner_loop/gh"].loops == ["outer_scan", "inner_loop"]
    assert t["outer_scan/inner_loop/gh"].kind == "body"
    assert t["outer_scan/h_next"].kind == "carried"


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensoriterator_inside_loop(tmp_path, backend):
    oracle = ti_inside_loop(tmp_path / "m.xml")
    X = np.random.default_rng(1).random((5, 4), np.float32)
    h0 = np.ones((1, 4), np.float32)
    want = oracle(X, h0)
    model = ig.load(tmp_path / "m.xml")
    _check(model.trace({"X": X, "h0": h0}, tensors=list(want), backend=backend), want)
    default = model.trace({"X": X, "h0": h0}, backend=backend)
    kinds = sorted(e.kind for e in default.values())
    assert kinds == ["carried", "carried", "condition"]


@pytest.mark.parametrize("backend", ["numpy", "jax", "onnxruntime"])
def test_inner_step_count_varies(backend):
    m, feeds, oracle = ragged_loops(5)
    want = oracle(feeds["s0"])
    _check(ig.load(m).trace(feeds, tensors=list(want), backend=backend), want)


def test_default_trace_is_carried_values_and_conditions():
    m, oracle = scan_with_inner_loop()
    t = ig.load(m).trace({"h0": np.zeros(3, np.float32), "X": np.ones((2, 3), np.float32)})
    assert {k: e.kind for k, e in t.items()} == {
        "outer_scan/h_next": "carried", "outer_scan/inner_loop/g_next": "carried",
        "outer_scan/inner_loop/c_out": "condition"}
    assert t["outer_scan/inner_loop/c_out"].values.dtype == np.bool_


def test_steps_selection_and_names():
    m, oracle = scan_with_inner_loop(inner_trip=3)
    X = np.random.default_rng(2).random((6, 3), np.float32)
    h0 = np.zeros(3, np.float32)
    want = oracle(h0, X)
    model = ig.load(m)
    t = model.trace({"h0": h0, "X": X}, tensors=["inner_loop/g_next", "gh"], steps="1:5:2,2")
    v, s = want["outer_scan/inner_loop/g_next"]
    keep = np.isin(s[:, 0], [1, 3]) & (s[:, 1] == 2)
    np.testing.assert_allclose(t["outer_scan/inner_loop/g_next"].values, v[keep], rtol=1e-6)
    assert t["outer_scan/inner_loop/g_next"].steps.tolist() == [[1, 2], [3, 2]]
    with pytest.raises(ig.InputError, match="close matches: .*g_next"):
        model.trace({"h0": h0, "X": X}, tensors=["g_nxt"])
    with pytest.raises(ig.InputError, match="--steps"):
        model.trace({"h0": h0, "X": X}, steps="a:b")


def _sibling_loops():
    """Two top-level loops 'first' and 'second' whose bodies both name a tensor 'acc2'."""
    import onnx_builders as ob

    def loop(name, factor):
        b = ob.body([h.make_node("Mul", ["acc", f"k{name}"], ["acc2"]),
                     h.make_node("Identity", ["c"], ["co"])],
                    [ob.vi("i", ob.I64, []), ob.vi("c", ob.B, []), ob.vi("acc", ob.F, [])],
                    [ob.vi("co", ob.B, []), ob.vi("acc2", ob.F, [])],
                    [ob.const(f"k{name}", np.float32(factor))], name=f"{name}_body")
        return b

    nodes = [h.make_node("Loop", ["N", "", "a0"], ["a1"], body=loop("first", 2.0), name="first"),
             h.make_node("Loop", ["N", "", "a1"], ["a2"], body=loop("second", 3.0),
                         name="second")]
    return ob.model(nodes, [ob.vi("N", ob.I64, []), ob.vi("a0", ob.F, [])],
                    [ob.vi("a2", ob.F, [])])


def test_ambiguous_name_needs_its_loop():
    model = ig.load(_sibling_loops())
    feeds = {"N": np.int64(3), "a0": np.float32(1)}
    with pytest.raises(ig.InputError, match="ambiguous.*first/acc2.*second/acc2"):
        model.trace(feeds, tensors=["acc2"])
    t = model.trace(feeds, tensors=["second/acc2", "first/acc2"])
    np.testing.assert_allclose(t["first/acc2"].values, [2, 4, 8])
    np.testing.assert_allclose(t["second/acc2"].values, [24, 72, 216])


def test_marked_file_is_valid_onnx_and_openvino(tmp_path):
    m, _ = scan_with_inner_loop()
    g = ig.load(m).graph
    for mode in ("stack", "thread"):
        marked, records = mark(g, ["gh", "h_next"], mode)
        onnx.checker.check_model(write(marked), full_check=True)
        assert {r.key for r in records.values()} == {"outer_scan/inner_loop/gh",
                                                     "outer_scan/h_next"}
    marked, records = mark(g, None, "stack")
    ig.save(marked, tmp_path / "marked.xml")
    import openvino as ov

    # the model's output, one per traced tensor, and the inner loop's step counts of the
    # two tensors inside it
    assert [len(r.counts) for r in records.values()] == [0, 1, 1]
    assert len(ov.Core().read_model(str(tmp_path / "marked.xml")).outputs) == 1 + 3 + 2


def test_cli_trace_file_format(tmp_path):
    m, oracle = scan_with_inner_loop()
    onnx.save(m, tmp_path / "m.onnx")
    X = np.random.default_rng(3).random((3, 3), np.float32)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "h0.npy", np.zeros(3, np.float32))
    out = tmp_path / "t.npz"
    assert main(["trace", str(tmp_path / "m.onnx"), "--input", f"X={tmp_path / 'X.npy'}",
                 "--input", f"h0={tmp_path / 'h0.npy'}", "--tensor", "gh", "--tensor",
                 "h_next", "--backend", "jax", "-o", str(out)]) == 0
    z = np.load(out)
    meta = json.loads(str(z["__meta__"]))
    assert meta["backend"] == "jax"
    assert meta["entries"]["outer_scan/inner_loop/gh"] == {
        "loops": ["outer_scan", "inner_loop"], "tensor": "gh", "kind": "body"}
    want = oracle(np.zeros(3, np.float32), X)
    np.testing.assert_allclose(z["outer_scan/inner_loop/gh/values"],
                               want["outer_scan/inner_loop/gh"][0], rtol=1e-6)
    assert z["outer_scan/inner_loop/gh/steps"].dtype == np.int64
    assert main(["trace", str(tmp_path / "m.onnx"), "--input", f"X={tmp_path / 'X.npy'}",
                 "--input", f"h0={tmp_path / 'h0.npy'}", "--tensor", "nope",
                 "-o", str(out)]) == 2


def test_large_trace_streams_to_disk(tmp_path):
    """Eight traced tensors of 4 MB each: written one group at a time under a 5 MB budget,
    the peak of Python-tracked memory stays well below the 32 MB the trace holds."""
    import onnx_builders as ob

    n, width = 1000, 1000
    nodes = [h.make_node("Add", ["acc", "x"], ["t0"])]
    nodes += [h.make_node("Mul", [f"t{k}", "half"], [f"t{k + 1}"]) for k in range(7)]
    nodes.append(h.make_node("Identity", ["c"], ["co"]))
    b = ob.body(nodes, [ob.vi("i", ob.I64, []), ob.vi("c", ob.B, []),
                        ob.vi("acc", ob.F, [width])],
                [ob.vi("co", ob.B, []), ob.vi("t7", ob.F, [width])],
                [ob.const("half", np.float32(0.5))], name="b")
    m = ob.model([h.make_node("Loop", ["N", "", "a0"], ["aT"], body=b, name="L")],
                 [ob.vi("N", ob.I64, []), ob.vi("a0", ob.F, [width]), ob.vi("x", ob.F, [width])],
                 [ob.vi("aT", ob.F, [width])])
    model = ig.load(m)
    feeds = {"N": np.int64(n), "a0": np.zeros(width, np.float32),
             "x": np.ones(width, np.float32)}
    names = [f"t{k}" for k in range(8)]
    tracemalloc.start()
    t = model.trace(feeds, tensors=names, path=tmp_path / "big.npz", memory_budget=5 << 20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    total = 8 * n * width * 4
    assert peak < total / 2, (peak, total)
    back = load_trace(tmp_path / "big.npz")
    assert list(back) == [f"L/t{k}" for k in range(8)]
    assert back["L/t3"].values.shape == (n, width)
    acc, want = np.float32(0), []
    for _ in range(3):
        want.append(acc + 1)
        acc = np.float32((acc + 1) * np.float32(0.5) ** 7)
    np.testing.assert_allclose(t["L/t0"].values[:3, 0], want, rtol=1e-6)


def test_mark_is_a_named_transform(tmp_path):
    m, oracle = scan_with_inner_loop()
    onnx.save(m, tmp_path / "m.onnx")
    assert main(["optimize", str(tmp_path / "m.onnx"), str(tmp_path / "marked.onnx"),
                 "--passes", "mark=gh+h_next"]) == 0
    onnx.checker.check_model(onnx.load(tmp_path / "marked.onnx"), full_check=True)
    X = np.random.default_rng(4).random((3, 3), np.float32)
    h0 = np.zeros(3, np.float32)
    import onnx_builders as ob

    got = ob.run_ort(onnx.load(tmp_path / "marked.onnx"), {"X": X, "h0": h0})
    want = oracle(h0, X)
    np.testing.assert_allclose(got["trace0:outer_scan/inner_loop/gh"].reshape(-1, 3),
                               want["outer_scan/inner_loop/gh"][0], rtol=1e-6)


def test_a_ragged_trace_on_openvino_is_an_error_not_garbage():
    # OpenVINO stacks inner scan outputs of different lengths without complaint, filling the
    # rest with stale memory; the step counters the mark transform adds catch it.
    m, feeds, _ = ragged_loops(5)
    with pytest.raises(ig.ExecutionError, match="'inner' ran 0 to 4 steps"):
        ig.load(m).trace(feeds, backend="openvino")


def test_a_loop_carrying_a_list_is_traced_without_it(tmp_path, capsys):
    """By default every carried value that is a tensor is traced and a carried list is named
    as left out; naming the list is an error, and a failed trace leaves no file behind."""
    from itergraph.cli import main as cli

    model = Path(__file__).parents[1] / "realworld" / "models" / "torch" / \
        "nested_while_in_for_op23.onnx"
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((4, 3)).astype(
        np.float32))
    out = tmp_path / "t.npz"
    assert cli(["trace", str(model), "--input", f"x={tmp_path / 'x.npy'}", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "not traced (not tensors" in text and "SequenceInsert_output_0" in text
    t = ig.load(model).trace({"x": np.load(tmp_path / "x.npy")})
    assert t.skipped and all("SequenceInsert" in k for k in t.skipped) and len(t) >= 4
    bad = tmp_path / "bad.npz"
    assert cli(["trace", str(model), "--input", f"x={tmp_path / 'x.npy'}", "-o", str(bad),
                "--tensor", t.skipped[0]]) == 1
    assert "not a tensor" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npz", "x.npy"]


def test_a_trace_prints_as_a_summary_not_its_arrays(tmp_path):
    m = ig.load(scan_with_inner_loop()[0])
    feeds = {"h0": np.zeros(3, np.float32), "X": np.ones((2, 3), np.float32)}
    t = m.trace(feeds)
    text = repr(t)
    lines = text.splitlines()
    assert lines[0].startswith("<Trace of ") and f"{len(t)} tensors" in lines[0]
    assert len(lines) == 1 + len(t)  # one line per tensor, no array printed
    for line, e in zip(lines[1:], t.values()):
        assert f"'{e.key}'" in line and f"{len(e)} steps" in line
    path = tmp_path / "t.npz"
    m.trace(feeds, path=path)
    assert repr(load_trace(path)).splitlines()[1:] == lines[1:]
