"""ONNX Runtime's com.microsoft.BeamSearch with model_type 1 (T5 encoder-decoder) run by
itergraph: ORT is the oracle for sequences and sequences_scores."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parent))
from t5_models import VOCAB, t5_model  # noqa: E402

ort = pytest.importorskip("onnxruntime")

I32, F32 = np.int32, np.float32
# row 1 left-padded, row 2 with a pad token after its first token (ORT masks leading pads only)
IDS = np.array([[3, 4, 5, 6], [0, 7, 8, 9], [0, 0, 5, 0]], I32)
rng = np.random.default_rng(11)
VMASK = (rng.random(VOCAB) > 0.2).astype(I32)
PMASK = (rng.random((3, VOCAB)) > 0.5).astype(I32)
BASE = {"max_length": 9, "min_length": 1, "num_beams": 3, "num_return_sequences": 2,
        "length_penalty": 1.0}
CASES = {
    "plain": ({}, {}),
    "return_1": ({"num_return_sequences": 1}, {}),
    "return_4_of_4": ({"num_beams": 4, "num_return_sequences": 4}, {}),
    "one_beam": ({"num_beams": 1, "num_return_sequences": 1}, {}),
    "max_length_3": ({"max_length": 3}, {}),
    "min_length": ({"min_length": 8, "max_length": 11}, {}),
    "length_penalty": ({"length_penalty": 0.3, "num_return_sequences": 3}, {}),
    "repetition": ({"repetition_penalty": 1.6}, {}),
    "vocab_mask": ({"vocab_mask": VMASK}, {}),
    "prefix_mask": ({"prefix_vocab_mask": PMASK}, {}),
    "attention_mask": ({"attention_mask": np.array([[1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 0]],
                                                   I32)}, {}),
    "early_stopping": ({}, {"early_stopping": 1}),
    "eos_19": ({"max_length": 12}, {"eos_token_id": 19}),
    "start_token_5": ({}, {"decoder_start_token_id": 5}),
    "pad_3": ({}, {"pad_token_id": 3}),
    "no_repeat_2": ({"max_length": 12}, {"no_repeat_ngram_size": 2}),
}
FORMS = {"legacy": {"legacy": True}, "legacy_no_hidden": {"legacy": True, "hidden_states": False},
         "cross_only": {"legacy": False}}


def _feeds(case):
    f = {"input_ids": IDS.copy()}
    for k, v in {**BASE, **CASES[case][0]}.items():
        f[k] = np.array([v], F32 if k.endswith("penalty") else I32) if np.isscalar(v) else v
    return f


def _model(case, feeds, form="legacy", **kw):
    return t5_model("BeamSearch", [k for k in feeds if k != "input_ids"],
                    **FORMS[form], **CASES[case][1], **kw)


def _check(model, feeds, backend="numpy"):
    seqs, scores = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ig.load(model).run(feeds, backend=backend)
    np.testing.assert_array_equal(got["sequences"], seqs)
    np.testing.assert_allclose(got["sequences_scores"], scores, rtol=1e-5, atol=1e-6)
    return seqs


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("form", list(FORMS))
def test_t5_beam_matches_ort(case, form):
    feeds = _feeds(case)
    _check(_model(case, feeds, form), feeds)


@pytest.mark.parametrize("case", ["plain", "attention_mask", "prefix_mask"])
@pytest.mark.parametrize("form", ["legacy", "cross_only"])
def test_t5_beam_matches_ort_on_jax(case, form):
    feeds = _feeds(case)
    _check(_model(case, feeds, form), feeds, backend="jax")


def test_tokens_vary():
    """The tiny model is not degenerate: beams and batch rows differ."""
    feeds = _feeds("plain")
    seqs = _check(_model("plain", feeds), feeds)
    assert len({tuple(r) for r in seqs.reshape(-1, seqs.shape[-1])}) > 2
    assert (seqs[..., 0] == 2).all()  # decoder_start_token_id leads every sequence


@pytest.mark.parametrize("form", ["legacy", "cross_only"])
def test_whole_sequence_as_decoder_input_ids(form):
    """A decoder whose input_ids is not [B, 1] gets the whole sequence at every step, as ORT
    feeds it (use_sequence_as_input_ids)."""
    feeds = _feeds("plain")
    _check(_model("plain", feeds, form, ids_len="L"), feeds)


def _move_initializers(model: onnx.ModelProto) -> onnx.ModelProto:
    """What convert_generation does: the subgraphs' initializers in the main graph."""
    for a in model.graph.node[0].attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            model.graph.initializer.extend(a.g.initializer)
            del a.g.initializer[:]
    return model


@pytest.mark.parametrize("form", ["legacy", "cross_only"])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_subgraphs_reading_main_graph_initializers(form, backend):
    feeds = _feeds("plain")
    _check(_move_initializers(_model("plain", feeds, form)), feeds, backend)


