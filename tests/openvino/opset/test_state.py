"""Stateful models (ReadValue-3/6, Assign-3/6, LowLatency2 step models) against OpenVINO.

Each model runs a schedule of inference calls with a ``reset_state`` in the middle, in one
OpenVINO ``InferRequest`` and in one itergraph `Model` on NumPy and on JAX: the outputs agree
call by call. The IR itergraph writes back runs the same schedule in OpenVINO; the ONNX copy
(each variable an input, an ``is_set`` flag and a next-value output) runs it in ONNX Runtime,
the test carrying the state from call to call.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import openvino.opset3 as ops3
import openvino.opset6 as ops6
import openvino.opset8 as ops8
import pytest
from openvino._offline_transformations import apply_low_latency_transformation
from openvino.op.util import Variable, VariableInfo
from openvino.passes import LowLatency2, Manager
from ov_helpers import CONFIG, CORE, assert_close, record, save

import itergraph as ig
from itergraph.errors import Error, ExecutionError, InputError, ModelError, UnsupportedError

RESET = "reset"


def _variable(vid: str, shape, dtype=ov.Type.f32) -> Variable:
    info = VariableInfo()
    info.variable_id = vid
    info.data_shape = ov.PartialShape(shape)
    info.data_type = dtype
    return Variable(info)


def _schedule(rng, shapes: dict, calls=(3, 2), dtype=np.float32) -> list:
    """`calls[0]` runs, a reset, `calls[1]` runs; fresh random feeds for each run."""
    def feeds():
        return {k: (rng.standard_normal(s) * 2).astype(dtype) for k, s in shapes.items()}
    return [feeds() for _ in range(calls[0])] + [RESET] + [feeds() for _ in range(calls[1])]


def ov_steps(xml, schedule) -> list[list[np.ndarray]]:
    c = CORE.compile_model(CORE.read_model(str(xml)), "CPU", CONFIG)
    req = c.create_infer_request()
    out = []
    for step in schedule:
        if step is RESET:
            req.reset_state()
            continue
        res = req.infer(step)
        out.append([np.array(res[o]) for o in c.outputs])
    return out


def ig_steps(model: ig.Model, schedule, backend: str) -> list[list[np.ndarray]]:
    out = []
    for step in schedule:
        if step is RESET:
            model.reset_state()
            continue
        out.append([np.asarray(v) for v in model.run(step, backend=backend).values()])
    return out


def ort_steps(path, schedule, n_outputs: int) -> list[list[np.ndarray]]:
    """The ONNX copy in ONNX Runtime; the test keeps the state: ``<id>`` and ``<id>/is_set``
    in, ``<id>/next`` out."""
    onnx.checker.check_model(str(path), full_check=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    ids = [n[: -len("/is_set")] for n in inputs if n.endswith("/is_set")]
    state: dict[str, np.ndarray] = {}
    out = []
    for step in schedule:
        if step is RESET:
            state.clear()
            continue
        feeds = dict(step)
        for vid in ids:
            i = inputs[vid]
            dtype = {"tensor(float)": np.float32, "tensor(int32)": np.int32,
                     "tensor(float16)": np.float16, "tensor(int64)": np.int64}[i.type]
            shape = [d if isinstance(d, int) else 0 for d in i.shape]
            feeds[vid] = state.get(vid, np.zeros(shape, dtype))
            feeds[f"{vid}/is_set"] = np.array(vid in state)
        res = dict(zip(names, sess.run(None, feeds)))
        for vid in ids:
            if f"{vid}/next" in res:
                state[vid] = res[f"{vid}/next"]
        out.append([res[n] for n in names[:n_outputs]])
    return out


def _compare(got, want, what, tol):
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w), f"{what}, call {k}"
        for i, (a, b) in enumerate(zip(g, w)):
            assert_close(a, b, tol, tol, f"{what}, call {k}, output {i}")


def check_stateful(model: ov.Model, schedule, tmp_path, tol=1e-5, to_onnx=True):
    """OpenVINO vs itergraph (NumPy, JAX) call by call; then OpenVINO on the written IR and
    ONNX Runtime on the ONNX copy. Returns the itergraph model and OpenVINO's outputs."""
    xml = save(model, tmp_path)
    want = ov_steps(xml, schedule)
    m = ig.load(xml)
    for backend in ("numpy", "jax"):
        m.reset_state()
        _compare(ig_steps(m, schedule, backend), want, f"itergraph {backend}", tol)
    written = tmp_path / "written.xml"
    ig.save(m, written)
    text = written.read_text()
    assert "ReadValue" in text and "Assign" in text
    _compare(ov_steps(written, schedule), want, "OpenVINO on the written IR", tol)
    if to_onnx:
        path = tmp_path / "written.onnx"
        ig.save(m, path)
        _compare(ort_steps(path, schedule, len(want[0])), want, "ONNX Runtime", tol)
    record({el.get("type") for el in ET.parse(xml).iter("layer")}, "numpy", "jax", "write",
           *(["onnx"] if to_onnx else []))
    m.reset_state()
    return m, want


