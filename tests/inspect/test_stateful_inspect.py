"""The inspection tools on a stateful model (OpenVINO ReadValue/Assign around a Loop).

trace, compare and profile run ONE step from the state the model holds and leave that state
as it was; run_many runs its inputs one after another, advancing the state like ``run``.
The oracle is a plain NumPy loop of the step: ``a <- h; 3 times a <- a * 0.5 + x``; the step
outputs ``a`` and stores it as the next ``h``.
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset6 as ops6
import openvino.opset13 as ops
import pytest
from openvino.op.util import Variable, VariableInfo

import itergraph as ig
from itergraph.cli import main
from itergraph.inspect.profile import profile
from itergraph.scale.run_many import batching_plan
from itergraph.tracing.engines import run_on

STEPS = 3


def _stateful(path) -> str:
    """y = Loop(3 times: a <- a * 0.5 + x) from a = ReadValue(h) (zeros); Assign(h, y)."""
    info = VariableInfo()
    info.variable_id = "h"
    info.data_shape = ov.PartialShape([4])
    info.data_type = ov.Type.f32
    var = Variable(info)
    x = ops.parameter([4], np.float32, name="x")
    rv = ops6.read_value(var)
    ai = ops.parameter([4], np.float32, name="a")
    xi = ops.parameter([4], np.float32, name="xi")
    a2 = ops.add(ops.multiply(ai, ops.constant(np.float32(0.5))), xi)
    ra, rc = ops.result(a2), ops.result(ops.constant(np.array(True)))
    ra.set_friendly_name("a_next")  # the carried value's name in itergraph's reading
    loop = ops.loop(ops.constant(np.int64(STEPS)), ops.constant(np.array(True)))
    loop.set_function(ov.Model([ra, rc], [ai, xi], "body"))
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(ai, rv.output(0), ra.output(0))
    loop.set_invariant_input(xi, x.output(0))
    y = loop.get_iter_value(ra.output(0), -1)
    model = ov.Model([ops.result(y)], [ops6.assign(loop, var)], [x], "stateful")
    xml = str(path / "stateful.xml")
    ov.save_model(model, xml, compress_to_fp16=False)
    return xml


def _iterates(h: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    """The carried value after each step of the loop, by a plain loop."""
    out, a = [], h
    for _ in range(STEPS):
        a = a * np.float32(0.5) + x
        out.append(a)
    return out


@pytest.fixture
def model(tmp_path):
    """The model after two runs: it holds a state; also the inputs of those runs."""
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
    m = ig.load(_stateful(tmp_path))
    for x in xs[:2]:
        m.run({"x": x})
    return m, xs


def _held(m, xs) -> np.ndarray:
    h = np.zeros(4, np.float32)
    for x in xs[:2]:
        h = _iterates(h, x)[-1]
    np.testing.assert_allclose(m.query_state()["h"], h, rtol=1e-6)
    return h


def _assert_unchanged(m, before: dict) -> None:
    after = m.query_state()
    assert after.keys() == before.keys()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k])


@pytest.mark.parametrize("backend", ["numpy", "jax", "onnxruntime", "openvino"])
def test_trace_runs_one_step_from_the_held_state(model, backend):
    m, xs = model
    h = _held(m, xs)
    before = m.query_state()
    t = m.trace({"x": xs[2]}, backend=backend)
    want = _iterates(h, xs[2])
    entry = next(e for e in t.values() if e.tensor == "a_next")
    assert len(entry) == STEPS
    np.testing.assert_allclose(np.asarray(entry.values), np.stack(want), rtol=1e-5)
    y = next(iter(t.outputs.values()))
    np.testing.assert_allclose(y, want[-1], rtol=1e-5)
    np.testing.assert_allclose(t.outputs["h/next"], want[-1], rtol=1e-5)
    _assert_unchanged(m, before)
    # the run after the trace is the step the trace showed, not the one after it
    np.testing.assert_allclose(next(iter(m.run({"x": xs[2]}).values())), want[-1], rtol=1e-5)


def test_trace_of_a_fresh_model_is_the_first_step(tmp_path):
    m = ig.load(_stateful(tmp_path))
    x = np.arange(4, dtype=np.float32)
    t = m.trace({"x": x})
    entry = next(e for e in t.values() if e.tensor == "a_next")
    np.testing.assert_allclose(entry.values, np.stack(_iterates(np.zeros(4, np.float32), x)),
                               rtol=1e-6)
    assert m.query_state() == {}


def test_compare_runs_every_engine_on_the_held_state(model):
    m, xs = model
    h = _held(m, xs)
    before = m.query_state()
    report = ig.compare(m, {"x": xs[2]}, engines=["numpy", "jax", "onnxruntime", "openvino"])
    assert report.status == 0, report.text()
    assert {c.output for c in report.checks} >= {"h/next"}
    assert len(report.checks) == 3 * 2
    _assert_unchanged(m, before)
    # OpenVINO's InferRequest was given the state: its step is the oracle's, not a first step
    want = _iterates(h, xs[2])[-1]
    got = run_on("openvino", m.graph, {"x": xs[2]}, source=m.source, state=before)
    for v in got.values():
        np.testing.assert_allclose(v, want, rtol=1e-5)


def test_compare_on_a_file_is_the_first_step(tmp_path, capsys):
    xml = _stateful(tmp_path)
    np.save(tmp_path / "x.npy", np.ones(4, np.float32))
    assert main(["compare", xml, "--input", f"x={tmp_path / 'x.npy'}",
                 "--engines", "numpy,openvino"]) == 0
    assert "output 'h/next'" in capsys.readouterr().out


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_profile_runs_one_step_and_keeps_the_state(model, backend):
    m, xs = model
    before = m.query_state()
    p = profile(m, {"x": xs[2]}, backend=backend)
    (loop,) = p.loops.values()
    assert loop["runs"] == 1 and loop["steps"] == STEPS
    _assert_unchanged(m, before)


def test_run_many_runs_in_order_and_advances_the_state(tmp_path):
    xml = _stateful(tmp_path)
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.standard_normal(4).astype(np.float32)} for _ in range(5)]
    m = ig.load(xml)
    axes, verdict = batching_plan(m, {"x": 0})
    assert not verdict.ok and "state" in verdict.reason
    got = list(m.run_many(feeds, batch_size=4, batch_axes={"x": 0}))
    h = np.zeros(4, np.float32)
    for out, f in zip(got, feeds, strict=True):
        h = _iterates(h, f["x"])[-1]
        np.testing.assert_allclose(next(iter(out.values())), h, rtol=1e-5)
    np.testing.assert_allclose(m.query_state()["h"], h, rtol=1e-5)


def test_cli_trace_of_a_stateful_file(tmp_path, capsys):
    xml = _stateful(tmp_path)
    np.save(tmp_path / "x.npy", np.ones(4, np.float32))
    assert main(["trace", xml, "--input", f"x={tmp_path / 'x.npy'}", "-o",
                 str(tmp_path / "t.npz")]) == 0
    assert "a_next" in capsys.readouterr().out
    assert main(["view", xml, "-o", str(tmp_path / "v.html"), "--trace",
                 str(tmp_path / "t.npz")]) == 0
    assert "a_next" in (tmp_path / "v.html").read_text()
