"""The ``fuse-cells`` transform: recurrent-cell loops written as the standard operators.

Every spelling of a cell (`cell_spellings`, the bench's exporter-style forms, the real-world
corpus) goes through ``optimize(model, ["fuse-cells"])`` and ``ig.save``: the ONNX file holds
``LSTM``/``GRU``/``RNN`` and no loop, the OpenVINO IR ``LSTMSequence``/``GRUSequence``/
``RNNSequence`` and no TensorIterator, and ONNX Runtime, OpenVINO and the NumPy backend give
the original's outputs (ONNX Runtime on the original file, or the framework's recorded ones).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import helper as h

import itergraph as ig
from cell_spellings import build
from itergraph import cli
from itergraph.transforms import TRANSFORMS, optimize
from onnx_builders import run_ort
from passutil import load, run

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "realworld"))

import recurrent_models as rm  # noqa: E402
from corpus import entries  # noqa: E402

OPS = {"lstm": "LSTM", "gru": "GRU", "rnn": "RNN"}
LOOPS = {"Loop", "Scan"}
OV_LOOPS = {"TensorIterator", "Loop"}
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}

SPELLINGS = {
    "lstm_matmul_split": dict(cell="lstm"),
    "lstm_gemm_torch_order": dict(cell="lstm", product="gemm", order="ifco"),
    "lstm_gemm_alpha_slice": dict(cell="lstm", product="gemm_alpha", gates="slice",
                                  order="fico", bias=1),
    "lstm_concat_xh_split18": dict(cell="lstm", product="concat", gates="split18"),
    "lstm_per_gate_no_bias": dict(cell="lstm", product="per_gate", bias=0),
    "lstm_clip": dict(cell="lstm", clip=0.7),
    "lstm_loop_gather": dict(cell="lstm", loop="loop_gather", gates="slice"),
    "lstm_torch_list_append": dict(cell="lstm", product="gemm", order="ifco", loop="loop_list"),
    "lstm_reverse_input": dict(cell="lstm", loop="scan_reverse", order="oicf"),
    "lstm_reverse_output": dict(cell="lstm", loop="scan_out_reverse"),
    "lstm_batch_first": dict(cell="lstm", loop="scan_axis1", product="gemm"),
    "gru_lbr_std": dict(cell="gru"),
    "gru_lbr_torch_gemm": dict(cell="gru", product="gemm", order="rzh", update="torch"),
    "gru_plain_u_form": dict(cell="gru", lbr=0, update="u", gates="slice"),
    "gru_plain_clip_bias1": dict(cell="gru", lbr=0, clip=1.5, bias=1, order="hzr"),
    "gru_per_gate_gather": dict(cell="gru", product="per_gate", loop="loop_gather"),
    "rnn_matmul": dict(cell="rnn"),
    "rnn_concat_clip": dict(cell="rnn", product="concat", clip=0.5),
    "rnn_gemm_alpha_reverse": dict(cell="rnn", product="gemm_alpha", loop="scan_reverse"),
}
#: cells the ONNX operator computes but OpenVINO's sequence operators do not: left as loops
NOT_PORTABLE = {
    "lstm_peephole": dict(cell="lstm", peephole=True),
    "lstm_coupled_forget": dict(cell="lstm", couple=True),
    "lstm_hardsigmoid_gates": dict(cell="lstm", f_act="HardSigmoid"),
}


def _close(got: dict, want: dict, rtol=1e-4, atol=1e-5) -> None:
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)


def _onnx_ops(m: onnx.ModelProto) -> list[str]:
    out = []
    for n in m.graph.node:
        out.append(n.op_type)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out += _onnx_ops(onnx.helper.make_model(a.g))
    return out


def _run_ov(path: Path, feeds: dict) -> dict:
    compiled = ov.Core().compile_model(str(path), "CPU", OV_CONFIG)
    res = compiled({k: np.require(v, requirements="C") for k, v in feeds.items()})
    return {o.get_any_name(): res[o] for o in compiled.outputs}


def _fuse_and_write(src, tmp_path: Path, kind: str, n_ops: int = 1):
    """optimize + save both ways; checks what each file holds; (model, onnx, xml path)."""
    model = optimize(ig.load(src), ["fuse-cells"])
    onnx_path, xml_path = tmp_path / "fused.onnx", tmp_path / "fused.xml"
    ig.save(model, onnx_path)
    written = onnx.load(str(onnx_path))
    onnx.checker.check_model(written, full_check=True)
    ops = _onnx_ops(written)
    assert ops.count(kind) == n_ops and not LOOPS & set(ops), ops
    ig.save(model, xml_path)
    layers = [layer.get("type") for layer in ET.parse(xml_path).getroot().iter("layer")]
    assert layers.count(f"{kind}Sequence") == n_ops and not OV_LOOPS & set(layers), layers
    return model, written, xml_path


def _all_agree(model, written, xml_path, feeds: dict, want: dict, **tol) -> None:
    _close(run_ort(written, feeds), want, **tol)
    _close(_run_ov(xml_path, feeds), want, **tol)
    _close(model.run(feeds), want, **tol)


def test_fuse_cells_is_registered_with_its_contract():
    t = TRANSFORMS["fuse-cells"]
    assert "Applies to:" in t.contract() and "OpenVINO" in t.contract()


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_spelling_becomes_the_operator(name, tmp_path):
    m, feeds = build(**SPELLINGS[name])
    kind = OPS[SPELLINGS[name]["cell"]]
    model, written, xml_path = _fuse_and_write(m, tmp_path, kind)
    _all_agree(model, written, xml_path, feeds, run_ort(m, feeds))


@pytest.mark.parametrize("name", list(NOT_PORTABLE))
def test_cell_openvino_cannot_express_stays_a_loop(name, tmp_path):
    m, feeds = build(**NOT_PORTABLE[name])
    model = optimize(ig.load(m), ["fuse-cells"])
    assert [n.op_type for n in model.graph.nodes].count("Loop") == 1
    _close(model.run(feeds), run_ort(m, feeds))


@pytest.mark.parametrize("name", ["lstm_gemm_torch_order", "gru_plain_u_form",
                                  "rnn_gemm_alpha_reverse"])
def test_fused_model_runs_on_jax(name):
    m, feeds = build(**SPELLINGS[name])
    model = optimize(ig.load(m), ["fuse-cells"])
    _close(model.run(feeds, backend="jax"), run_ort(m, feeds))


def test_cli_writes_the_operator(tmp_path):
    m, feeds = build(cell="gru", product="gemm", order="rzh", update="torch")
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(m, str(src))
    assert cli.main(["optimize", str(src), str(out), "--passes", "fuse-cells"]) == 0
    written = onnx.load(str(out))
    assert [n.op_type for n in written.graph.node].count("GRU") == 1
    _close(run_ort(written, feeds), run_ort(m, feeds))


def test_kinds_argument_fuses_those_kinds_only():
    m, _ = _bidirectional("rnn", "sum")
    kept = optimize(ig.load(m), ["fuse-cells=lstm+gru"])
    assert [n.op_type for n in kept.graph.nodes].count("Loop") == 2
    fused = optimize(ig.load(m), ["fuse-cells=rnn"])
    assert [n.op_type for n in fused.graph.nodes].count("RNN") == 1
    with pytest.raises(ig.errors.InputError, match="unknown cell kind"):
        optimize(ig.load(m), ["fuse-cells=lstm+cnn"])


def _as_double(m: onnx.ModelProto) -> onnx.ModelProto:
    """`m` with every float tensor (initializers, declared types, bodies) in double."""
    m = onnx.ModelProto.FromString(m.SerializeToString())

    def convert(g):
        for init in g.initializer:
            if init.data_type == onnx.TensorProto.FLOAT:
                init.CopyFrom(onnx.numpy_helper.from_array(
                    onnx.numpy_helper.to_array(init).astype(np.float64), init.name))
        for vi in [*g.input, *g.output, *g.value_info]:
            if vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
                vi.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    convert(a.g)

    convert(m.graph)
    return m


def test_double_cells_stay_loops():
    """ONNX Runtime's LSTM kernel refuses double; the loop runs there."""
    m, feeds = build(cell="lstm", loop="loop_gather")
    m = _as_double(m)
    feeds = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()}
    model = optimize(ig.load(m), ["fuse-cells"])
    assert [n.op_type for n in model.graph.nodes].count("Loop") == 1
    _close(model.run(feeds), run_ort(m, feeds))


