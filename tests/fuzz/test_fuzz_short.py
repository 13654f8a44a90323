"""The fuzzer in the test suite: its parts (deterministic mutants, every operator applicable
to some seed, the verdicts), and a short seeded campaign that fails on any finding: a raw
exception, crash, hang, memory blow-up, backend disagreement or wrong result."""

from __future__ import annotations

import numpy as np
import pytest

from . import mutate_feeds, mutate_ir, mutate_network, mutate_onnx
from .campaign import run_campaign, summarize
from .common import NotApplicable
from .mutants import SPECIAL, Mutant, build, campaign
from .runner import run_batch
from .seeds import seeds
from .verdicts import FINDINGS, differ, findings, verdict

SHORT_SEED = 20260101  # the short run's campaign: fixed, so that a failure reproduces
SHORT_MUTANTS = 200


def test_a_mutant_is_built_the_same_way_every_time(tmp_path):
    for spec in ("tf/while_counted_op13|loop_trip|5", "tf-ov/while_counted|ir_port_map|7",
                 "torch/rnn_tanh_op23|feed_values|3", "tf/nested_while_op7|multi|11"):
        a, b = build(Mutant.parse(spec), tmp_path / "a"), build(Mutant.parse(spec), tmp_path / "b")
        assert a.path.read_bytes() == b.path.read_bytes(), spec
        assert a.description == b.description
        assert list(a.feeds) == list(b.feeds)
        for k in a.feeds:
            np.testing.assert_array_equal(a.feeds[k], b.feeds[k])


def test_a_mutant_changes_its_seed(tmp_path):
    built = build(Mutant.parse("tf/while_counted_op13|loop_trip|5"), tmp_path)
    seed = next(s for s in seeds() if s.id == "tf/while_counted_op13")
    assert built.path.read_bytes() != seed.file.read_bytes()
    assert "Loop" in built.description


@pytest.mark.parametrize("op", sorted(mutate_onnx.OPS) + sorted(mutate_ir.OPS)
                         + sorted(mutate_network.OPS) + sorted(mutate_feeds.OPS))
def test_every_operator_applies_to_some_seed(op, tmp_path):
    fmt = "openvino" if op in mutate_ir.OPS else "onnx" if op in mutate_onnx.OPS else \
        "network" if op in mutate_network.OPS else None
    for s in seeds():
        if fmt and s.format != fmt or "sklearn" in s.id:
            continue
        for n in range(3):
            try:
                build(Mutant(s.id, op, n), tmp_path / f"{op}{n}")
                return
            except NotApplicable:
                pass
    pytest.fail(f"{op} applies to no seed")


def test_differ_names_what_differs():
    a = {"y": np.array([1.0, np.nan], np.float32)}
    assert differ(a, {"y": np.array([1.0, np.nan], np.float32)}) is None
    assert "NaN" in differ(a, {"y": np.array([1.0, 2.0], np.float32)})
    assert "dtype" in differ(a, {"y": np.array([1.0, np.nan])})
    assert "shape" in differ(a, {"y": np.array([1.0], np.float32)})
    assert "1.0 vs" in differ(a, {"y": np.array([1.5, np.nan], np.float32)})
    assert differ({"s": [np.ones(2)]}, {"s": [np.ones(2), np.ones(2)]})


def test_verdicts_are_ordered_worst_first():
    raw = {"kind": "raw", "type": "KeyError", "msg": "x", "frame": "a.py:f"}
    res = {"stages": {"load": {"kind": "ok"}, "numpy": raw, "jax": {"kind": "error"}},
           "disagree": {"type": "values", "frame": "", "msg": "m"}}
    assert verdict(res) == "raw"
    assert [f["verdict"] for f in findings(res)] == ["raw", "disagree"]
    assert verdict({"stages": {"load": {"kind": "error"}}}) == "error"
    assert verdict({"kind": "hang", "stage": "jax"}) == "hang"


def test_the_campaign_draws_every_kind_of_operator():
    ops = {m.op for m in campaign(2000, 0)}
    assert set(SPECIAL) - {"none"} <= ops
    assert set(mutate_onnx.OPS) | set(mutate_ir.OPS) | set(mutate_feeds.OPS) <= ops


def test_short_campaign_has_no_findings(tmp_path):
    """`SHORT_MUTANTS` mutants of campaign `SHORT_SEED` (about a minute on one core), in one
    child process: every outcome must be a clean itergraph error or a run that agrees."""
    results = run_campaign(SHORT_MUTANTS, SHORT_SEED, tmp_path, batch=SHORT_MUTANTS)
    assert len(results) == SHORT_MUTANTS
    assert sum(r["verdict"] not in ("n/a",) for r in results) > SHORT_MUTANTS // 2
    bad = [r for r in results if r["verdict"] in FINDINGS]
    assert not bad, summarize(results)


