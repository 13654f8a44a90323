"""Loops in the form real converters write them, ONNX -> ``ig.save(model, "x.xml")`` -> OpenVINO.

Each model is built with onnx.helper the way the converter writes it; the written IR is run by
OpenVINO's CPU plugin (f32) and compared with ONNX Runtime and with itergraph itself. Each test
pins one of the OpenVINO 2026.4 problems the writer works around (`ops/loops/write.py` docstring).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import openvino.opset13 as ops
import pytest
from onnx import helper as h
from ov_helpers import assert_close, run_ov

import itergraph as ig
from onnx_builders import I64, B, F, const, model, vi


def check(m, feeds, tmp_path):
    """ONNX Runtime, itergraph and OpenVINO on ``ig.save``'s IR agree."""
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    loaded = ig.load(str(path))
    mine = list(loaded.run(feeds).values())
    xml = tmp_path / "x.xml"
    ig.save(loaded, str(xml))
    got = run_ov(xml, feeds)
    assert len(mine) == len(got) == len(want)
    for i, (a, b, c) in enumerate(zip(mine, got, want)):
        assert_close(a, c, what=f"itergraph output {i}")
        assert_close(b, c, what=f"OpenVINO on the written IR, output {i}")
    return want


@pytest.mark.parametrize("trip_input", [True, False])
@pytest.mark.parametrize("true_node", [True, False])
def test_torchscript_for_range_loop(tmp_path, trip_input, true_node):
    """``for i in range(n): x = x * 0.5 + 1`` as torch.onnx writes it at opset 11: the body's
    condition is ``Identity`` of the outer ``true`` (a ``Constant`` node or an initializer) and
    the iteration number is never read. OpenVINO failed to compile the IR
    (``vector::_M_range_check``) when that ``true`` came in as a body Parameter."""
    body = h.make_graph(
        [h.make_node("Constant", [], ["half"], value=const("v", np.float32(0.5))),
         h.make_node("Constant", [], ["one"], value=const("v", np.float32(1.0))),
         h.make_node("Mul", ["x_in", "half"], ["m"]),
         h.make_node("Add", ["m", "one"], ["x_out"]),
         h.make_node("Identity", ["outer_true"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", B, []), vi("x_in")],
        [vi("cond_out", B, []), vi("x_out")])
    nodes, inits, inputs = [], [], [vi("x", F, [2, 3])]
    if true_node:
        nodes.append(h.make_node("Constant", [], ["outer_true"], value=const("v", np.array(True))))
    else:
        inits.append(const("outer_true", np.array(True)))
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    if trip_input:
        inputs.append(vi("M", I64, []))
        feeds["M"] = np.array(5, np.int64)
    else:
        inits.append(const("M", np.array(5, np.int64)))
    nodes.append(h.make_node("Loop", ["M", "outer_true", "x"], ["y"], body=body))
    want = check(model(nodes, inputs, [vi("y", F, [2, 3])], inits, opset=11), feeds, tmp_path)
    x = feeds["x"]
    for _ in range(5):
        x = x * 0.5 + 1
    assert_close(want[0], x)


@pytest.mark.parametrize("reads_iteration", [True, False])
def test_torchscript_opset7_cast_condition(tmp_path, reads_iteration):
    """torch.onnx at opset 7 has no bool ``Constant``: the loop's ``true`` is the ``Cast`` of a
    float ``Constant``, and the body returns ``Identity`` of it as its condition. OpenVINO
    folds the ``Cast`` into a constant and then failed to compile the IR
    (``vector::_M_range_check``) when the body read its iteration number."""
    nodes = [h.make_node("Constant", [], ["half"], value=const("v", np.float32(0.5))),
             h.make_node("Mul", ["x_in", "half"], ["m"])]
    if reads_iteration:
        nodes += [h.make_node("Cast", ["i"], ["i_f"], to=F),
                  h.make_node("Add", ["m", "i_f"], ["x_out"])]
    else:
        nodes.append(h.make_node("Identity", ["m"], ["x_out"]))
    nodes.append(h.make_node("Identity", ["outer_true"], ["cond_out"]))
    body = h.make_graph(nodes, "body", [vi("i", I64, []), vi("cond", B, []), vi("x_in")],
                        [vi("cond_out", B, []), vi("x_out")])
    outer = [h.make_node("Constant", [], ["one"], value=const("v", np.float32(1.0))),
             h.make_node("Cast", ["one"], ["outer_true"], to=B),
             h.make_node("Loop", ["M", "outer_true", "x"], ["y"], body=body)]
    m = model(outer, [vi("x", F, [2, 3]), vi("M", I64, [])], [vi("y", F, [2, 3])], opset=7)
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "M": np.array(4, np.int64)}
    want = check(m, feeds, tmp_path)
    x = feeds["x"]
    for i in range(4):
        x = x * 0.5 + (i if reads_iteration else 0)
    assert_close(want[0], x)


@pytest.mark.parametrize("in_dir", [0, 1])
def test_scan_reversed_output(tmp_path, in_dir):
    """A Scan with a forward (or reversed) sliced input and a reversed output is written as a
    TensorIterator; a reversed concatenated output made OpenVINO also walk the sliced input
    backwards, so the writer concatenates forward and reverses after the loop."""
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         h.make_node("Mul", ["s_out", "x_t"], ["y_t"])],
        "body", [vi("s_in", F, [3]), vi("x_t", F, [3])], [vi("s_out", F, [3]), vi("y_t", F, [3])])
    scan = h.make_node("Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                       scan_input_directions=[in_dir], scan_output_directions=[1])
    m = model([scan], [vi("s0", F, [3]), vi("x", F, [4, 3])],
              [vi("s", F, [3]), vi("y", F, [4, 3])], opset=11)
    rng = np.random.default_rng(3)
    feeds = {"s0": rng.standard_normal(3).astype(np.float32),
             "x": rng.standard_normal((4, 3)).astype(np.float32)}
    check(m, feeds, tmp_path)


def test_scan_gru_body_reversed_output(tmp_path):
    """A Scan whose body is one GRU step, with a reversed output (ONNX Runtime the oracle)."""
    n, i, hid, s = 2, 3, 4, 5
    rng = np.random.default_rng(0)
    body = h.make_graph(
        [h.make_node("Unsqueeze", ["x_t"], ["x3"], axes=[0]),
         h.make_node("Unsqueeze", ["h_in"], ["h3"], axes=[0]),
         h.make_node("GRU", ["x3", "W", "R", "", "", "h3"], ["", "h_o"], hidden_size=hid),
         h.make_node("Squeeze", ["h_o"], ["h_out"], axes=[0]),
         h.make_node("Identity", ["h_out"], ["y_t"])],
        "body", [vi("h_in", F, [n, hid]), vi("x_t", F, [n, i])],
        [vi("h_out", F, [n, hid]), vi("y_t", F, [n, hid])])
    scan = h.make_node("Scan", ["h0", "x"], ["h", "y"], body=body, num_scan_inputs=1,
                       scan_output_directions=[1])
    inits = [const("W", rng.standard_normal((1, 3 * hid, i)).astype(np.float32)),
             const("R", rng.standard_normal((1, 3 * hid, hid)).astype(np.float32))]
    m = model([scan], [vi("h0", F, [n, hid]), vi("x", F, [s, n, i])],
              [vi("h", F, [n, hid]), vi("y", F, [s, n, hid])], inits, opset=11)
    feeds = {"h0": rng.standard_normal((n, hid)).astype(np.float32),
             "x": rng.standard_normal((s, n, i)).astype(np.float32)}
    check(m, feeds, tmp_path)


def _gru_cell_ti(reverse_out: bool) -> ov.Model:
    """A TensorIterator over a GRUCell as OpenVINO's converters write it: batch-first input
    sliced forward on axis 1, the states concatenated on axis 1 (reversed or not)."""
    n, i, hid, s = 2, 3, 4, 5
    rng = np.random.default_rng(1)
    x = ops.parameter([n, s, i], np.float32, name="x")
    h0 = ops.parameter([n, hid], np.float32, name="h0")
    xi = ops.parameter([n, 1, i], np.float32)
    hi = ops.parameter([n, hid], np.float32)
    cell = ops.gru_cell(ops.squeeze(xi, ops.constant(np.array([1]))), hi,
                        ops.constant(rng.standard_normal((3 * hid, i)).astype(np.float32)),
                        ops.constant(rng.standard_normal((3 * hid, hid)).astype(np.float32)),
                        ops.constant(rng.standard_normal(3 * hid).astype(np.float32)), hid)
    last = ops.result(cell)
    piece = ops.result(ops.unsqueeze(cell, ops.constant(np.array([1]))))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([last, piece], [xi, hi]))
    ti.set_sliced_input(xi, x.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, h0.output(0), last.output(0))
    state = ti.get_iter_value(last.output(0), -1)
    seq = (ti.get_concatenated_slices(piece.output(0), -1, -1, 1, 0, 1) if reverse_out
           else ti.get_concatenated_slices(piece.output(0), 0, 1, 1, -1, 1))
    return ov.Model([state, seq], [x, h0])