# -- ReadValue / Assign built with the opset APIs ----------------------------------------------

@pytest.mark.parametrize("with_init", [True, False])
def test_opset6_accumulator(tmp_path, with_init):
    """acc <- acc + x: with the init value x, or zeros of the variable's shape."""
    x = ops6.parameter([2, 3], np.float32, name="x")
    var = _variable("acc", [2, 3])
    rv = ops6.read_value(x, var) if with_init else ops6.read_value(var)
    s = ops6.add(rv, x)
    m = ov.Model([ops6.result(s)], [ops6.assign(s, var)], [x], "acc")
    schedule = _schedule(np.random.default_rng(1), {"x": (2, 3)})
    got, want = check_stateful(m, schedule, tmp_path)
    # a plain Python oracle of the first calls: zeros or x, then the running sum
    xs = [schedule[0]["x"], schedule[1]["x"], schedule[2]["x"]]
    acc = xs[0] * (2 if with_init else 1)
    assert_close(want[0][0], acc, what="call 0")
    assert_close(want[1][0], acc + xs[1], what="call 1")


def test_opset3_read_value_assign(tmp_path):
    x = ops3.parameter([4], np.float32, name="x")
    rv = ops3.read_value(x, "v3")
    s = ops3.multiply(ops3.add(rv, x), ops3.constant(np.float32(0.5)))
    m = ov.Model([ops3.result(s)], [ops3.assign(s, "v3")], [x], "v3")
    check_stateful(m, _schedule(np.random.default_rng(2), {"x": (4,)}), tmp_path)


def test_read_sees_the_value_the_call_started_with(tmp_path):
    """Assign takes effect for the next call: a read consumed after the Assign (here by a
    second Result fed from the ReadValue) still sees the old value."""
    x = ops6.parameter([3], np.float32, name="x")
    var = _variable("s", [3])
    rv = ops6.read_value(x, var)
    s = ops6.add(rv, x)
    a = ops6.assign(s, var)
    old = ops6.multiply(rv, ops6.constant(np.float32(1)))
    m = ov.Model([ops6.result(s), ops6.result(old)], [a], [x], "order")
    schedule = _schedule(np.random.default_rng(3), {"x": (3,)})
    _, want = check_stateful(m, schedule, tmp_path)
    for k in (1, 2):  # the second output of call k is the first output of call k-1
        assert_close(want[k][1], want[k - 1][0], what=f"call {k}")


