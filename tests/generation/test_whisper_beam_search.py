"""ONNX Runtime's com.microsoft.BeamSearch with model_type 2 (Whisper: float audio features,
an encoder holding the first decoder step, a forced decoder prompt) run by itergraph: ORT is
the oracle for sequences, sequences_scores and scores."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parent))
from t5_models import VOCAB  # noqa: E402
from whisper_models import FEATURES, FRAMES, whisper_model  # noqa: E402

ort = pytest.importorskip("onnxruntime")

I32, F32 = np.int32, np.float32
rng = np.random.default_rng(17)
FEATS = rng.standard_normal((3, FEATURES, FRAMES)).astype(F32)
PROMPT = np.array([[2, 5, 6], [2, 5, 7], [2, 9, 6]], I32)
VMASK = (rng.random(VOCAB) > 0.2).astype(I32)
PMASK = (rng.random((3, VOCAB)) > 0.5).astype(I32)
BASE = {"max_length": 10, "min_length": 1, "num_beams": 3, "num_return_sequences": 2,
        "length_penalty": 1.0, "repetition_penalty": 1.0}
CASES = {
    "plain": ({}, {}),
    "prompt": ({"decoder_input_ids": PROMPT}, {}),
    "prompt_max_5": ({"decoder_input_ids": PROMPT, "max_length": 5}, {}),
    "return_3": ({"num_return_sequences": 3}, {}),
    "one_beam": ({"num_beams": 1, "num_return_sequences": 1}, {}),
    "min_length": ({"min_length": 9, "max_length": 12}, {}),
    "length_penalty": ({"length_penalty": 0.4}, {}),
    "repetition": ({"repetition_penalty": 1.7, "decoder_input_ids": PROMPT}, {}),
    "vocab_mask": ({"vocab_mask": VMASK}, {}),
    "prefix_mask": ({"prefix_vocab_mask": PMASK, "decoder_input_ids": PROMPT}, {}),
    "no_repeat_2": ({"max_length": 12}, {"no_repeat_ngram_size": 2}),
    "early_stopping_eos_11": ({}, {"early_stopping": 1, "eos_token_id": 11}),
    "start_token_7": ({}, {"decoder_start_token_id": 7}),
}


def _feeds(case):
    f = {"input_features": FEATS}
    for k, v in {**BASE, **CASES[case][0]}.items():
        f[k] = np.array([v], F32 if k.endswith("penalty") else I32) if np.isscalar(v) else v
    return f


def _model(case, feeds, **kw):
    return whisper_model([k for k in feeds if k != "input_features"], **CASES[case][1], **kw)


def _check(model, feeds, backend="numpy"):
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ig.load(model).run(feeds, backend=backend)
    np.testing.assert_array_equal(got["sequences"], want[0])
    np.testing.assert_allclose(got["sequences_scores"], want[1], rtol=1e-5, atol=1e-6)
    return want


@pytest.mark.parametrize("case", list(CASES))
def test_whisper_beam_matches_ort(case):
    feeds = _feeds(case)
    _check(_model(case, feeds), feeds)


@pytest.mark.parametrize("case", ["plain", "prompt"])
def test_whisper_beam_matches_ort_on_jax(case):
    feeds = _feeds(case)
    _check(_model(case, feeds), feeds, backend="jax")


def test_prompt_leads_the_sequences():
    feeds = _feeds("prompt")
    seqs = _check(_model("prompt", feeds), feeds)[0]
    np.testing.assert_array_equal(seqs[:, :, :3], np.repeat(PROMPT[:, None], 2, axis=1))


def test_whisper_scores_output_matches_ort():
    feeds = _feeds("prompt")
    model = _model("prompt", feeds)
    model.graph.node[0].output.append("scores")
    model.graph.output.append(
        onnx.helper.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, None))
    want = _check(model, feeds)
    got = ig.load(model).run(feeds)["scores"]
    assert got.shape == want[2].shape == (10 - 3, 3, 3, VOCAB)
    np.testing.assert_allclose(got, want[2], rtol=1e-5, atol=1e-5)


def test_onnx_round_trip_runs_in_ort(tmp_path):
    feeds = _feeds("prompt")
    model = _model("prompt", feeds)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    ig.save(ig.load(model), str(tmp_path / "w.onnx"))
    got = ort.InferenceSession(str(tmp_path / "w.onnx")).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_decoder_reading_hidden_states_refused():
    """ORT 1.32 feeds a Whisper decoder's encoder_hidden_states a buffer it does not fill
    (its tokens vary from run to run): nothing to match, so itergraph refuses by name."""
    feeds = _feeds("plain")
    with pytest.raises(ig.UnsupportedError, match="BeamSearch_whisper.*encoder_hidden_states"):
        ig.load(_model("plain", feeds, hidden=True)).run(feeds)


def test_prompt_too_long_for_max_length_refused():
    feeds = _feeds("prompt")
    feeds["max_length"] = np.array([4], I32)
    with pytest.raises(ig.UnsupportedError, match="prompt length 3"):
        ig.load(_model("prompt", feeds)).run(feeds)