@pytest.mark.parametrize("entry_id", ["tf/keras_masking_lstm_op18", "tf-ov/scan_rnn_cell",
                                      "tf-ov/keras_masking_bidi_lstm"])
def test_loops_that_are_no_single_cell_are_left_as_they_were(entry_id):
    """Masked cells (no operator has a mask) and tf.scan's outputs written by ScatterND into
    a carried buffer: the copies tried on the way leave no trace."""
    from itergraph.passes.cells.ops import fuse_cell_ops

    e = next(x for x in entries() if x.id == entry_id)
    g = ig.load(e.file).graph
    nodes, inits = list(g.nodes), list(g.initializers)
    assert fuse_cell_ops(g) == 0
    assert g.nodes == nodes and g.initializers == inits
    assert all(v.producer is n for n in g.nodes for v in n.outputs)


def test_cell_loop_inside_another_loop(tmp_path):
    """A GRU Scan in the body of an outer Loop (reading X and H0 from outside) is fused
    there; the outer loop stays and stacks the inner results."""
    m, feeds = build(cell="gru")
    inner = m.graph
    body = h.make_graph(
        [*inner.node, h.make_node("Identity", ["cond"], ["cond_out"])], "outer_body",
        [h.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
         h.make_tensor_value_info("cond", onnx.TensorProto.BOOL, [])],
        [h.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
         *[o for o in inner.output]], list(inner.initializer))
    outer = h.make_node("Loop", ["n", ""], [f"all_{o.name}" for o in inner.output], body=body)
    g = h.make_graph([outer], "nested",
                     [*inner.input, h.make_tensor_value_info("n", onnx.TensorProto.INT64, [])],
                     [h.make_tensor_value_info(f"all_{o.name}", onnx.TensorProto.FLOAT, None)
                      for o in inner.output])
    nested = h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)
    feeds = {**feeds, "n": np.array(2, np.int64)}
    want = run_ort(nested, feeds)
    model = optimize(ig.load(nested), ["fuse-cells"])
    onnx_path, xml_path = tmp_path / "fused.onnx", tmp_path / "fused.xml"
    ig.save(model, onnx_path)
    ig.save(model, xml_path)
    written = onnx.load(str(onnx_path))
    ops = _onnx_ops(written)
    assert ops.count("GRU") == 1 and "Scan" not in ops and ops.count("Loop") == 1
    layers = [layer.get("type") for layer in ET.parse(xml_path).getroot().iter("layer")]
    assert "GRUSequence" in layers and "TensorIterator" not in layers
    _all_agree(model, written, xml_path, feeds, want)