def test_two_variables_int_and_dynamic_shape(tmp_path):
    """An i32 counter (zeros init) and a float variable of dynamic shape whose init is the
    input: two variables in one model, each with its own element type. (The Assign reads a
    computed value: for one fed straight by a Parameter OpenVINO's CPU plugin disagrees with
    its specification, see `test_assign_of_a_parameter`.)"""
    x = ops6.parameter([-1, 2], np.float32, name="x")
    count = _variable("count", [1], ov.Type.i32)
    rc = ops6.read_value(count)
    nc = ops6.add(rc, ops6.constant(np.array([1], np.int32)))
    last = _variable("last", [-1, 2])
    rl = ops6.read_value(x, last)
    y = ops6.subtract(x, rl)
    m = ov.Model([ops6.result(nc), ops6.result(y)],
                 [ops6.assign(nc, count), ops6.assign(ops6.multiply(x, ops6.constant(
                     np.float32(2))), last)], [x], "two")
    rng = np.random.default_rng(4)
    schedule = [{"x": rng.standard_normal((3, 2)).astype(np.float32)} for _ in range(3)]
    schedule += [RESET, {"x": rng.standard_normal((3, 2)).astype(np.float32)}]
    got, want = check_stateful(m, schedule, tmp_path)
    assert [int(w[0][0]) for w in want] == [1, 2, 3, 1]


def test_assign_of_a_parameter(tmp_path):
    """``prev <- x`` with init x, the Assign fed straight by the Parameter: by the
    specification call k returns x_k - x_(k-1) (0 on the first call). itergraph does; OpenVINO's
    CPU plugin (2026.4) does not: it reads uninitialised memory on the first calls and a
    stale value after, so the test asserts that it differs from the specification."""
    x = ops6.parameter([3, 2], np.float32, name="x")
    var = _variable("prev", [3, 2])
    y = ops6.subtract(x, ops6.read_value(x, var))
    xml = save(ov.Model([ops6.result(y)], [ops6.assign(x, var)], [x], "prev"), tmp_path)
    rng = np.random.default_rng(8)
    xs = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(4)]
    spec = [xs[0] - xs[0]] + [xs[k] - xs[k - 1] for k in range(1, 4)]
    schedule = [{"x": a} for a in xs]
    m = ig.load(xml)
    for backend in ("numpy", "jax"):
        m.reset_state()
        got = ig_steps(m, schedule, backend)
        for k in range(4):
            assert_close(got[k][0], spec[k], what=f"{backend}, call {k}")
    m.reset_state()
    ig.save(m, tmp_path / "written.xml")
    for xml_path in (xml, tmp_path / "written.xml"):
        got = ov_steps(xml_path, schedule)
        assert not all(np.allclose(got[k][0], spec[k]) for k in range(4))


def test_dynamic_shape_without_init_starts_empty(tmp_path):
    """ReadValue-6 without init of a variable with an unknown dim: OpenVINO's CPU plugin
    reads an empty tensor (unknown dims 0); itergraph does the same."""
    x = ops6.parameter([2], np.float32, name="x")
    var = _variable("log", [-1, 2])
    rv = ops6.read_value(var)
    row = ops6.unsqueeze(x, ops6.constant(np.array([0], np.int64)))
    grown = ops6.concat([rv, row], 0)
    m = ov.Model([ops6.result(grown)], [ops6.assign(grown, var)], [x], "log")
    schedule = _schedule(np.random.default_rng(5), {"x": (2,)})
    _, want = check_stateful(m, schedule, tmp_path)
    assert [w[0].shape[0] for w in want] == [1, 2, 3, 1, 2]


# -- models LowLatency2 writes ------------------------------------------------------------------

