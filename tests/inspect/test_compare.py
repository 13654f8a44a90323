"""Engines compared: agreement, OpenVINO's real disagreements, and the first divergence."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as op
import pytest
from inspect_models import scan_with_inner_loop
from onnx import helper as h

import itergraph as ig
import onnx_builders as ob
from itergraph.cli import main
from itergraph.inspect.compare import check_output, first_divergence
from itergraph.tracing.names import TensorIndex

sys.path.insert(0, str(Path(__file__).parent.parent / "network"))
from net_cases import CASES  # noqa: E402


def _condition_loop(limit: float):
    """Loop 'L' (at most 100 steps) carrying acc: ``acc = acc + x + i`` while acc < limit."""
    b = ob.body([h.make_node("Add", ["acc", "x"], ["acc2"]),
                 h.make_node("Cast", ["i"], ["fi"], to=ob.F),
                 h.make_node("Add", ["acc2", "fi"], ["acc3"]),
                 h.make_node("Less", ["acc3", "lim"], ["c2"])],
                [ob.vi("i", ob.I64, []), ob.vi("c", ob.B, []), ob.vi("acc", ob.F, [])],
                [ob.vi("c2", ob.B, []), ob.vi("acc3", ob.F, [])],
                [ob.const("lim", np.float32(limit))], name="body")
    return ob.model([h.make_node("Loop", ["M", "", "a0"], ["aT"], body=b, name="L")],
                    [ob.vi("M", ob.I64, []), ob.vi("a0", ob.F, []), ob.vi("x", ob.F, [])],
                    [ob.vi("aT", ob.F, [])])


FEEDS = {"M": np.int64(100), "a0": np.float32(0), "x": np.float32(1.5)}


def test_engines_agree(tmp_path):
    r = ig.compare(_condition_loop(30), FEEDS, engines=["numpy", "jax", "onnxruntime",
                                                        "openvino"])
    assert r.status == 0, r.text()
    assert [c.engine for c in r.checks] == ["jax", "onnxruntime", "openvino"]
    assert all(c.stats["max_abs"] == 0 for c in r.checks)
    onnx.save(_condition_loop(30), tmp_path / "m.onnx")
    for k, v in FEEDS.items():
        np.save(tmp_path / f"{k}.npy", v)
    args = ["compare", str(tmp_path / "m.onnx"), "--engines", "numpy,onnxruntime"]
    args += [a for k in FEEDS for a in ("--input", f"{k}={tmp_path / (k + '.npy')}")]
    assert main(args) == 0
    assert main(args[:2] + ["--engines", "numpy,tensorflow"] + args[4:]) == 2


def test_compare_json(tmp_path, capsys):
    """``compare --json``: the status, each output check with its statistics, the errors and
    the divergences as JSON; the exit status is the same as without."""
    import json

    onnx.save(_condition_loop(30), tmp_path / "m.onnx")
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    assert main(["compare", str(tmp_path / "m.onnx"), "--input", str(tmp_path / "feeds.npz"),
                 "--engines", "numpy,onnxruntime", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == 0 and report["engines"] == ["numpy", "onnxruntime"]
    assert report["checks"][0]["engine"] == "onnxruntime" and report["checks"][0]["passed"]
    assert report["checks"][0]["stats"]["max_abs"] == 0


def test_statistics_in_polygraphy_manner():
    ref = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = ref + np.array([[0, 0], [0.5, 0]], np.float32)
    ok, detail, stats = check_output(ref, got, atol=1e-3, rtol=1e-3)
    assert not ok and stats["worst_index"] == (1, 0) and stats["mismatched"] == 1
    assert stats["max_abs"] == 0.5 and stats["median_abs"] == 0
    assert abs(stats["max_rel"] - 0.5 / 3) < 1e-9 and "worst: 3.5 vs reference 3" in detail
    assert check_output(ref, ref * (1 + 1e-7), atol=0, rtol=1e-6)[0]


def test_first_divergence_in_nested_loops():
    """Traces of the same nested model on inputs that differ from row 2 on: the first
    divergence is outer step 2, at the body parameter 'x_t' (the slice of X), before the
    inner loop's tensors at (2, 0)."""
    m, _ = scan_with_inner_loop(inner_trip=3)
    model = ig.load(m)
    X = np.random.default_rng(5).random((5, 3), np.float32)
    Y = X.copy()
    Y[2:] += 1
    h0 = np.zeros(3, np.float32)
    keys = list(TensorIndex(model.graph).tensors)
    a = model.trace({"h0": h0, "X": X}, tensors=keys)
    b = model.trace({"h0": h0, "X": Y}, tensors=keys, backend="onnxruntime")
    first, trips = first_divergence(TensorIndex(model.graph), a, b, "x", "y", 1e-5, 1e-5)
    assert trips == []
    assert (first.kind, first.loop, first.steps, first.tensor) == (
        "value", "outer_scan", (2,), "outer_scan/x_t")
    np.testing.assert_array_equal(first.value_reference, X[2])
    np.testing.assert_array_equal(first.value_engine, Y[2])
    assert "outer_scan step 2, body tensor 'outer_scan/x_t'" in first.text()
    # without x_t: the inner loop's carried g (it starts from x_t) at its first step
    a.entries.pop("outer_scan/x_t")
    first, _ = first_divergence(TensorIndex(model.graph), a, b, "x", "y", 1e-5, 1e-5)
    assert (first.loop, first.steps, first.tensor) == (
        "outer_scan > inner_loop", (2, 0), "outer_scan/inner_loop/g")


