"""`step-model`: one iteration of a loop as a model whose state is explicit; driven step by
step (in itergraph, ONNX Runtime and OpenVINO) it reproduces the loop's outputs."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import pytest
from xf_models import FLAVOURS, as_file, loops_of, onnx_loop, onnx_loop_feeds

import itergraph as ig
from itergraph import cli
from itergraph.ir import Loop
from itergraph.transforms import optimize
from itergraph.transforms.step_model import META_KEY, run_steps

#: flavour -> the loop's node name to pass (the ONNX Loop model has a second, dead loop)
NAMED = {"onnx.Loop": "main_loop"}


def _loop_outputs(model: ig.Model, feeds: dict) -> dict:
    """What the loop computes, by its output names: the graph outputs it gives directly."""
    loop = next(lp for lp in loops_of(model) if lp.name == NAMED.get(lp.origin, lp.name))
    outs = model.run(feeds)
    return {v.name: outs[v.name] for v in loop.outputs if v.name in outs}


def _ort_step(path):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return lambda feeds: dict(zip(names, sess.run(None, feeds), strict=True))


def _ov_step(path):
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})

    def step(feeds):
        got = compiled({k: np.array(v) for k, v in feeds.items()})  # writable copies
        return {name: got[o] for o in compiled.outputs for name in o.get_names()}
    return step


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_stepping_reproduces_the_loop(flavour, tmp_path):
    build, feeds_of = FLAVOURS[flavour]
    model = ig.load(as_file(build(), tmp_path, "in"))
    feeds = feeds_of()
    want = _loop_outputs(model, feeds)
    name = NAMED.get(flavour)
    step = optimize(model, ["step-model" + (f"={name}" if name else "")])
    assert not any(isinstance(n, Loop) for n in step.graph.nodes)
    loop = next(lp for lp in loops_of(model) if name in (None, lp.name))
    assert len(step.graph.inputs) >= len(loop.carried) + 1
    drivers = {"itergraph": None}
    ig.save(step, tmp_path / "step.onnx")
    onnx.checker.check_model(str(tmp_path / "step.onnx"), full_check=True)
    drivers["onnxruntime"] = _ort_step(tmp_path / "step.onnx")
    ig.save(step, tmp_path / "step.xml")
    drivers["openvino"] = _ov_step(tmp_path / "step.xml")
    for who, driver in drivers.items():
        got = run_steps(model, feeds, loop=name, step=driver)
        for k, w in want.items():
            np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-5, err_msg=f"{who}: {k}")


def test_state_roles_are_in_the_written_metadata(tmp_path):
    model = ig.load(onnx_loop())
    step = optimize(model, ["step-model=main_loop"])
    ig.save(step, tmp_path / "step.onnx")
    written = onnx.load(tmp_path / "step.onnx")
    layout = json.loads({p.key: p.value for p in written.metadata_props}[META_KEY])
    assert layout["loop"] == "main_loop"
    assert layout["state"] == [["acc", "acc_next"], ["cnt", "cnt_next"]]
    assert layout["iteration"] == "i" and layout["condition"] == "condition_next"
    assert {i.name for i in written.graph.input} >= {"acc", "cnt", "i", "x", "v"}
    # one step by hand: acc_next = acc + x[i]
    feeds = onnx_loop_feeds()
    sess = _ort_step(tmp_path / "step.onnx")
    assert layout["condition_in"] == "cond"  # the body passes it on
    got = sess({"acc": feeds["a0"], "cnt": np.array(0, np.float32), "i": np.array(2, np.int64),
                "cond": np.array(True), "x": feeds["x"], "v": feeds["v"]})
    np.testing.assert_allclose(got["acc_next"], feeds["a0"] + feeds["x"][2], rtol=1e-6)


def test_bad_loop_names_are_input_errors():
    model = ig.load(onnx_loop())
    with pytest.raises(ig.InputError, match="no top-level loop named 'nope'"):
        optimize(model, ["step-model=nope"])
    with pytest.raises(ig.InputError, match="2 top-level loops.*main_loop"):
        optimize(model, ["step-model"])
    with pytest.raises(ig.InputError, match="nope"):
        run_steps(model, onnx_loop_feeds(), loop="nope")


def test_cli_writes_the_step_model(tmp_path):
    src = as_file(onnx_loop(), tmp_path, "in")
    dst = tmp_path / "step.onnx"
    assert cli.main(["optimize", str(src), str(dst), "--passes",
                     "step-model=main_loop"]) == 0
    assert "acc_next" in [o.name for o in onnx.load(dst).graph.output]
    assert cli.main(["optimize", str(src), str(dst), "--passes", "step-model=nope"]) == 2


def _ov_while(limit: float) -> ov.Model:
    """OpenVINO Loop-5: S += X * current_iteration (an i64[1] parameter) while sum(S) <
    limit, at most T times; stacks S."""
    from openvino import opset13 as ops

    T = ops.parameter([], np.int64, name="T")
    X = ops.parameter([2, 3], np.float32, name="X")
    S = ops.parameter([2, 3], np.float32, name="S")
    it = ops.parameter([1], np.int64, name="it")
    xi = ops.parameter([2, 3], np.float32, name="xi")
    si = ops.parameter([2, 3], np.float32, name="si")
    s2 = ops.add(si, ops.multiply(xi, ops.convert(it, "f32")))
    total = ops.reduce_sum(s2, ops.constant(np.array([0, 1])), False)
    rs, rc = ops.result(s2), ops.result(ops.less(total, ops.constant(np.float32(limit))))
    ry = ops.result(ops.unsqueeze(s2, ops.constant(np.array([0]))))
    loop = ops.loop(T, ops.constant(np.array(True)))
    loop.set_function(ov.Model([rs, rc, ry], [it, xi, si], "body"))
    loop.set_special_body_ports([0, 1])
    loop.set_invariant_input(xi, X.output(0))
    loop.set_merged_input(si, S.output(0), rs.output(0))
    return ov.Model([loop.get_iter_value(rs.output(0), -1),
                     loop.get_concatenated_slices(ry.output(0), 0, 1, 1, -1, 0)],
                    [T, X, S], "while")


@pytest.mark.parametrize("trip", [0, 3, 50])
def test_while_loop_with_its_iteration_number(trip, tmp_path):
    model = ig.load(as_file(_ov_while(40.0), tmp_path, "in"))
    feeds = {"T": np.array(trip, np.int64), "X": np.ones((2, 3), np.float32),
             "S": np.zeros((2, 3), np.float32)}
    want = _loop_outputs(model, feeds)
    step = optimize(model, ["step-model"])
    ig.save(step, tmp_path / "step.onnx")
    ig.save(step, tmp_path / "step.xml")
    for who, driver in (("itergraph", None), ("onnxruntime", _ort_step(tmp_path / "step.onnx")),
                        ("openvino", _ov_step(tmp_path / "step.xml"))):
        got = run_steps(model, feeds, step=driver)
        for k, w in want.items():
            assert got[k].shape == w.shape, (who, k)
            np.testing.assert_allclose(got[k], w, rtol=1e-6, err_msg=f"{who}: {k}")