def test_fewer_steps_than_the_input_holds(tmp_path):
    """A Loop over Gather(X, i) with a trip count below X's length: the operator gets the
    first M steps."""
    m, feeds = build(cell="gru", loop="loop_gather", T=5)
    model, written, xml_path = _fuse_and_write(m, tmp_path, "GRU")
    for M in (5, 3, 1):
        few = {**feeds, "M": np.array(M, np.int64)}
        _all_agree(model, written, xml_path, few, run_ort(m, few))


def test_initial_state_broadcast_over_the_batch(tmp_path):
    """[1, H] initial states with a batch of 3 (the loop broadcasts them in its first step;
    ONNX Runtime's Scan refuses it, so the oracle is itergraph's reference loop)."""
    m, feeds = build(cell="lstm", loop="loop_gather", B=3)
    feeds["H0"], feeds["C0"] = feeds["H0"][:1], feeds["C0"][:1]
    model, written, xml_path = _fuse_and_write(m, tmp_path, "LSTM")
    _all_agree(model, written, xml_path, feeds, run(load(m), feeds))


# ----------------------------------------------------------------------------- bidirectional


def _prefixed(m: onnx.ModelProto, prefix: str) -> onnx.ModelProto:
    """`m` with its top-level names (and the bodies' reads of them) prefixed."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    g = m.graph
    outer = {v.name for v in [*g.input, *g.output, *g.initializer]}
    outer |= {o for n in g.node for o in n.output}

    def rename(nodes):
        for n in nodes:
            n.input[:] = [prefix + x if x in outer else x for x in n.input]
            n.output[:] = [prefix + x if x in outer else x for x in n.output]
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    rename(a.g.node)

    rename(g.node)
    for v in [*g.input, *g.output, *g.initializer]:
        v.name = prefix + v.name
    return m


def _bidirectional(cell: str, joined: str) -> tuple[onnx.ModelProto, dict]:
    """A forward Scan and a reverse Scan (other weights) over one X, their Y concatenated
    on the feature axis (Keras' Bidirectional) or summed, final states as outputs."""
    fw, feeds = build(cell=cell, seed=1)
    bw, bfeeds = build(cell=cell, loop="scan_reverse", seed=2)
    fw, bw = _prefixed(fw, "f_"), _prefixed(bw, "b_")
    nodes = [h.make_node("Identity", ["X"], ["f_X"]), h.make_node("Identity", ["X"], ["b_X"])]
    nodes += list(fw.graph.node) + list(bw.graph.node)
    if joined == "concat":
        nodes.append(h.make_node("Concat", ["f_Y", "b_Y"], ["Y"], axis=-1))
    else:
        nodes.append(h.make_node("Add", ["f_Y", "b_Y"], ["Y"]))
    inputs = [i for i in fw.graph.input if i.name != "f_X"]
    inputs += [i for i in bw.graph.input if i.name != "b_X"]
    x_in = onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, ["T", "B", 3])
    outputs = [o for o in list(fw.graph.output) + list(bw.graph.output)
               if not o.name.endswith("_Y")]
    width = 10 if joined == "concat" else 5
    outputs.append(onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT,
                                                      ["T", "B", width]))
    g = h.make_graph(nodes, "bidi", [x_in, *inputs], outputs,
                     list(fw.graph.initializer) + list(bw.graph.initializer))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    all_feeds = {"X": feeds["X"]}
    all_feeds.update({f"f_{k}": v for k, v in feeds.items() if k != "X"})
    all_feeds.update({f"b_{k}": v for k, v in bfeeds.items() if k != "X"})
    return m, all_feeds


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("joined", ["concat", "sum"])
def test_forward_and_reverse_loops_become_one_bidirectional_operator(cell, joined, tmp_path):
    m, feeds = _bidirectional(cell, joined)
    model, written, xml_path = _fuse_and_write(m, tmp_path, OPS[cell])
    op = next(n for n in written.graph.node if n.op_type == OPS[cell])
    assert h.get_attribute_value(next(a for a in op.attribute if a.name == "direction")) == \
        b"bidirectional"
    _all_agree(model, written, xml_path, feeds, run_ort(m, feeds))
    _close(model.run(feeds, backend="jax"), run_ort(m, feeds))