def _lstm_ti(seq: int, w, batch=2, n_in=3, hs=4) -> ov.Model:
    X = ops8.parameter([batch, seq, n_in], np.float32, name="X")
    H0 = ops8.parameter([batch, hs], np.float32, name="H0")
    C0 = ops8.parameter([batch, hs], np.float32, name="C0")
    xi = ops8.parameter([batch, 1, n_in], np.float32, name="xi")
    hi = ops8.parameter([batch, hs], np.float32, name="hi")
    ci = ops8.parameter([batch, hs], np.float32, name="ci")
    x2 = ops8.squeeze(xi, ops8.constant(np.array([1], np.int64)))
    cell = ops8.lstm_cell(x2, hi, ci, ops8.constant(w[0]), ops8.constant(w[1]),
                          ops8.constant(w[2]), hs)
    rh, rc = ops8.result(cell.output(0)), ops8.result(cell.output(1))
    ry = ops8.result(ops8.unsqueeze(cell.output(0), ops8.constant(np.array([1], np.int64))))
    ti = ops8.tensor_iterator()
    ti.set_body(ov.Model([rh, rc, ry], [xi, hi, ci], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, H0.output(0), rh.output(0))
    ti.set_merged_input(ci, C0.output(0), rc.output(0))
    outs = [ti.get_iter_value(rh.output(0), -1), ti.get_concatenated_slices(
        ry.output(0), 0, 1, 1, -1, 1)]
    return ov.Model(outs, [X, H0, C0], "lstm_ti")


def _lstm_weights(rng, n_in=3, hs=4):
    return [rng.standard_normal(s).astype(np.float32) * 0.5
            for s in [(4 * hs, n_in), (4 * hs, hs), (4 * hs,)]]


@pytest.mark.parametrize("const_init", [True, False])
@pytest.mark.parametrize("seq", [1, 3])
def test_low_latency2_tensor_iterator(tmp_path, seq, const_init):
    """apply_low_latency_transformation on an LSTM TensorIterator: the step model's back
    edges are variables. Stepping it over chunks of a sequence equals the original loop over
    the whole sequence (OpenVINO on the untransformed model is the oracle)."""
    rng = np.random.default_rng(6)
    w = _lstm_weights(rng)
    step = _lstm_ti(seq, w)
    apply_low_latency_transformation(step, const_init)
    assert {op.get_type_name() for op in step.get_ops()} >= {"ReadValue", "Assign"}
    chunks = 3
    xs = rng.standard_normal((2, seq * chunks, 3)).astype(np.float32)
    h0, c0 = (rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2))
    schedule = [{"X": xs[:, k * seq:(k + 1) * seq], "H0": h0, "C0": c0} for k in range(chunks)]
    schedule += [RESET, schedule[0]]
    m, want = check_stateful(step, schedule, tmp_path, tol=1e-5)
    whole = save(_lstm_ti(seq * chunks, w), tmp_path, "whole")
    (full,) = ov_steps(whole, [{"X": xs, "H0": h0 if not const_init else 0 * h0,
                                "C0": c0 if not const_init else 0 * c0}])
    assert_close(want[chunks - 1][0], full[0], 1e-5, 1e-5, "last hidden state")
    seqs = np.concatenate([w_[1] for w_ in want[:chunks]], axis=1)
    assert_close(seqs, full[1], 1e-5, 1e-5, "hidden states of every step")
    assert_close(want[chunks][0], want[0][0], 1e-6, 1e-6, "after reset_state")


def test_low_latency2_loop(tmp_path):
    """ov.passes.LowLatency2 on a Loop-5 over an RNNCell: the initial state becomes a
    ReadValue whose init is the H0 input, the final state its Assign."""
    rng = np.random.default_rng(7)
    hs, n_in, b, T = 4, 3, 2, 3
    W, R, B = (rng.standard_normal(s).astype(np.float32)
               for s in [(hs, n_in), (hs, hs), (hs,)])
    X = ops8.parameter([b, T, n_in], np.float32, name="X")
    H0 = ops8.parameter([b, hs], np.float32, name="H0")
    xi = ops8.parameter([b, 1, n_in], np.float32, name="xi")
    hi = ops8.parameter([b, hs], np.float32, name="hi")
    x2 = ops8.squeeze(xi, ops8.constant(np.array([1], np.int64)))
    cell = ops8.rnn_cell(x2, hi, ops8.constant(W), ops8.constant(R), ops8.constant(B), hs,
                         ["tanh"], [], [])
    rh = ops8.result(cell.output(0))
    rcond = ops8.result(ops8.constant(np.array(True)))
    ry = ops8.result(ops8.unsqueeze(cell.output(0), ops8.constant(np.array([1], np.int64))))
    loop = ops8.loop(ops8.constant(np.array(T, np.int64)), ops8.constant(np.array(True)))
    loop.set_function(ov.Model([rcond, rh, ry], [xi, hi], "body"))
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    loop.set_merged_input(hi, H0.output(0), rh.output(0))
    m = ov.Model([loop.get_iter_value(rh.output(0), -1),
                  loop.get_concatenated_slices(ry.output(0), 0, 1, 1, -1, 1)], [X, H0], "loop")
    manager = Manager()
    manager.register_pass(LowLatency2(False))
    manager.run_passes(m)
    assert "ReadValue" in {op.get_type_name() for op in m.get_ops()}
    schedule = _schedule(rng, {"X": (b, T, n_in), "H0": (b, hs)})
    check_stateful(m, schedule, tmp_path)