def test_no_com_microsoft_opset_import():
    """convert_generation's T5 file has no com.microsoft opset import; ORT runs it."""
    feeds = _feeds("plain")
    model = _model("plain", feeds, opset_import=False)
    assert all(o.domain != "com.microsoft" for o in model.opset_import)
    _check(model, feeds)


@pytest.mark.parametrize("form,opset_import", [("legacy", True), ("legacy_no_hidden", True),
                                               ("cross_only", True), ("legacy", False)])
def test_onnx_round_trip_runs_in_ort(tmp_path, form, opset_import):
    """ig.save keeps the subgraph input names ORT checks (input_ids and
    encoder_attention_mask in the decoder shadow / repeat names of the main graph and the
    encoder)."""
    feeds = _feeds("attention_mask")
    model = _move_initializers(_model("attention_mask", feeds, form,
                                      opset_import=opset_import))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    ig.save(ig.load(model), str(tmp_path / "t5.onnx"))
    written = onnx.load(str(tmp_path / "t5.onnx"))
    node = written.graph.node[0]
    dec = next(a.g for a in node.attribute if a.name == "decoder")
    enc = next(a.g for a in node.attribute if a.name == "encoder")
    assert [i.name for i in dec.input][:2] == ["input_ids", "encoder_attention_mask"]
    assert [i.name for i in enc.input][:2] == ["encoder_input_ids", "encoder_attention_mask"]
    got = ort.InferenceSession(str(tmp_path / "t5.onnx")).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_greedy_search_t5_refused_as_ort_does():
    """ORT's CPU GreedySearch takes model_type 0 only; itergraph refuses it by node name."""
    feeds = {"input_ids": IDS, "max_length": np.array([6], I32)}
    model = t5_model("GreedySearch", ["max_length"])
    with pytest.raises(Exception, match="model_type"):
        ort.InferenceSession(model.SerializeToString())
    with pytest.raises(ig.UnsupportedError, match="GreedySearch_t5.*model_type 1"):
        ig.load(model).run(feeds)


def test_legacy_max_length_2_refused():
    feeds = _feeds("plain")
    feeds["max_length"] = np.array([2], I32)
    with pytest.raises(ig.UnsupportedError, match="max_length 2"):
        ig.load(_model("plain", feeds)).run(feeds)


def test_cross_only_max_length_2_matches_ort():
    feeds = _feeds("plain")
    feeds["max_length"] = np.array([2], I32)
    _check(_model("plain", feeds, "cross_only"), feeds)


def test_misnamed_decoder_input_refused():
    feeds = _feeds("plain")
    model = _model("plain", feeds)
    dec = next(a.g for a in model.graph.node[0].attribute if a.name == "decoder")
    dec.input[1].name = "mask"
    for n in dec.node:
        for i, x in enumerate(n.input):
            if x == "encoder_attention_mask":
                n.input[i] = "mask"
    with pytest.raises(ig.UnsupportedError, match="T5 contract"):
        ig.load(model).run(feeds)


@pytest.mark.parametrize("case", ["plain", "attention_mask", "repetition"])
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_fused_t5_beam_matches_ort(case, form, backend):
    """Encoder and decoder of ORT's fused ops, as its T5 optimizer writes them:
    SimplifiedLayerNormalization, MultiHeadAttention (self with past / present, cross on the
    cross keys and values in heads with the key padding mask),
    SkipSimplifiedLayerNormalization."""
    feeds = _feeds(case)
    model = _model(case, feeds, form, fused=True)
    assert "MultiHeadAttention" in {n.op_type for a in model.graph.node[0].attribute
                                    if a.type == onnx.AttributeProto.GRAPH for n in a.g.node}
    _check(model, feeds, backend)


def test_fused_t5_round_trip_runs_in_ort(tmp_path):
    feeds = _feeds("attention_mask")
    model = _move_initializers(_model("attention_mask", feeds, "legacy", fused=True))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    ig.save(ig.load(model), str(tmp_path / "t5f.onnx"))
    got = ort.InferenceSession(str(tmp_path / "t5f.onnx")).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.parametrize("case", ["plain", "eos_19"])
@pytest.mark.parametrize("form", ["legacy", "cross_only"])
def test_t5_scores_output_matches_ort(case, form):
    """The optional scores output, [max_length - 1, batch, num_beams, vocab] for T5 (its
    sequences start with the decoder start token)."""
    feeds = _feeds(case)
    model = _model(case, feeds, form)
    model.graph.node[0].output.append("scores")
    model.graph.output.append(
        onnx.helper.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, None))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ig.load(model).run(feeds)
    np.testing.assert_array_equal(got["sequences"], want[0])
    assert got["scores"].shape == want[2].shape == (feeds["max_length"][0] - 1, 3, 3, VOCAB)
    np.testing.assert_allclose(got["scores"], want[2], rtol=1e-5, atol=1e-5)
