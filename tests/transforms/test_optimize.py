"""`itergraph.transforms.optimize` and ``itergraph optimize``: the shared machinery."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import itergraph as ig
from itergraph import cli
from itergraph.transforms import TRANSFORMS, optimize, parse_pass_list


def _loop_with_invariant_work() -> onnx.ModelProto:
    """y = sum over 3 steps of (x + exp(w)); exp(w) reads only outer values."""
    body = helper.make_graph(
        [helper.make_node("Exp", ["w"], ["e"]),
         helper.make_node("Add", ["acc", "e"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="the_loop")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [helper.make_tensor("n", TensorProto.INT64, [], [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_optimize_returns_a_new_model_with_the_same_outputs():
    model = ig.load(_loop_with_invariant_work())
    before = len(model.graph.nodes[0].body.nodes)
    out = optimize(model, ["hoist"])
    assert len(model.graph.nodes[0].body.nodes) == before  # the user's model is untouched
    loop = next(n for n in out.graph.nodes if n.op_type == "Loop")
    assert all(n.op_type != "Exp" for n in loop.body.nodes)
    feeds = {"x": np.float32([1, 2]), "w": np.float32([0, 1])}
    np.testing.assert_allclose(out.run(feeds)["y"], model.run(feeds)["y"], rtol=1e-6)


def test_pass_list_parsing_and_errors():
    assert parse_pass_list("hoist, hoist") == [("hoist", None), ("hoist", None)]
    with pytest.raises(ig.InputError, match="unknown transform 'nope'"):
        parse_pass_list("nope")
    with pytest.raises(ig.InputError, match="takes no argument"):
        optimize(_loop_with_invariant_work(), ["hoist=3"])


def test_every_transform_states_its_contract():
    for t in TRANSFORMS.values():
        text = t.contract()
        assert all(part in text for part in ("Applies to:", "Returns:", "Guarantees:")), t.name


def test_cli_optimize_writes_only_the_file_asked_for(tmp_path, capsys):
    src = tmp_path / "in.onnx"
    onnx.save(_loop_with_invariant_work(), src)
    out = tmp_path / "out.onnx"
    assert cli.main(["optimize", str(src), str(out), "--passes", "hoist"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx", "out.onnx"]
    feeds = {"x": np.float32([1, 2]), "w": np.float32([0, 1])}
    np.testing.assert_allclose(ig.load(out).run(feeds)["y"], ig.load(src).run(feeds)["y"])
    assert cli.main(["optimize", "--list"]) == 0
    assert "hoist" in capsys.readouterr().out
    assert cli.main(["optimize", str(src), str(out), "--passes", "bogus"]) == 2


def test_cli_optimize_says_what_each_transform_did(tmp_path, capsys):
    """Per transform: its rewrites, and each loop it left with the reason; then nodes, loops,
    changed op counts and file sizes before and after. ``--list`` is one line per transform
    (after the default pipeline), ``--list -v`` adds the contracts."""
    src = tmp_path / "in.onnx"
    onnx.save(_loop_with_invariant_work(), src)
    out = tmp_path / "out.onnx"
    assert cli.main(["optimize", str(src), str(out), "--passes", "hoist,unroll=2"]) == 0
    text = capsys.readouterr().out
    assert "hoist: 1 rewrite\n" in text and "unroll=2: 1 rewrite\n" in text
    assert "loops 1 -> 1" in text and "KiB ->" in text and "ops: Add 1 -> 3" in text
    breaks = Path(__file__).parents[1] / "realworld" / "models" / "torch" / "for_break_op13.onnx"
    assert cli.main(["optimize", str(breaks), str(out), "--passes", "unroll=4"]) == 0
    text = capsys.readouterr().out
    assert "unroll=4: 0 rewrites\n    left: Loop node '/Loop': its condition may stop it" in text
    assert cli.main(["optimize", "--list"]) == 0
    short = capsys.readouterr().out.splitlines()
    assert short[0].startswith("default pipeline") and any(
        line.startswith("hoist: ") for line in short)
    assert cli.main(["optimize", "--list", "-v"]) == 0
    assert len(capsys.readouterr().out.splitlines()) > 3 * len(short)