def test_trip_count_mismatch():
    a_model, b_model = ig.load(_condition_loop(30)), ig.load(_condition_loop(20))
    a, b = a_model.trace(FEEDS), b_model.trace(FEEDS)
    first, trips = first_divergence(TensorIndex(a_model.graph), a, b, "x", "y", 1e-5, 1e-5)
    # acc after step k: 1.5 (k+1) + k (k+1) / 2: 1.5, 4, 7.5, 12, 17.5, 24, 31.5
    assert [(d.loop, d.count_reference, d.count_engine) for d in trips] == [("L", 7, 6)]
    assert first.kind == "value" and first.tensor == "L/c2" and first.steps == (5,)
    assert bool(first.value_reference) is True and bool(first.value_engine) is False


def _swap_xml(path):
    """OpenVINO's own TensorIterator ``a, b = a + b + x, a`` (b's back edge fed straight by
    Parameter a): OpenVINO 2026.4's CPU plugin updates b after a's update."""
    X = op.parameter([5, 1, 2], np.float32, name="X")
    a0 = op.parameter([1, 2], np.float32, name="a0")
    xi = op.parameter([1, 1, 2], np.float32, name="xi")
    a = op.parameter([1, 2], np.float32, name="a")
    b = op.parameter([1, 2], np.float32, name="b")
    ra = op.result(op.add(op.add(a, b), op.reshape(xi, [1, 2], False), name="a_next"))
    rb = op.result(a)
    ti = op.tensor_iterator()
    ti.set_body(ov.Model([ra, rb], [xi, a, b], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(a, a0.output(0), ra.output(0))
    ti.set_merged_input(b, a0.output(0), rb.output(0))
    outs = [op.result(ti.get_iter_value(r.output(0), -1)) for r in (ra, rb)]
    ov.save_model(ov.Model(outs, [X, a0], "swap"), str(path), compress_to_fp16=False)


def test_openvino_swapped_back_edges_disagree(tmp_path):
    _swap_xml(tmp_path / "swap.xml")
    feeds = {"X": np.ones((5, 1, 2), np.float32), "a0": np.ones((1, 2), np.float32)}
    a, b = 1.0, 1.0
    for _ in range(5):
        a, b = a + b + 1, a
    r = ig.compare(tmp_path / "swap.xml", feeds, engines=["numpy", "openvino"])
    assert r.status == 1
    want = {c.output: c for c in r.checks}
    assert all(not c.passed for c in want.values())
    got_ref = ig.load(tmp_path / "swap.xml").run(feeds)
    assert np.allclose(list(got_ref.values())[0], a) and np.allclose(list(got_ref.values())[1], b)
    # itergraph's writer avoids the pattern, so the marked file runs right on OpenVINO
    assert any("as given" in n for n in r.notes), r.text()
    # the report names the loop and tells the body (right) from the loop's wiring (wrong)
    assert any(n.startswith("'") and "from TensorIterator" in n for n in r.notes), r.text()
    assert any("TensorIterator" in n and "gives numpy's values on openvino" in n
               and "port map or back edges" in n for n in r.notes), r.text()


def test_openvino_nested_capture_disagrees():
    """A TensorRT-style nested loop whose inner body reads the outer iterator (``acc += y_j *
    x_i``): OpenVINO 2026.4 goes wrong at outer step 0, inner step 1, in the sum."""
    net, feeds, want = CASES["nested_through_capture"]()
    r = ig.compare(net.to_graph(), feeds, engines=["numpy", "onnxruntime", "openvino"])
    assert r.status == 1
    bad = [c for c in r.checks if not c.passed]
    assert [c.engine for c in bad] == ["openvino"]
    assert r.trip_counts == []
    (d,) = r.divergences
    assert d.engine == "openvino" and d.steps == (0, 1) and len(d.loop.split(" > ")) == 2
    x, y = feeds["x"], feeds["y"]
    np.testing.assert_allclose(d.value_reference, y[0] * x[0] + y[1] * x[0])
    assert not np.allclose(d.value_engine, d.value_reference)
    assert d.tensor.endswith("[ElementWise]_output")


@pytest.mark.parametrize("engines", [["numpy"], ["numpy", "nope"]])
def test_bad_engine_lists(engines):
    with pytest.raises(ig.InputError):
        ig.compare(_condition_loop(30), FEEDS, engines=engines)


def _two_sliced_product_xml(path):
    """OpenVINO's own TensorIterator ``acc += x[t] * i[t]`` over two sliced inputs (found by
    the transforms bench): OpenVINO 2026.4's CPU plugin sums wrong products from step 1 on."""
    X = op.parameter([5, 1, 2], np.float32, name="X")
    index = op.parameter([5, 1, 1], np.float32, name="I")
    acc0 = op.parameter([1, 2], np.float32, name="acc0")
    xi = op.parameter([1, 1, 2], np.float32, name="xi")
    ii = op.parameter([1, 1, 1], np.float32, name="ii")
    acc = op.parameter([1, 2], np.float32, name="acc")
    prod = op.multiply(op.reshape(xi, [1, 2], False), op.reshape(ii, [1, 1], False))
    r = op.result(op.add(acc, prod, name="acc_next"))
    ti = op.tensor_iterator()
    ti.set_body(ov.Model([r], [xi, ii, acc], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    ti.set_sliced_input(ii, index.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(acc, acc0.output(0), r.output(0))
    out = op.result(ti.get_iter_value(r.output(0), -1))
    ov.save_model(ov.Model([out], [X, index, acc0], "mul2"), str(path), compress_to_fp16=False)


def test_openvino_product_of_two_sliced_inputs_diverges_at_step_1(tmp_path):
    _two_sliced_product_xml(tmp_path / "mul2.xml")
    x = np.random.default_rng(0).random((5, 1, 2), np.float32)
    i = np.arange(5, dtype=np.float32).reshape(5, 1, 1)
    feeds = {"X": x, "I": i, "acc0": np.zeros((1, 2), np.float32)}
    r = ig.compare(tmp_path / "mul2.xml", feeds, engines=["numpy", "openvino"])
    assert r.status == 1
    (d,) = r.divergences
    assert d.engine == "openvino" and d.steps == (1,)
    np.testing.assert_allclose(d.value_reference, x[0] * i[0] + x[1] * i[1], rtol=1e-6)
    assert not np.allclose(d.value_engine, d.value_reference)
    np.testing.assert_allclose(next(iter(ig.load(tmp_path / "mul2.xml").run(feeds).values())),
                               (x * i).sum(0), rtol=1e-6)


def test_default_engines_are_the_installed_ones(monkeypatch, tmp_path):
    """Without --engines, compare runs the engines whose packages are installed; one that is
    asked for but missing says how to install it."""
    import importlib.util

    from itergraph.tracing import engines

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("onnxruntime", "openvino")
                        else real(name, *a))
    assert engines.installed_engines() == ("numpy", "jax")
    r = ig.compare(_condition_loop(30), FEEDS)
    assert r.status == 0 and [c.engine for c in r.checks] == ["jax"]
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    r = ig.compare(_condition_loop(30), FEEDS, engines=["numpy", "onnxruntime"])
    assert r.status == 2 and "pip install onnxruntime" in r.text()
    path = tmp_path / "m.onnx"
    onnx.save(_condition_loop(30), path)
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    # the command's exit status: 1, a failure at run time (2 is for usage errors)
    assert main(["compare", str(path), "--input", str(tmp_path / "feeds.npz"), "--engines",
                 "numpy,onnxruntime"]) == 1


def test_an_unknown_engine_is_named_and_too_few_engines_say_what_to_install(monkeypatch):
    import itergraph.inspect.compare as compare_module

    with pytest.raises(ig.InputError, match="unknown engine 'tensorflow'; the engines: numpy"):
        ig.compare(_condition_loop(3), FEEDS, engines="numpy,tensorflow")
    monkeypatch.setattr(compare_module, "installed_engines", lambda: ("numpy",))
    with pytest.raises(ig.InputError, match=r"got numpy \(jax, onnxruntime, openvino not "
                                            r"installed: pip install 'itergraph\[jax,peers\]'"):
        ig.compare(_condition_loop(3), FEEDS)
