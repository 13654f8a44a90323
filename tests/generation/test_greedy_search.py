"""ONNX Runtime's com.microsoft.GreedySearch run by itergraph: ORT is the oracle."""

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

I32 = np.int32
IDS = np.array([[3, 4, 5], [6, 7, 8]], I32)
rng = np.random.default_rng(3)
VMASK = (rng.random(VOCAB) > 0.2).astype(I32)
PMASK = (rng.random((2, VOCAB)) > 0.5).astype(I32)
CASES = {
    "plain": {"max_length": 10},
    "min_length": {"max_length": 12, "min_length": 9},
    "repetition": {"max_length": 12, "repetition_penalty": 1.7},
    "vocab_mask": {"max_length": 10, "vocab_mask": VMASK},
    "prefix_mask": {"max_length": 10, "prefix_vocab_mask": PMASK},
    "left_pad": {"max_length": 10, "attention_mask": np.array([[0, 1, 1], [1, 1, 1]], I32)},
    # with eos 20, row 1 ends at its 5th token unless min_length holds eos back
    "eos_20": {"max_length": 12},
    "min_length_eos_20": {"max_length": 12, "min_length": 9},
    "all_processors": {"max_length": 12, "min_length": 8, "repetition_penalty": 1.4,
                       "vocab_mask": VMASK, "prefix_vocab_mask": PMASK},
    "no_repeat_1": {"max_length": 10},
    "no_repeat_2": {"max_length": 14},
    "no_repeat_3_repetition": {"max_length": 14, "repetition_penalty": 1.3},
}
ATTRS = {"eos_20": {"eos_token_id": 20}, "min_length_eos_20": {"eos_token_id": 20},
         "all_processors": {"eos_token_id": 20, "no_repeat_ngram_size": 2},
         "no_repeat_1": {"no_repeat_ngram_size": 1, "eos_token_id": 23},
         "no_repeat_2": {"no_repeat_ngram_size": 2},
         "no_repeat_3_repetition": {"no_repeat_ngram_size": 3}}


def _feeds(case):
    f = {"input_ids": IDS.copy()}
    if case == "left_pad":
        f["input_ids"][0, 0] = 0
    for k, v in CASES[case].items():
        f[k] = np.array([v], np.float32 if k == "repetition_penalty" else I32) \
            if np.isscalar(v) else v
    return f


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_greedy_matches_ort(case, backend):
    feeds = _feeds(case)
    model = generation_model("GreedySearch", [k for k in feeds if k != "input_ids"],
                             **ATTRS.get(case, {}))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    got = ig.load(model).run(feeds, backend=backend)["sequences"]
    np.testing.assert_array_equal(got, want)


def test_all_rows_ending_early_leave_ort_tail_unwritten():
    """When every row has met eos before max_length, ORT's GreedySearch returns its output
    buffer unwritten past that length (values vary run to run); itergraph fills it with
    pad_token_id. The written part is equal."""
    feeds = {"input_ids": IDS, "max_length": np.array([12], I32)}
    model = generation_model("GreedySearch", ["max_length"], eos_token_id=1,
                             no_repeat_ngram_size=1)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    got = ig.load(model).run(feeds)["sequences"]
    np.testing.assert_array_equal(got[:, :7], want[:, :7])  # both rows end by length 7
    assert (got[:, 7:] == 0).all()


def test_min_length_changes_ort_tokens():
    """The min_length case is not vacuous: ORT's tokens differ without it."""
    runs = []
    for case in ("eos_20", "min_length_eos_20"):
        feeds = _feeds(case)
        model = generation_model("GreedySearch", [k for k in feeds if k != "input_ids"],
                                 eos_token_id=20)
        runs.append(ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0])
    assert not np.array_equal(*runs)


def test_no_opset_import_loads():
    feeds = _feeds("plain")
    model = generation_model("GreedySearch", ["max_length"], opset_import=False)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_array_equal(ig.load(model).run(feeds)["sequences"], want)


def test_onnx_round_trip_runs_in_ort(tmp_path):
    feeds = _feeds("min_length")
    model = generation_model("GreedySearch", ["max_length", "min_length"])
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    ig.save(ig.load(model), str(tmp_path / "g.onnx"))
    got = ort.InferenceSession(str(tmp_path / "g.onnx")).run(None, feeds)[0]
    np.testing.assert_array_equal(got, want)


def test_encoder_decoder_refused_with_node_name():
    model = generation_model("GreedySearch", ["max_length"], model_type=1)
    model.graph.node[0].name = "gen"
    with pytest.raises(ig.Error, match="gen"):
        ig.load(model).run(_feeds("plain"))


def _move_initializers(model):
    """What convert_generation does for GPT-2: the decoder's initializers in the main graph,
    read by the decoder as outer values."""
    dec = next(a.g for a in model.graph.node[0].attribute if a.name == "decoder")
    model.graph.initializer.extend(dec.initializer)
    del dec.initializer[:]
    return model


@pytest.mark.parametrize("op", ["GreedySearch", "BeamSearch"])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_decoder_reading_main_graph_initializers(op, backend):
    feeds = _feeds("min_length")
    if op == "BeamSearch":
        feeds.update(num_beams=np.array([2], I32), num_return_sequences=np.array([1], I32),
                     length_penalty=np.array([1.0], np.float32))
    model = _move_initializers(generation_model(op, [k for k in feeds if k != "input_ids"]))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ig.load(model).run(feeds, backend=backend)
    np.testing.assert_array_equal(got["sequences"], want[0])


def test_round_trip_with_main_graph_initializers_and_no_opset_import(tmp_path):
    feeds = _feeds("left_pad")
    model = _move_initializers(generation_model(
        "GreedySearch", [k for k in feeds if k != "input_ids"], opset_import=False))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    ig.save(ig.load(model), str(tmp_path / "g.onnx"))
    written = onnx.load(str(tmp_path / "g.onnx"))
    dec = next(a.g for a in written.graph.node[0].attribute if a.name == "decoder")
    assert [i.name for i in dec.input][:3] == ["input_ids", "position_ids", "attention_mask"]
    got = ort.InferenceSession(str(tmp_path / "g.onnx")).run(None, feeds)[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["GreedySearch", "BeamSearch", "Sampling"])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_init_decoder_runs_the_first_step(op, backend):
    """convert_generation writes an ``init_decoder`` for GPT-2 that ORT runs on the prompt
    only; here it has other weights than the decoder, so the tokens tell which ran when."""
    feeds = _feeds("left_pad")
    if op == "BeamSearch":
        feeds.update(min_length=np.array([1], I32), num_beams=np.array([3], I32),
                     num_return_sequences=np.array([2], I32),
                     length_penalty=np.array([1.0], np.float32))
    attrs = {"top_p": 1e-6} if op == "Sampling" else {}
    names = [k for k in feeds if k != "input_ids"]
    model = generation_model(op, names, init_seed=4, **attrs)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    plain = ort.InferenceSession(generation_model(op, names, **attrs).SerializeToString()) \
        .run(None, feeds)
    assert not np.array_equal(want[0], plain[0])
    got = ig.load(model).run(feeds, backend=backend)
    np.testing.assert_array_equal(got["sequences"], want[0])
    if op == "BeamSearch":
        np.testing.assert_allclose(got["sequences_scores"], want[1], rtol=1e-5, atol=1e-6)