# ----------------------------------------------------------------------------- bench forms


@pytest.mark.parametrize("cell", rm.CELLS)
@pytest.mark.parametrize("form", ["scan_matmul", "scan_gemm", "loop_gather", "ti_cell",
                                  "ti_decomposed"])
def test_exporter_form_becomes_the_operator(cell, form, tmp_path):
    spec = rm.Spec(cell, batch=2, seq=5, inp=4, hidden=3)
    feeds = rm.form_feeds(form, spec.feeds())
    oracle = rm.oracle(spec, spec.feeds())  # ONNX layout: Y [T, B, H]
    if form in rm.OV_FORMS:
        src = tmp_path / "src.xml"
        names = rm.openvino_model(spec, form, str(src))
        want = dict(zip(names, [oracle[0].transpose(1, 0, 2), *oracle[1:]]))
        _close(_run_ov(src, feeds), want)
    else:
        src = rm.onnx_model(spec, form)
        want = run_ort(src, feeds)
        _close(dict(zip(want, oracle)), want)
    model, written, xml_path = _fuse_and_write(src, tmp_path, OPS[cell])
    _all_agree(model, written, xml_path, feeds, want)


def _ov_loop(spec, path: Path) -> list[str]:
    """An OpenVINO Loop (opset5) with a constant trip count whose body Gathers step
    ``current_iteration`` of the batch-first X and runs the cell op on it."""
    import openvino.opset13 as ops

    w, r, wb, rb = spec.weights()
    B, T, n_in, H = spec.batch, spec.seq, spec.inp, spec.hidden
    o = rm.OV_ORDER[spec.cell]
    wo, ro = rm.order(w, spec.cell, o), rm.order(r, spec.cell, o)
    if spec.cell == "gru":
        bo = np.concatenate([(wb + rb)[:2 * H], wb[2 * H:], rb[2 * H:]])
    else:
        bo = rm.order(wb + rb, spec.cell, o)
    x = ops.parameter([B, T, n_in], np.float32, name="X")
    init = [ops.parameter([B, H], np.float32, name=s) for s in spec.states]
    it = ops.parameter([1], np.int64, name="it")
    px = ops.parameter([B, T, n_in], np.float32, name="x_all")
    pst = [ops.parameter([B, H], np.float32, name=f"{s}_in") for s in spec.states]
    xt = ops.squeeze(ops.gather(px, it, ops.constant(np.int64(1))),
                     ops.constant(np.array([1], np.int64)))
    args = (ops.constant(wo), ops.constant(ro), ops.constant(bo))
    if spec.cell == "lstm":
        cell = ops.lstm_cell(xt, pst[0], pst[1], *args, hidden_size=H)
        new = [cell.output(0), cell.output(1)]
    elif spec.cell == "gru":
        new = [ops.gru_cell(xt, pst[0], *args, hidden_size=H,
                            linear_before_reset=True).output(0)]
    else:
        new = [ops.rnn_cell(xt, pst[0], *args, hidden_size=H, activations=["tanh"],
                            activations_alpha=[], activations_beta=[]).output(0)]
    results = [ops.result(v) for v in new]
    y_res = ops.result(ops.unsqueeze(new[0], ops.constant(np.array([1], np.int64))))
    cond = ops.result(ops.constant(np.array(True)))
    body = ov.Model([cond, *results, y_res], [it, px, *pst], "body")
    loop = ops.loop(ops.constant(np.int64(T)), ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    loop.set_invariant_input(px, x.output(0))
    finals = []
    for p, v0, res in zip(pst, init, results):
        loop.set_merged_input(p, v0.output(0), res.output(0))
        finals.append(loop.get_iter_value(res.output(0), -1))
    y = loop.get_concatenated_slices(y_res.output(0), 0, 1, 1, -1, 1)
    outs = []
    for name, port in zip(["Y", *spec.finals], [y, *finals]):
        res = ops.result(port)
        res.get_output_tensor(0).set_names({name})
        outs.append(res)
    ov.save_model(ov.Model(outs, [x, *init], "loop"), str(path), compress_to_fp16=False)
    return ["Y", *spec.finals]


@pytest.mark.parametrize("cell", rm.CELLS)
def test_openvino_loop_over_the_current_iteration_becomes_the_operator(cell, tmp_path):
    spec = rm.Spec(cell, batch=2, seq=5, inp=4, hidden=3)
    src = tmp_path / "src.xml"
    names = _ov_loop(spec, src)
    feeds = rm.form_feeds("ti_cell", spec.feeds())
    oracle = rm.oracle(spec, spec.feeds())
    want = dict(zip(names, [oracle[0].transpose(1, 0, 2), *oracle[1:]]))
    _close(_run_ov(src, feeds), want)
    model, written, xml_path = _fuse_and_write(src, tmp_path, OPS[cell])
    _all_agree(model, written, xml_path, feeds, want)


# ----------------------------------------------------------------------------- corpus


#: corpus entries whose loops are cells, with the operators fuse-cells makes of them ("2":
#: one bidirectional operator made of a forward and a backward loop)
CORPUS = {
    "tf-ov/keras_lstm_seq": "LSTM",
    "tf-ov/keras_lstm_seq_kerasobj": "LSTM",
    "tf-ov/keras_lstm_state": "LSTM",
    "tf-ov/keras_gru_seq": "GRU",
    "tf-ov/keras_gru_v1_state": "GRU",
    "tf-ov/keras_simplernn_seq": "RNN",
    "tf-ov/keras_simplernn_state_backwards": "RNN",
    "tf-ov/keras_lstm_backwards": "LSTM",
    "tf-ov/keras_gru_backwards": "GRU",
    "tf-ov/keras_bidi_lstm_concat": "LSTM2",
    "tf-ov/keras_bidi_gru_sum": "GRU2",
    "tf-ov/keras_bidi_simplernn_state": "RNN2",
    "tf-ov/keras_stacked_lstm_gru": "LSTM GRU",
    "tf-ov/keras_stacked_lstm3": "LSTM LSTM LSTM",
    # Keras RNN([LSTMCell, GRUCell]): two cells in one loop, an operator each (cells.fission)
    "tf-ov/keras_rnn_stacked_cells": "LSTM GRU",
    "tf/keras_rnn_stacked_cells_op7": "LSTM GRU",
    "tf/keras_rnn_stacked_cells_op18": "LSTM GRU",
    # tf.scan: a condition of two counters with a trip count (cells.counter)
    "tf/scan_rnn_cell_op13": "RNN",
    "tf-ov/keras_lstm_initial_state": "LSTM",
    "tf-ov/keras_gru_initial_state": "GRU",
    "tf-ov/keras_rnn_simplecell": "RNN",
    "tf/keras_gru_v1_state_op7": "GRU",
    "tf/keras_gru_v1_state_op18": "GRU",
    "tf/keras_simplernn_seq_op7": "RNN",
    "tf/keras_simplernn_seq_op18": "RNN",
    "tf/keras_simplernn_state_backwards_op10": "RNN",
    "tf/keras_simplernn_state_backwards_op18": "RNN",
    "tf/keras_bidi_simplernn_state_op10": "RNN2",
    "tf/keras_bidi_simplernn_state_op18": "RNN2",
    "tf/keras_rnn_simplecell_op7": "RNN",
    "tf/keras_rnn_simplecell_op18": "RNN",
    "torch-ov/for_range_shape_ptfe": "RNN",
    "torch-ov/manual_rnn_stack_ptfe": "RNN",
    "torch-ov/for_range_shape_op23_onnxfe": "RNN",
    "torch-ov/manual_rnn_stack_op23_onnxfe": "RNN",
    "torch-ov/scan_rnn_dynamo_op20_onnxfe": "RNN",
    "torch/for_range_shape_op9": "RNN",
    "torch/for_range_shape_op23": "RNN",
    "torch/manual_rnn_stack_op11": "RNN",
    "torch/manual_rnn_stack_op23": "RNN",
    "torch/lstm_cell_loop_op11": "LSTM",
    "torch/lstm_cell_loop_op13": "LSTM",
    "torch/lstm_cell_loop_op23": "LSTM",
    # torch's chunk(3, 1): SplitToSequence, Slice or Split with sizes computed in the body
    "torch/manual_gru_loop_op11": "GRU",
    "torch/manual_gru_loop_op23": "GRU",
    "torch-ov/manual_gru_loop_ptfe": "GRU",
    "torch-ov/manual_gru_loop_op23_onnxfe": "GRU",
    "torch/scan_rnn_dynamo_op20": "RNN",
    "torch/scan_rnn_dynamo_op27": "RNN",
}


@pytest.mark.parametrize("entry_id", list(CORPUS))
def test_corpus_cell_loops_match_the_framework(entry_id, tmp_path):
    e = next(x for x in entries() if x.id == entry_id)
    model = optimize(ig.load(e.file), ["fuse-cells"])
    onnx_path, xml_path = tmp_path / "fused.onnx", tmp_path / "fused.xml"
    ig.save(model, onnx_path)
    ig.save(model, xml_path)
    written = onnx.load(str(onnx_path))
    onnx.checker.check_model(written, full_check=True)
    assert not LOOPS & set(_onnx_ops(written))
    got = sorted(n.op_type + ("2" if h.get_attribute_value(next(
        a for a in n.attribute if a.name == "direction")) == b"bidirectional" else "")
        for n in written.graph.node if n.op_type in OPS.values())
    assert got == sorted(CORPUS[entry_id].split())
    seqs = sorted(layer.get("type")[:-len("Sequence")] + (
        "2" if layer.find("data").get("direction") == "bidirectional" else "")
        for layer in ET.parse(xml_path).getroot().iter("layer")
        if layer.get("type") in {f"{k}Sequence" for k in OPS.values()})
    assert seqs == got
    assert not OV_LOOPS & {layer.get("type") for layer in ET.parse(xml_path).getroot().iter(
        "layer")}
    feeds = e.feeds()
    names = [o.name for o in written.graph.output]
    want = dict(zip(names, e.expected()))
    tol = dict(rtol=max(e.rtol, 1e-4), atol=max(e.atol, 1e-5))
    _all_agree(model, written, xml_path, feeds, want, **tol)


def test_written_ir_carries_each_weight_once(tmp_path):
    # The sequence-op writer materialises the ONNX-layout weights and then the reordered
    # copies the op reads; the unread constants must not reach the .bin.
    src = Path(__file__).parents[1] / "realworld/models/tf-ov/keras_bidi_lstm_concat.xml"
    fused = optimize(str(src), ["fuse-cells"])
    assert any(n.op_type == "LSTM" for n in fused.graph.nodes)
    ig.save(fused, tmp_path / "fused.xml")
    assert (tmp_path / "fused.bin").stat().st_size <= 1.1 * src.with_suffix(".bin").stat().st_size
