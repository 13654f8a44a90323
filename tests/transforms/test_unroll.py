"""``unroll``: full and partial unrolling of every loop flavour, checked by running."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
from itergraph import cli
from itergraph.transforms import TRANSFORMS, optimize

FLAVOURS = {
    "onnx-loop": lambda tmp: onnx_count_loop(5),
    "onnx-loop-rows": lambda tmp: onnx_row_loop(6),
    "onnx-scan": lambda tmp: onnx_scan(0),
    "onnx-scan-reversed": lambda tmp: onnx_scan(1),
    "onnx-nested": lambda tmp: onnx_nested(),
    "openvino-ti": ov_tensor_iterator,
    "openvino-loop": ov_loop,
}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_full_unroll_leaves_no_loop(flavour, tmp_path):
    source, feeds = FLAVOURS[flavour](tmp_path)
    done = check(source, ["unroll"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == []
    assert loop_ops(done.xml_layers) == []


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_partial_unroll_keeps_one_loop_of_k_copies(flavour, k, tmp_path):
    source, feeds = FLAVOURS[flavour](tmp_path)
    done = check(source, [f"unroll={k}"], feeds, tmp_path)
    before = ig.load(str(source) if isinstance(source, Path) else source)
    loops_before = [n for _, n in before.graph.walk() if n.op_type == "Loop"]
    loops_after = [n for _, n in done.model.graph.walk() if n.op_type == "Loop"]
    if flavour == "onnx-nested":  # inner loops are unrolled first, then copied by the outer
        assert all(n.name != "outer" for n in loops_after)
        return
    assert len(loops_after) == len(loops_before)  # the rest is copied: the count is static
    for old, new in zip(loops_before, loops_after):
        assert len(new.body.nodes) >= k * len(old.body.nodes)


@pytest.mark.parametrize("trips", [0, 1, 4, 5, 7])
def test_partial_unroll_of_a_run_time_count_runs_the_rest_in_a_loop(trips, tmp_path):
    source, feeds = onnx_count_loop(trips, trip_input=True)
    done = check(source, ["unroll=3"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Loop", "Loop"]


def test_full_unroll_needs_a_static_count(tmp_path):
    source, feeds = onnx_row_loop("T")  # rows of unknown length
    p = TRANSFORMS["unroll"].build(None)
    g = ig.load(source).graph
    assert p(g) == 0
    assert "not known before it runs" in p.skipped[0]


def test_a_data_dependent_condition_is_never_unrolled(tmp_path):
    source, feeds = onnx_while_loop()
    for arg in (None, "2"):
        p = TRANSFORMS["unroll"].build(arg)
        g = ig.load(source).graph
        assert p(g) == 0
        assert "condition may stop it early" in p.skipped[0]
    done = check(source, ["unroll"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == ["Loop"]


def test_the_size_limit_and_its_override(tmp_path):
    source, feeds = onnx_count_loop(300)
    kept = optimize(source, ["unroll"])
    assert [n.op_type for n in kept.graph.nodes] == ["Loop"]
    done = check(source, ["unroll=full:300"], feeds, tmp_path)
    assert loop_ops(done.onnx_ops) == []


@pytest.mark.parametrize("arg", ["x", "0", "-2", "full:0", "full:x", "2.5", ""])
def test_bad_arguments_are_input_errors(arg):
    source, _ = onnx_count_loop(3)
    with pytest.raises(ig.InputError, match="unroll"):
        optimize(source, [f"unroll={arg}"])


def test_cli_unroll(tmp_path):
    source, feeds = onnx_count_loop(4)
    import onnx

    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(source, src)
    assert cli.main(["optimize", str(src), str(out), "--passes", "unroll"]) == 0
    assert all(n.op_type != "Loop" for n in ig.load(out).graph.nodes)
    got, want = ig.load(out).run(feeds), ig.load(src).run(feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
    assert cli.main(["optimize", str(src), str(out), "--passes", "unroll=0"]) == 2
