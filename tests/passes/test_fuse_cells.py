"""passes.fuse_cells: recurrent cells in every spelling become one RecurrentSequence node and
compute what ONNX Runtime computes on the original; bodies that only look alike stay loops."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import itergraph as ig
from cell_spellings import build
from itergraph.errors import ExecutionError, IterationLimitError
from itergraph.passes.cells import fuse_cells
from onnx_builders import run_ort
from passutil import load, loops, run, transformed

SPELLINGS = {
    "lstm_matmul_split": dict(cell="lstm"),
    "lstm_gemm_torch_order": dict(cell="lstm", product="gemm", order="ifco"),
    "lstm_gemm_alpha_slice": dict(cell="lstm", product="gemm_alpha", gates="slice",
                                  order="fico", bias=1),
    "lstm_concat_xh_split18": dict(cell="lstm", product="concat", gates="split18",
                                   order="icfo"),
    "lstm_per_gate_no_bias": dict(cell="lstm", product="per_gate", bias=0),
    "lstm_peephole_clip": dict(cell="lstm", peephole=True, clip=0.7),
    "lstm_coupled_hardsigmoid": dict(cell="lstm", couple=True, f_act="HardSigmoid"),
    "lstm_loop_gather": dict(cell="lstm", loop="loop_gather", gates="slice"),
    "lstm_reverse_input": dict(cell="lstm", loop="scan_reverse", order="oicf"),
    "lstm_reverse_output": dict(cell="lstm", loop="scan_out_reverse"),
    "lstm_batch_first": dict(cell="lstm", loop="scan_axis1", product="gemm"),
    "gru_lbr_std": dict(cell="gru"),
    "gru_lbr_torch_gemm": dict(cell="gru", product="gemm", order="rzh", update="torch"),
    "gru_plain_u_form": dict(cell="gru", lbr=0, update="u", gates="slice"),
    "gru_plain_clip_bias1": dict(cell="gru", lbr=0, clip=1.5, bias=1, order="hzr"),
    "gru_per_gate_gather": dict(cell="gru", product="per_gate", loop="loop_gather"),
    "lstm_torch_list_append": dict(cell="lstm", product="gemm", order="ifco", loop="loop_list"),
    "rnn_matmul": dict(cell="rnn"),
    "rnn_concat_clip": dict(cell="rnn", product="concat", clip=0.5),
    "rnn_gemm_alpha_reverse": dict(cell="rnn", product="gemm_alpha", loop="scan_reverse"),
}
JAX = ["lstm_gemm_torch_order", "lstm_peephole_clip", "lstm_batch_first", "gru_lbr_torch_gemm",
       "gru_plain_u_form", "rnn_concat_clip"]
LOOKALIKES = {
    "gate_is_also_an_output": dict(cell="lstm", extra="gate_output"),
    "one_gate_with_another_activation": dict(cell="lstm", extra="mixed_act"),
    "gate_read_twice": dict(cell="lstm", extra="gate_twice"),
    "cell_state_concatenated": dict(cell="lstm", extra="c_output"),
    "input_enters_nonlinearly": dict(cell="rnn", extra="x_squared", I=5),
}


def _close(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


def _fused(m):
    g, count = transformed(load(m), fuse_cells)
    return g, count


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_spelling_is_fused_and_matches_onnxruntime(name):
    m, feeds = build(**SPELLINGS[name])
    want = run_ort(m, feeds)
    g, count = _fused(m)
    assert count == 1 and not loops(g)
    assert [n.op_type for n in g.nodes].count("RecurrentSequence") == 1
    _close(run(g, feeds), want)  # the rewritten graph as it is
    _close(ig.load(m).run(feeds), want)  # the NumPy backend's pipeline


@pytest.mark.parametrize("name", JAX)
def test_spelling_on_jax_matches_onnxruntime(name):
    m, feeds = build(**SPELLINGS[name])
    model = ig.load(m)
    _close(model.run(feeds, backend="jax"), run_ort(m, feeds))
    assert "fused as one" in model.explain(backend="jax")


@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_lookalike_stays_a_loop_and_keeps_its_results(name):
    m, feeds = build(**LOOKALIKES[name])
    g, count = _fused(m)
    assert count == 0 and len(loops(g)) == 1
    _close(ig.load(m).run(feeds), run_ort(m, feeds))


def test_a_cell_beside_an_independent_counter_is_split_off_and_fused():
    """A carried counter the cell does not read: the cell runs as a loop of its own
    (`cell_fission`) and is fused; the counter stays a loop."""
    m, feeds = build(cell="gru", extra="counter")
    g, count = _fused(m)
    assert count == 1 and len(loops(g)) == 1
    assert [n.op_type for n in g.nodes].count("RecurrentSequence") == 1
    _close(run(g, feeds), run_ort(m, feeds))
    _close(ig.load(m).run(feeds), run_ort(m, feeds))


def test_one_step_cell_operator_in_a_loop_is_fused():
    """OpenVINO's TensorIterator + LSTMCell import: LSTM of one step between Unsqueeze and
    Squeeze; peepholes and clip are carried over."""
    import onnx
    from onnx import helper as h

    from onnx_builders import const, vi

    H, I, B, T = 3, 2, 2, 4
    rng = np.random.default_rng(3)
    nodes = [h.make_node("Unsqueeze", ["x_t", "ax0"], ["x3"]),
             h.make_node("Unsqueeze", ["h_in", "ax0"], ["h3"]),
             h.make_node("Unsqueeze", ["c_in", "ax0"], ["c3"]),
             h.make_node("LSTM", ["x3", "W", "R", "B", "", "h3", "c3", "P"], ["y", "hn", "cn"],
                         hidden_size=H, clip=0.9),
             h.make_node("Squeeze", ["hn", "ax0"], ["h_out"]),
             h.make_node("Squeeze", ["cn", "ax0"], ["c_out"]),
             h.make_node("Squeeze", ["y", "ax01"], ["y_t"])]
    inits = [const("W", rng.standard_normal((1, 4 * H, I)), np.float32),
             const("R", rng.standard_normal((1, 4 * H, H)), np.float32),
             const("B", rng.standard_normal((1, 8 * H)), np.float32),
             const("P", rng.standard_normal((1, 3 * H)), np.float32),
             const("ax0", [0], np.int64), const("ax01", [0, 1], np.int64)]
    body = h.make_graph(nodes, "b", [vi("h_in", 1, [B, H]), vi("c_in", 1, [B, H]),
                                     vi("x_t", 1, [B, I])],
                        [vi("h_out", 1, [B, H]), vi("c_out", 1, [B, H]), vi("y_t", 1, [B, H])],
                        inits)
    scan = h.make_node("Scan", ["H0", "C0", "X"], ["Hn", "Cn", "Y"], body=body,
                       num_scan_inputs=1)
    g = h.make_graph([scan], "g", [vi("X", 1, [T, B, I]), vi("H0", 1, [B, H]),
                                   vi("C0", 1, [B, H])],
                     [vi("Hn", 1, [B, H]), vi("Cn", 1, [B, H]), vi("Y", 1, [T, B, H])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    feeds = {"X": rng.standard_normal((T, B, I)).astype(np.float32),
             "H0": rng.standard_normal((B, H)).astype(np.float32),
             "C0": rng.standard_normal((B, H)).astype(np.float32)}
    fused, count = _fused(m)
    assert count == 1
    want = run_ort(m, feeds)
    _close(run(fused, feeds), want)
    _close(ig.load(m).run(feeds, backend="jax"), want)


def test_a_loop_that_can_stop_early_is_not_fused():
    m, feeds = build(cell="rnn", loop="loop_gather")
    g = load(m)
    loop = loops(g)[0]
    loop.condition_result = next(v for v in loop.body.inputs if v.name == "h_in")  # not a cond
    assert fuse_cells(g) == 0


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_fused_loop_keeps_the_loops_errors_and_limits(backend):
    """Zero steps, a trip count beyond the input, and max_iterations: the fused node refuses
    them and the original loop runs, with its own results and errors."""
    m, feeds = build(cell="lstm", loop="loop_gather", T=3)
    model = ig.load(m)
    with pytest.raises(IterationLimitError):
        model.run(feeds, backend=backend, max_iterations=2)
    assert model.run(feeds, backend=backend, max_iterations=3)
    with pytest.raises(ExecutionError):
        model.run({**feeds, "M": np.array(4, np.int64)}, backend=backend)
    few = {**feeds, "M": np.array(2, np.int64)}
    _close(model.run(few, backend=backend), run_ort(m, few))
    none = {**feeds, "M": np.array(0, np.int64)}
    _close(model.run(none, backend=backend), run(load(m), none))


def test_empty_scan_runs_the_original_loop():
    m, feeds = build(cell="gru")
    empty = {**feeds, "X": feeds["X"][:0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run(load(m), empty)
        got = ig.load(m).run(empty)
    _close(got, want)


def test_initial_state_broadcast_over_the_batch():
    """A [1, H] initial state with a batch of 3: the loop broadcasts it in its first step."""
    m, feeds = build(cell="gru", B=3)
    feeds["H0"] = feeds["H0"][:1]
    want = run(load(m), feeds)
    _close(ig.load(m).run(feeds), want)


# TensorFlow's while loops over a time counter, as tf2onnx and OpenVINO's TensorFlow frontend
# write Keras RNNs (one per layer and direction), masked ones (`cell_mask`), stacked cells
# in one loop (`cell_fission`) and tf.scan (a condition of two counters and a trip count):
# the backends' own pipelines fuse them too. Entry: (loops, fused nodes).
KERAS_WHILE_LOOPS = {
    "tf/keras_gru_v1_state_op18": (1, 1), "tf/keras_simplernn_state_backwards_op10": (1, 1),
    "tf/keras_bidi_simplernn_state_op18": (2, 2), "tf/keras_rnn_simplecell_op7": (1, 1),
    "tf-ov/keras_lstm_seq": (1, 1), "tf-ov/keras_gru_backwards": (1, 1),
    "tf-ov/keras_bidi_lstm_concat": (2, 2), "tf-ov/keras_stacked_lstm_gru": (2, 2),
    "tf-ov/keras_lstm_initial_state": (1, 1),
    "tf/keras_masking_lstm_op13": (1, 1), "tf-ov/keras_masking_gru": (1, 1),
    "tf/keras_masking_bidi_lstm_op18": (2, 2), "tf-ov/keras_rnn_lstmcell_masked_state": (1, 1),
    "tf/keras_rnn_stacked_cells_op18": (1, 2), "tf-ov/keras_rnn_stacked_cells": (1, 2),
    "tf/scan_rnn_cell_op13": (1, 1),
}


@pytest.mark.parametrize("entry_id", list(KERAS_WHILE_LOOPS))
def test_tensorflow_while_loops_are_fused_by_the_backends(entry_id, monkeypatch):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))
    from corpus import entries

    import itergraph.backends.numpy.kernels.rnn as numpy_rnn
    from itergraph.passes.pipelines import NUMPY, run_pipeline

    n_loops, n_fused = KERAS_WHILE_LOOPS[entry_id]
    e = next(x for x in entries() if x.id == entry_id)
    model = ig.load(e.file)
    assert len(loops(model.graph)) == n_loops
    g, _ = transformed(model.graph, lambda g: run_pipeline(NUMPY, g))
    assert not loops(g)
    assert [n.op_type for n in g.nodes].count("RecurrentSequence") == n_fused
    calls = []
    fused = numpy_rnn.run_direction
    monkeypatch.setattr(numpy_rnn, "run_direction", lambda *a, **k: calls.append(1) or fused(
        *a, **k))
    feeds, want = e.feeds(), e.expected()
    for backend in ("numpy", "jax"):
        got = model.run(feeds, backend=backend)
        for a, b in zip(got.values(), want):
            np.testing.assert_allclose(a, b, rtol=max(e.rtol, 1e-4), atol=max(e.atol, 1e-5))
    assert len(calls) >= n_fused  # the NumPy run took the fused kernels, not the loops
    assert model.explain(backend="jax").count("fused as one") == n_loops


@pytest.mark.parametrize("form", ["ti_cell", "ti_decomposed"])
@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn"])
def test_openvino_ti_with_float16_weights_is_fused(cell, form, tmp_path):
    """``ov.save_model`` and OpenVINO's converters store weights as float16 constants
    converted on reading: the cell's weights are computed in the body (Convert, and Split +
    Concat where the reader reorders LSTMCell/GRUCell gates), and the loop is still fused."""
    import sys
    from pathlib import Path

    import openvino as ov

    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    import recurrent_models as rm

    from itergraph.ir import Loop
    from itergraph.passes.cells import fused_kind

    spec = rm.Spec(cell, batch=3, seq=5, inp=4, hidden=6)
    path = tmp_path / "ti.xml"
    names = rm.openvino_model(spec, form, str(path), compress=True)
    assert "f16" in path.read_text()
    feeds = rm.form_feeds(form, spec.feeds())
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    want = {n: compiled(feeds)[compiled.output(n)] for n in names}
    model = ig.load(path)
    g = model.graph
    (loop,) = [n for n in g.nodes if isinstance(n, Loop)]
    assert fused_kind(g, loop) == cell.upper()
    for backend in ("numpy", "jax"):
        got = model.run(feeds, backend=backend)
        for n in names:
            np.testing.assert_allclose(got[n], want[n], rtol=1e-4, atol=1e-5, err_msg=n)


def _two_counter_loop(M, L1, L2, as_inputs: bool, T=6, B=2, I=3, H=4):
    """An RNN as tf.scan's while loop: trip count M (None: none), condition ``k < L1 and
    t + 1 < L2`` (k the iteration number, t a counter from 0), initial condition the same at
    0, step input ``Gather(X, t)``."""
    from onnx import TensorProto, numpy_helper
    from onnx import helper as h

    from onnx_builders import model, vi

    rng = np.random.default_rng(7)
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    body = h.make_graph(
        [h.make_node("Gather", ["X", "t"], ["x_t"], axis=0),
         h.make_node("MatMul", ["x_t", "W"], ["xw"]), h.make_node("MatMul", ["h", "R"], ["hr"]),
         h.make_node("Add", ["xw", "hr"], ["s"]), h.make_node("Add", ["s", "b"], ["sb"]),
         h.make_node("Tanh", ["sb"], ["h_out"]), h.make_node("Identity", ["h_out"], ["y"]),
         h.make_node("Add", ["t", "one"], ["t_out"]),
         h.make_node("Less", ["k", "L1"], ["c1"]), h.make_node("Less", ["t_out", "L2"], ["c2"]),
         h.make_node("And", ["c1", "c2"], ["cond_out"])], "body",
        [vi("k", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("t", TensorProto.INT64, []), vi("h", 1, [B, H])],
        [vi("cond_out", TensorProto.BOOL, []), vi("t_out", TensorProto.INT64, []),
         vi("h_out", 1, [B, H]), vi("y", 1, [B, H])])
    nodes = [h.make_node("Less", ["zero", "L1"], ["i1"]),
             h.make_node("Less", ["zero", "L2"], ["i2"]),
             h.make_node("And", ["i1", "i2"], ["cond0"]),
             h.make_node("Loop", ["M" if M is not None else "", "cond0", "zero", "H0"],
                         ["t_n", "Hn", "Y"], body=body)]
    inits = [one, zero,
             numpy_helper.from_array(rng.standard_normal((I, H)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal((H, H)).astype(np.float32) * 0.5, "R"),
             numpy_helper.from_array(rng.standard_normal(H).astype(np.float32), "b")]
    feeds = {"X": rng.standard_normal((T, B, I)).astype(np.float32),
             "H0": rng.standard_normal((B, H)).astype(np.float32)}
    inputs = [vi("X", 1, [T, B, I]), vi("H0", 1, [B, H])]
    limits = {"L1": L1, "L2": L2, **({} if M is None else {"M": M})}
    for k, v in limits.items():
        if as_inputs:
            feeds[k] = np.array(v, np.int64)
            inputs.append(vi(k, TensorProto.INT64, []))
        else:
            inits.append(numpy_helper.from_array(np.array(v, np.int64), k))
    m = model(nodes, inputs, [vi("Hn", 1, [B, H]), vi("Y", 1, ["n", B, H])], inits, opset=17)
    return m, feeds


@pytest.mark.parametrize("M,L1,L2", [(6, 6, 6), (6, 2, 6), (6, 5, 3), (3, 9, 9), (None, 3, 4),
                                     (6, 0, 4), (6, 4, 0), (0, 4, 4)])
@pytest.mark.parametrize("as_inputs", [True, False])
def test_a_condition_of_two_counters_and_a_trip_count(M, L1, L2, as_inputs):
    """tf.scan's while loop (tf2onnx): ``k < L1 and t + 1 < L2`` with a trip count runs
    min(M, L1 + 1, L2) steps (none where the initial condition fails); fused, on both
    backends, against ONNX Runtime (zero steps: the original loop runs)."""
    m, feeds = _two_counter_loop(M, L1, L2, as_inputs)
    want = run_ort(m, feeds)
    n = min(M if M is not None else 99, L1 + 1, L2) if min(L1, L2) > 0 else 0
    assert want["Y"].shape[0] == max(n, 0)
    g, count = _fused(m)
    assert count == 1 and not loops(g)
    model = ig.load(m)
    _close(model.run(feeds), want)
    _close(model.run(feeds, backend="jax"), want)
