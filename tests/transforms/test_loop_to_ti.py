"""``loop-to-ti``: loops with a count known before the run written as OpenVINO
TensorIterator (also by default); a count known only at run time, which may be 0 (OpenVINO's
TensorIterator fails on zero iterations), stays a ``Loop-5``."""

from __future__ import annotations

import pytest
from flavours import (
    check,
    loop_ops,
    onnx_count_loop,
    onnx_nested,
    onnx_row_loop,
    onnx_scan,
    onnx_while_loop,
    ov_loop,
    ov_tensor_iterator,
)

import itergraph as ig
from itergraph.transforms import TRANSFORMS

FLAVOURS = {
    "onnx-loop-constant-count": lambda tmp: onnx_count_loop(5),
    "onnx-loop-rows-static": lambda tmp: onnx_row_loop(6),
    "openvino-loop": ov_loop,
}


@pytest.mark.parametrize("passes", [["loop-to-ti"], []])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_counted_loops_are_written_as_tensor_iterator(flavour, passes, tmp_path):
    """With the transform, and without it: the IR writer applies it by default."""
    source, feeds = FLAVOURS[flavour](tmp_path)
    done = check(source, passes, feeds, tmp_path)
    assert loop_ops(done.xml_layers) == ["TensorIterator"]
    if passes:
        (loop,) = [n for n in done.model.graph.nodes if n.op_type == "Loop"]
        assert loop.trip_count is None and loop.condition_result is None


@pytest.mark.parametrize("rows", [6, 0])
def test_a_count_known_at_run_time_stays_a_loop(rows, tmp_path):
    """``for i in range(len(xs))`` with ``len(xs)`` known only at run time: written as Loop-5,
    which OpenVINO runs for 0 rows too (its TensorIterator failed there)."""
    source, feeds = onnx_row_loop("T")
    feeds["xs"] = feeds["xs"][:rows]
    p = TRANSFORMS["loop-to-ti"].build(None)
    assert p(ig.load(source).graph) == 0
    assert "known only at run time" in " ".join(p.skipped)
    assert loop_ops(check(source, [], feeds, tmp_path).xml_layers) == ["Loop"]


@pytest.mark.parametrize("flavour", ["openvino-ti", "onnx-scan"])
def test_a_tensor_iterator_or_scan_is_already_one(flavour, tmp_path):
    source, feeds = (ov_tensor_iterator(tmp_path) if flavour == "openvino-ti"
                     else onnx_scan(1))
    graph = ig.load(str(source) if flavour == "openvino-ti" else source).graph
    assert TRANSFORMS["loop-to-ti"].build(None)(graph) == 0
    assert loop_ops(check(source, ["loop-to-ti"], feeds, tmp_path).xml_layers) == [
        "TensorIterator"]


def test_nested_tensor_iterators_are_not_made(tmp_path):
    """OpenVINO refuses a TensorIterator inside a TensorIterator: the outer loop, whose body
    holds a Scan, stays a Loop (the inner Loop reads no slice and stays one too)."""
    source, feeds = onnx_nested()
    p = TRANSFORMS["loop-to-ti"].build(None)
    assert p(ig.load(source).graph) == 0
    reasons = " ".join(p.skipped)
    assert "reads no sliced input" in reasons and "nested" in reasons
    done = check(source, ["loop-to-ti"], feeds, tmp_path)
    assert sorted(loop_ops(done.xml_layers)) == ["Loop", "Loop", "TensorIterator"]


def test_uncounted_loops_stay_loops(tmp_path):
    p = TRANSFORMS["loop-to-ti"].build(None)
    for source, feeds in (onnx_while_loop(), onnx_count_loop(4, trip_input=True)):
        assert p(ig.load(source).graph) == 0
        assert loop_ops(check(source, ["loop-to-ti"], feeds, tmp_path).xml_layers) == ["Loop"]


@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("steps", [5, 0])
def test_a_scan_of_run_time_length_is_written_as_loop(reverse, steps, tmp_path):
    """A Scan whose input length is known only at run time is written as Loop-5, which
    OpenVINO runs for 0 steps too (ONNX Runtime refuses an empty scan input; the NumPy
    backend, which runs it with a warning, is the oracle there)."""
    import warnings

    import numpy as np
    import onnx
    from flavours import body, model, rand, run_ov, vi
    from onnx import helper as h

    F = onnx.TensorProto.FLOAT
    b = body([h.make_node("Add", ["acc", "xi"], ["acc2"]), h.make_node("Relu", ["acc2"], ["y"])],
             [vi("acc", F, [3]), vi("xi", F, [3])], [vi("acc2", F, [3]), vi("y", F, [3])])
    m = model([h.make_node("Scan", ["a0", "xs"], ["acc", "ys"], body=b, num_scan_inputs=1,
                           scan_input_directions=[reverse],
                           scan_output_directions=[1 - reverse], name="scan")],
              [vi("a0", F, [3]), vi("xs", F, ["T", 3])], [vi("acc", F, [3]), vi("ys", F, ["T", 3])])
    feeds = {"a0": rand(3), "xs": rand(steps, 3) if steps else np.zeros((0, 3), np.float32)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ig.LeniencyWarning)
        want = list(ig.load(m).run(feeds, backend="numpy").values())
    ig.save(ig.load(m), tmp_path / "m.xml")
    assert loop_ops([el.split('"')[0] for el in (tmp_path / "m.xml").read_text()
                     .split('type="')[1:]]) == ["Loop"]
    for got, ref in zip(run_ov(tmp_path / "m.xml", feeds), want):
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