#: mutants whose findings were fixed (raw exceptions, disagreements): each stays a clean error
#: or an agreeing run
FIXED = [
    # initializers of -1e30 in a causal decoder layer: the IR written from it gave NaN where
    # the ONNX model's LayerNormalization gives the bias (written as ONNX's function body,
    # whose E[x^2] - E[x]^2 is inf - inf past float32's range; now the deviations first)
    "torch-models/causal_decoder_dynamo_op23|tensor_values|1355407686",
    # a Loop's inputs swapped in a Keras GRU: a constant bias of 96 values where the fused
    # cell reads 24 (the cell fusion raised a raw ValueError; it now leaves the loop alone)
    "tf/keras_masking_gru_op11|input_edit|1774079697",
    # an unused node given an unknown op type: NumPy refused the model, JAX dropped the node
    "shipped/silero_vad_16k_op15|op_type|1273227632",
    # a Reshape whose shape initializer is a scalar: NumPy refused it, JAX ran it
    "sklearn/radius_classifier_op22|tensor_bytes|1075211233",
    # a loop body output declared of rank 2 where the body computes rank 1 (ONNX Runtime
    # warns and runs it): the JAX pipeline's sequence_scan_outputs trusted the declared rank
    "torch/greedy_decoder_op17|value_shape|1766124961",
    # a list built by a loop that runs no iteration, then ConcatFromSequence: NumPy refused
    # the empty sequence (as ONNX Runtime), JAX gave an empty tensor
    "torch/list_append_stack_op17|loop_trip|1735135310",
    "torch/list_append_stack_op17|feed_values|670533683",
    # an LSTM's clip set to 0: ran here (gates clipped to 0), ONNX Runtime refuses it, and
    # the IR written from it read 0 as no clipping (a roundtrip difference)
    "torch/lstm_2layer_bidirectional_dynamo_op27|rnn_attrs|251283264",
    # Gather(Shape(x), axis=-2**31): NumPy ran it, JAX refused it; ONNX Runtime refuses it
    # at load (a Shape's output is a vector)
    "torch/scatter_write_op23|attr_int|120797850",
    # an IR edge rewired so that an Add mixes f32 and i32 (OpenVINO refuses it)
    "tf-ov/keras_simplernn_seq|ir_edge|758307122",
    # Slice axes of shape (1, 1): NumPy raised a wrapped TypeError, JAX flattened them
    "torch/greedy_growing_op23|input_edit|1840159316",
    # zero steps of an IR loop written to ONNX: a Reshape read the 0 dims as "copy"
    "torch-ov/lstm_cell_loop_op23_onnxfe|feed_shape|962021907",
    # ConcatFromSequence axis 2**31: a 2**31 permutation built by the JAX pipeline
    "torch/manual_rnn_stack_op23|attr_int|1967713468",
    # a Concat axis of -2**31 over Slices in a loop body (ONNX Runtime refuses it at load)
    "torch/lstm_cell_loop_op23|attr_int|1593712795",
    # ConstantFill of dtype 0: a raw AttributeError from the reader
    "torch/lstm_packed_op7|cast_to|726937960",
    # a ConstantOfShape without value (float32) carried by a loop as int64
    "torch-unseen/collatz_op17|attr_remove|989262277",
    # NaNs of 0xFF bytes into TopK: XLA's top_k ordered them by their sign bit
    "sklearn-ov/kneighbors_transformer_distance_op22|ir_bin|310571977",
    # ReduceMin's axes attribute at opset 23, ignored silently (ONNX Runtime refuses it)
    "torch-unseen/clamp_keepdim_op13|opset|26374051",
    # a string graph output computed before JAX's compiled nodes, passed to them (TypeError)
    "sklearn/knn_classifier_string_labels_zipmap_op22|node_reorder|600648935",
    # zero-iteration loops written to IR as their results lost the outputs' names
    "torch/beam_search_op9|loop_trip|602268271",
    "jax2onnx/scan_zero_length|feed_dtype|644091792",
    # a Loop output declared of another element type than the body gives, and a Cast's
    # output declared of another than its `to` (ONNX Runtime refuses both at load): the IR
    # read back returned the declared type, or NumPy promoted where JAX did not
    "torch/beam_search_op8|value_dtype|2075820128",
    "jax2onnx/attention_steps|cast_to|2064466950",
    "jax2onnx/fori_static|cast_to|8826454",
    # ReduceMax axes of -2**63 in an If branch not taken: NumPy ran, JAX refused while
    # tracing; ONNX Runtime refuses the model at load
    "paddle/static_cond_op13|attr_ints|492043286",
    # an attribute name that is not UTF-8: a raw TypeError from the attribute check
    "jax2onnx/cumsum_in_fori|bytes|1436316409",
    # four activations for an LSTM in a loop body that never runs: NumPy refused, JAX ran
    "torch-unseen/lstm_cell_no_rows_op13|rnn_attrs|166422397",
    # a loop of LSTM cells without a trip count: it reads past x, and JAX's fused cell
    # stopped at x's end
    "torch-unseen/lstm_cell_no_rows_op16|loop_trip|1028225367",
    # a Keras LSTM while loop with a trip count of -1 (ONNX: no iteration): the counted copy
    # the cell fusion makes took -1 for "no bound" and ran every step on both backends
    "tf/keras_masking_lstm_op7|loop_trip|2130516471",
    # an output name ending in a newline or a tab, written to IR and read back: the reader
    # stripped the whitespace (OpenVINO keeps it), so the outputs' names changed
    "torch/lstm_batch_first_state_dynamo_op27|name_text|436916802",
    "tf/keras_lstm_backwards_op18|name_text|462177494",
    # a Loop node name holding NUL: the NumPy loop driver's compile refused its file name
    "torch/while_loop_sum_dynamo_op20|name_text|403514482",
    # +inf fed to a greedy decoder: its ArgMax over NaN, written as an IR TopK, read back as
    # ONNX's TopK (NaN largest) gave another index than ONNX Runtime's rule
    "tf/greedy_decoder_fixed_ta_op10|feed_values|950748762",
    # ConstantFill's dtype retyped as INTS: a raw TypeError from the reader
    "torch/rnn_relu_2layer_bidirectional_op7|attr_retype|1841662841",
    # +inf fed to a logistic regression: raw scores [-inf, nan, inf] labelled by the softmax's
    # argmax (onnx.reference) where ONNX Runtime takes the first highest raw score
    "sklearn/logistic_regression_op1|feed_values|548819372",
    # -inf fed to a packed LSTM written to IR as standard nodes: the steps past a row's length
    # were zeroed by multiplying with a mask (NaN * 0 is NaN)
    "torch/lstm_packed_op7|multi|1795960468",
    # a Scaler of a bool tensor (a Cast put before it): it ran, and its IR gave bool
    "sklearn-unseen/standard_scaler|cast_between|1910309312",
    # a TreeEnsembleRegressor over int32 features: NumPy float64, JAX float32
    "sklearn-unseen/bagging_extra_tree_regressor|cast_between|336748528",
    # a Gather of i32 whose IR port says FP32, then an Add with f32: NumPy f64, JAX f32
    "torch-ov/for_over_rows_ptfe|ir_convert_between|470578327",
    # a LinearRegressor without intercepts: onnx.reference made them NaN
    "sklearn-unseen/bayesian_ridge|attr_remove|161081676",
    # a Conv's dilations emptied: NumPy failed with an IndexError, JAX ran
    "torch-models/depthwise_cnn_dynamo|attr_ints|566289625",
    # a Const of f64 whose port says I64, as Unsqueeze axes: NumPy failed, JAX cast them
    "tf-ov/keras_lstm_seq_onnxfe|ir_element_type|1647729862",
    # a running max fed zero rows: JAX refused the Reshape of its own scan-output rewrite
    "torch-models/running_max_script_op17|feed_shape|2006977753",
    # +inf into DynamicQuantizeLinear: ONNX Runtime's codes are undefined, the IR differed
    "ort-quant/cnn_dyn|feed_values|1092399366",
    # network API calls: an output named as an input (written to ONNX as 'x_1'), an input of
    # 40 dims (a raw ValueError), a read-only attribute set (a raw AttributeError)
    "network/counting_loop|net_name|1271828049",
    "network/conditional|net_input|461823231",
    "network/while_loop|net_attr|2013183444",
    "network/conditional|net_attr|1357918539",  # an op set to 2**62: a raw AttributeError
    # a random forest's label declared uint16: ran as int64, and the IR returned uint16
    "sklearn/random_forest_op22|value_dtype|758494418",
    # a GRU's initial state of [2, batch, 2**63 - 1]: XLA aborted the process
    "torch/gru_packed_bidirectional_op23|tensor_values|13616354",
    # ids of batch 1 and a mask of batch 2 into EmbedLayerNormalization: ran (roundtrip)
    "ort-fused/bert_ort|feed_shape|1357105547",
]


def test_fixed_findings_stay_fixed(tmp_path):
    results = run_batch(FIXED, tmp_path)
    for spec in FIXED:
        r = results[spec]
        r["verdict"] = verdict(r)
        assert r["verdict"] not in FINDINGS, (spec, findings(r))