# -- state access ------------------------------------------------------------------------------

def _acc_xml(tmp_path):
    x = ops6.parameter([2], np.float32, name="x")
    var = _variable("acc", [2])
    s = ops6.add(ops6.read_value(x, var), x)
    return save(ov.Model([ops6.result(s)], [ops6.assign(s, var)], [x], "acc"), tmp_path)


def test_query_and_set_state_like_openvino(tmp_path):
    xml = _acc_xml(tmp_path)
    c = CORE.compile_model(str(xml), "CPU", CONFIG)
    req = c.create_infer_request()
    m = ig.load(xml)
    x = np.array([1.5, -2.0], np.float32)
    assert m.query_state() == {}
    for _ in range(2):
        req.infer({"x": x})
        m.run({"x": x})
    (ov_state,) = req.query_state()
    assert_close(m.query_state()["acc"], ov_state.state.data, what="query_state")
    start = np.array([10.0, 20.0], np.float32)
    ov_state.state = ov.Tensor(start)
    m.set_state({"acc": start})
    want = req.infer({"x": x})[0]
    got = m.run({"x": x}, backend="jax")
    assert_close(list(got.values())[0], want, what="after set_state")
    m.reset_state("acc")
    assert m.query_state() == {}
    with pytest.raises(InputError, match="variable 'acc'.*shape"):
        m.set_state({"acc": np.zeros(3, np.float32)})
    with pytest.raises(InputError, match="no variable 'nope'"):
        m.reset_state("nope")


def test_failed_run_keeps_the_state(tmp_path):
    m = ig.load(_acc_xml(tmp_path))
    m.run({"x": np.ones(2, np.float32)})
    before = m.query_state()
    with pytest.raises(Error):
        m.run({"x": np.ones(3, np.float32)})
    assert_close(m.query_state()["acc"], before["acc"], what="state after a failed run")


# -- bad models --------------------------------------------------------------------------------

def _edited(tmp_path, pattern, repl, count=1):
    xml = _acc_xml(tmp_path)
    text = xml.read_text()
    new = re.sub(pattern, repl, text, count=count)
    assert new != text
    xml.write_text(new)
    return xml


def test_assign_without_read_value_names_the_layer(tmp_path):
    xml = _edited(tmp_path, r'(type="Assign" version="opset6">\s*<data variable_id=")acc',
                  r"\1other")
    with pytest.raises(ModelError, match=r"Assign.*'Assign_\d+'.*'other'.*no ReadValue"):
        ig.load(xml)


def test_mismatched_variable_type_names_the_layer(tmp_path):
    xml = _edited(tmp_path, r'variable_type="f32"', 'variable_type="i32"')
    with pytest.raises(ModelError, match=r"ReadValue.*init value is float32.*holds int32"):
        ig.load(xml)


def test_assign_of_other_type_names_the_layer(tmp_path):
    """The variable (and its init) is i32; the Assign is rewired by hand to the f32 input."""
    x = ops6.parameter([2], np.float32, name="x")
    var = _variable("acc", [2], ov.Type.i32)
    xi = ops6.convert(x, "i32")
    s = ops6.add(ops6.read_value(xi, var), xi)
    xml = save(ov.Model([ops6.result(s)], [ops6.assign(s, var)], [x], "acc"), tmp_path)
    text = xml.read_text()
    assign = re.search(r'<layer id="(\d+)" name="Assign_\d+"', text).group(1)
    text, n = re.subn(rf'from-layer="\d+" from-port="\d+" to-layer="{assign}"',
                      f'from-layer="0" from-port="0" to-layer="{assign}"', text)
    assert n == 1
    xml.write_text(text)
    with pytest.raises(ModelError, match=r"Assign.*assigned value is float32.*holds int32"):
        ig.load(xml)