def test_tensor_iterator_gru_cell_reversed_output(tmp_path):
    """OpenVINO's own TensorIterator with a GRUCell body and a reversed output: the CPU plugin
    walks the input backwards too, so the oracle is the same loop with a forward output (which
    it runs right), flipped; itergraph and OpenVINO on the written IR must match it."""
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((2, 5, 3)).astype(np.float32),
             "h0": rng.standard_normal((2, 4)).astype(np.float32)}
    state, seq = run_ov(_gru_cell_ti(False), feeds)
    want = [state, seq[:, ::-1]]
    xml = tmp_path / "ti.xml"
    ov.save_model(_gru_cell_ti(True), str(xml), compress_to_fp16=False)
    loaded = ig.load(str(xml))
    written = tmp_path / "x.xml"
    ig.save(loaded, str(written))
    mine = list(loaded.run(feeds).values())
    got = run_ov(written, feeds)
    for k in range(2):
        assert_close(mine[k], want[k], what=f"itergraph output {k}")
        assert_close(got[k], want[k], what=f"OpenVINO on the written IR, output {k}")


@pytest.mark.parametrize("form", ["identity", "direct"])
@pytest.mark.parametrize("elem", [F, I64, B])
def test_loop_carried_values_swap(tmp_path, form, elem):
    """``a, b = a + b, a`` (Fibonacci; Xor for booleans): b's back edge is fed straight by a's
    Parameter, which OpenVINO's CPU plugin updated after a's (6 steps from a=1, b=0 gave 32,
    not 13)."""
    nodes = [h.make_node("Xor" if elem == B else "Add", ["a_in", "b_in"], ["a_out"])]
    b_out = "a_in"
    if form == "identity":
        nodes.append(h.make_node("Identity", ["a_in"], ["b_out"]))
        b_out = "b_out"
    nodes.append(h.make_node("Identity", ["cond"], ["cond_out"]))
    body = h.make_graph(nodes, "body",
                        [vi("i", I64, []), vi("cond", B, []), vi("a_in", elem, [1]),
                         vi("b_in", elem, [1])],
                        [vi("cond_out", B, []), vi("a_out", elem, [1]), vi(b_out, elem, [1])])
    loop = h.make_node("Loop", ["M", "", "a0", "b0"], ["a", "b"], body=body)
    m = model([loop], [vi("M", I64, []), vi("a0", elem, [1]), vi("b0", elem, [1])],
              [vi("a", elem, [1]), vi("b", elem, [1])], opset=11)
    dt = onnx.helper.tensor_dtype_to_np_dtype(elem)
    feeds = {"M": np.array(6, np.int64), "a0": np.array([1], dt), "b0": np.array([0], dt)}
    want = check(m, feeds, tmp_path)
    if elem != B:
        assert_close(want[0], np.array([13], dt))


def test_torchscript_opset8_beam_search(tmp_path):
    """torch.onnx's beam search at opset 8 (corpus file): it writes ``ConstantOfShape`` and
    ``Where``, ops ONNX adds at opset 9, which the writer once refused under opset 8. OpenVINO
    on the written IR matches torch's own outputs stored with the file."""
    models = Path(__file__).resolve().parents[1] / "realworld" / "models" / "torch"
    with np.load(models / "beam_search_op8.npz") as z:
        feeds = {"h0": z["in0"], "steps": z["in1"]}
        want = [z["out0"], z["out1"]]
    loaded = ig.load(str(models / "beam_search_op8.onnx"))
    assert {"ConstantOfShape", "Where"} <= {n.op_type for _, n in loaded.graph.walk()}
    xml = tmp_path / "x.xml"
    ig.save(loaded, str(xml))
    got = run_ov(xml, feeds)
    for k in range(2):
        assert_close(got[k], want[k], rtol=1e-4, what=f"OpenVINO on the written IR, output {k}")
