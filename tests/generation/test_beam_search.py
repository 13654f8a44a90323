"""ONNX Runtime's com.microsoft.BeamSearch run by itergraph: ORT is the oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parent))
from models import VOCAB, generation_model  # noqa: E402

ort = pytest.importorskip("onnxruntime")

I32, F32 = np.int32, np.float32
IDS = np.array([[3, 4, 5], [6, 7, 8], [9, 2, 11]], I32)
rng = np.random.default_rng(5)
VMASK = (rng.random(VOCAB) > 0.2).astype(I32)
PMASK = (rng.random((3, VOCAB)) > 0.5).astype(I32)
# ORT needs max_length .. length_penalty given (it reads "max_length is required" otherwise)
BASE = {"max_length": 10, "min_length": 1, "num_beams": 3, "num_return_sequences": 1,
        "length_penalty": 1.0}
CASES = {
    "plain": {},
    "return_2": {"num_return_sequences": 2},
    "return_4_of_4": {"num_beams": 4, "num_return_sequences": 4},
    "one_beam": {"num_beams": 1},
    "min_length": {"min_length": 9, "max_length": 12},
    "length_penalty": {"length_penalty": 0.3, "num_return_sequences": 3},
    "repetition": {"repetition_penalty": 1.6},
    "vocab_mask": {"vocab_mask": VMASK},
    "prefix_mask": {"prefix_vocab_mask": PMASK},
    "left_pad": {"attention_mask": np.array([[0, 1, 1], [1, 1, 1], [0, 0, 1]], I32)},
    "early_stopping": {"num_return_sequences": 2},
    "eos_5": {"num_return_sequences": 2},
    "no_repeat_2": {"max_length": 14, "num_return_sequences": 2},
}
ATTRS = {"early_stopping": {"early_stopping": 1}, "eos_5": {"eos_token_id": 5},
         "no_repeat_2": {"no_repeat_ngram_size": 2}}


def _feeds(case):
    f = {"input_ids": IDS.copy()}
    if case == "left_pad":
        f["input_ids"][0, 0] = f["input_ids"][2, :2] = 0
    for k, v in {**BASE, **CASES[case]}.items():
        f[k] = np.array([v], F32 if k.endswith("penalty") else I32) if np.isscalar(v) else v
    return f


def _model(case, feeds):
    return generation_model("BeamSearch", [k for k in feeds if k != "input_ids"],
                            **ATTRS.get(case, {}))


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_beam_matches_ort(case, backend):
    feeds = _feeds(case)
    model = _model(case, feeds)
    seqs, scores = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    m = ig.load(model)
    got = m.run(feeds, backend=backend)
    np.testing.assert_array_equal(got["sequences"], seqs)
    np.testing.assert_allclose(got["sequences_scores"], scores, rtol=1e-5, atol=1e-6)
    if backend == "jax":  # the node ran as its lowering, compiled (not its NumPy kernel)
        assert m.explanation("jax")["summary"] == "everything compiles with XLA"


def test_beam_onnx_round_trip_runs_in_ort(tmp_path):
    feeds = _feeds("return_2")
    model = _model("return_2", feeds)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    ig.save(ig.load(model), str(tmp_path / "b.onnx"))
    got = ort.InferenceSession(str(tmp_path / "b.onnx")).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def _with_scores(model):
    model.graph.node[0].output.append("scores")
    model.graph.output.append(
        onnx.helper.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, None))
    return model


@pytest.mark.parametrize("case", ["plain", "return_2", "prefix_mask", "left_pad"])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_scores_output_matches_ort(case, backend):
    """BeamSearch's optional third output: every step's processed log-probabilities plus the
    beam scores, [max_length - prompt length, batch, num_beams, vocab]."""
    feeds = _feeds(case)
    model = _with_scores(_model(case, feeds))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ig.load(model).run(feeds, backend=backend)
    np.testing.assert_array_equal(got["sequences"], want[0])
    assert got["scores"].shape == want[2].shape == (BASE["max_length"] - IDS.shape[1], 3, 3,
                                                    VOCAB)
    np.testing.assert_allclose(got["scores"], want[2], rtol=1e-5, atol=1e-5)