def test_two_assigns_of_one_variable(tmp_path):
    x = ops6.parameter([2], np.float32, name="x")
    var = _variable("acc", [2])
    s = ops6.add(ops6.read_value(x, var), x)
    xml = save(ov.Model([ops6.result(s)], [ops6.assign(s, var)], [x], "acc"), tmp_path)
    text = xml.read_text()
    layer = re.search(r'\s*<layer id="(\d+)" name="Assign_\d+".*?</layer>', text, re.S)
    edge = re.search(rf'\s*<edge [^>]*to-layer="{layer.group(1)}"[^>]*/>', text)
    text = text.replace(layer.group(0), layer.group(0) + layer.group(0).replace(
        f'id="{layer.group(1)}"', 'id="99"', 1))
    text = text.replace(edge.group(0), edge.group(0) + edge.group(0).replace(
        f'to-layer="{layer.group(1)}"', 'to-layer="99"'))
    xml.write_text(text)
    with pytest.raises(ModelError, match="variable 'acc' already has a Assign"):
        ig.load(xml)


def test_read_value_in_a_loop_body_is_refused(tmp_path):
    X = ops8.parameter([2, 3], np.float32, name="X")
    xi = ops8.parameter([1, 3], np.float32, name="xi")
    var = _variable("inner", [1, 3])
    s = ops8.add(ops6.read_value(xi, var), xi)
    body = ov.Model([ops8.result(s)], [ops6.assign(s, var)], [xi], "body")
    ti = ops8.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    m = ov.Model([ti.get_concatenated_slices(body.outputs[0], 0, 1, 1, -1, 0)], [X], "ti")
    xml = save(m, tmp_path)
    with pytest.raises(UnsupportedError, match=r"ReadValue.*loop body"):
        ig.load(xml)


def test_assigned_value_of_wrong_shape_is_an_execution_error(tmp_path):
    """A variable of shape [2] assigned a value whose dim the IR leaves open: the run that
    assigns it fails naming the Assign, and stores nothing."""
    x = ops6.parameter([-1], np.float32, name="x")
    var = _variable("acc", [2])
    rv = ops6.read_value(var)
    m = ov.Model([ops6.result(rv)], [ops6.assign(x, var)], [x], "bad")
    model = ig.load(save(m, tmp_path))
    with pytest.raises(ExecutionError, match=r"Assign.*variable 'acc' has shape \(3,\)"):
        model.run({"x": np.ones(3, np.float32)})
    assert model.query_state() == {}
    model.run({"x": np.ones(2, np.float32)})
    assert_close(model.query_state()["acc"], np.ones(2, np.float32))


def test_state_io_transform_makes_a_stateless_model_openvino_runs(tmp_path):
    """``optimize(..., ["state-io"])`` writes the variables as inputs and outputs: OpenVINO
    runs the stateless IR, the test carrying the state, with the stateful model's outputs."""
    xml = _acc_xml(tmp_path)
    m = ig.load(xml)
    assert "variables (kept between runs):\n    acc: tensor(float32)[2], init 'x'" in m.info()
    assert "everything compiles with XLA" in m.explain("jax")
    pure = ig.optimize(m, ["state-io"])
    assert {v.name for v in pure.inputs} == {"x", "acc", "acc/is_set"}
    ig.save(pure, tmp_path / "pure.xml")
    rng = np.random.default_rng(9)
    schedule = _schedule(rng, {"x": (2,)})
    want = ov_steps(xml, schedule)
    c = CORE.compile_model(str(tmp_path / "pure.xml"), "CPU", CONFIG)
    state, k = None, 0
    for step in schedule:
        if step is RESET:
            state = None
            continue
        res = c({**step, "acc": state if state is not None else np.zeros(2, np.float32),
                 "acc/is_set": np.array(state is not None)})
        outs = [np.array(res[o]) for o in c.outputs]
        assert_close(outs[0], want[k][0], what=f"call {k}")
        state, k = outs[1], k + 1
