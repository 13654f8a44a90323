"""The form the JAX backend compiles GreedySearch, BeamSearch and Sampling to: where the
decoder is provably causal and position-wise (`passes.decoder_positions`), the prompt is read
through the loop's own decoder step, a token a step, so the program holds one copy of the
decoder (traced and compiled once) and of the logits processing; ONNX Runtime's tokens.
Where it is not (a decoder that mixes positions, an init_decoder), the first step stays a
call on the whole prompt, and the tokens are ORT's too."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from itergraph.backends import jax as jb
from itergraph.backends.jax import generation
from itergraph.backends.numpy import compile_graph as numpy_compile
from itergraph.backends.numpy import run_plan
from itergraph.frontends.onnx import read
from itergraph.passes import lower_generation
from itergraph.passes.decoder_positions import causal_decoder
from itergraph.passes.lower_generation import lower_generation_stepwise

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generation_models as gm  # noqa: E402
import models  # noqa: E402

ort = pytest.importorskip("onnxruntime")
VOCAB, I32 = 24, np.int32
LAYERS = 2
BEAM = {"min_length": np.array([1], I32), "num_beams": np.array([3], I32),
        "num_return_sequences": np.array([2], I32),
        "length_penalty": np.array([1.0], np.float32)}


def _feeds(op: str) -> dict:
    ids = np.array([[5, 7, 3, 9, 2], [0, 0, 5, 2, 8]], I32)  # row 1 padded on the left
    f = {"input_ids": ids, "max_length": np.array([11], I32)}
    if op == "BeamSearch":
        f.update(BEAM)
    f["attention_mask"] = (ids != 0).astype(I32)
    if op == "Sampling":
        f["seed"] = np.array([3], I32)
    return f


def _model(op: str, feeds: dict, dec=None) -> onnx.ModelProto:
    dec = dec or gm.fused_decoder(VOCAB, 16, 2, layers=LAYERS, seed=5)
    attrs = {"top_p": 1e-6} if op == "Sampling" else {}  # one candidate: ORT's tokens
    return gm.search_model(op, dec, list(feeds), eos_token_id=VOCAB + 5, **attrs)


def _count(graph, op_type: str) -> int:
    return sum(n.op_type == op_type for _, n in graph.walk())


@pytest.fixture
def beam_stepwise(monkeypatch):
    """BeamSearch read stepwise too (off by default: see `STEPWISE_OPS`)."""
    monkeypatch.setattr(lower_generation, "STEPWISE_OPS",
                        lower_generation.STEPWISE_OPS | {"BeamSearch"})


def test_beam_search_keeps_its_prompt_step_by_default():
    feeds = _feeds("BeamSearch")
    model = _model("BeamSearch", feeds)
    g = read(model)
    lower_generation_stepwise(g)
    assert _count(g, "Attention") == 2 * LAYERS


@pytest.mark.parametrize("op", ["GreedySearch", "BeamSearch", "Sampling"])
def test_compiled_search_holds_one_decoder(op, beam_stepwise):
    feeds = _feeds(op)
    model = _model(op, feeds)
    cg = jb.compile_graph(read(model))
    # the graph JAX traces: one Attention per layer, in the loop's step (none on the prompt)
    assert _count(cg.graph, "Attention") == LAYERS
    assert not any("/first/" in v.name for _, n in cg.graph.walk() for v in n.outputs if v)
    got = cg.run(feeds)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_array_equal(got["sequences"], want[0])
    assert any("lax.while_loop" in r.reason for r in cg.explain())


def test_decoder_mixing_positions_keeps_its_prompt_step():
    """A decoder that averages its whole present (so a prompt position reads later ones) is
    not causal: the prompt runs as one call before the loop, two copies of the decoder; read
    a token a step, its tokens would differ from ORT's."""
    feeds = {"input_ids": np.array([[3, 4, 5], [6, 7, 8]], I32),
             "max_length": np.array([8], I32)}
    model = models.generation_model("GreedySearch", ["max_length"])
    g = read(model)
    assert not causal_decoder(g.nodes[0].attrs["decoder"])
    lower_generation_stepwise(g)
    assert _count(g, "ReduceMean") == 2
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_array_equal(run_plan(numpy_compile(g), feeds)["sequences"], want[0])


def _attention(model: onnx.ModelProto):
    dec = next(a for a in model.graph.node[0].attribute if a.name == "decoder").g
    return next(n for n in dec.node if n.op_type == "Attention")


def test_what_is_not_proven_causal():
    feeds = _feeds("GreedySearch")
    model = _model("GreedySearch", feeds)
    assert causal_decoder(read(model).nodes[0].attrs["decoder"])
    att = _attention(model)
    next(a for a in att.attribute if a.name == "unidirectional").i = 0  # attends ahead
    assert not causal_decoder(read(model).nodes[0].attrs["decoder"])
    # an init_decoder runs the prompt in ONNX Runtime: kept as the first step
    init = _model("GreedySearch", feeds)
    node = init.graph.node[0]
    node.attribute.append(onnx.helper.make_attribute("init_decoder", gm.fused_decoder(
        VOCAB, 16, 2, layers=LAYERS, seed=5)))
    g = read(init)
    lower_generation_stepwise(g)
    assert _count(g, "Attention") == 2 * LAYERS


@pytest.mark.parametrize("op", ["GreedySearch", "BeamSearch"])
def test_stepwise_logits_processing_gives_ort_tokens(op, beam_stepwise):
    """Every logits processor, the first-step-only prefix mask included (a condition of the
    step, not of the graph, once the prompt runs through the loop), on NumPy."""
    feeds = _feeds(op)
    feeds.update(min_length=np.array([9], I32), repetition_penalty=np.array([1.7], np.float32),
                 vocab_mask=np.ones(VOCAB, I32), prefix_vocab_mask=np.ones((2, VOCAB), I32))
    feeds["vocab_mask"][[4, 11]] = 0
    feeds["prefix_vocab_mask"][:, :12] = 0
    order = ["input_ids", "max_length", "min_length", *([k for k in BEAM if k != "min_length"]
             if op == "BeamSearch" else []), "repetition_penalty", "vocab_mask",
             "prefix_vocab_mask", "attention_mask"]
    feeds = {k: feeds[k] for k in order}
    model = gm.search_model(op, gm.fused_decoder(VOCAB, 16, 2, layers=LAYERS, seed=5),
                            list(feeds), eos_token_id=2, no_repeat_ngram_size=2)
    if op == "BeamSearch":
        model.graph.node[0].output.append("sequences_scores")
        model.graph.output.append(onnx.helper.make_tensor_value_info(
            "sequences_scores", onnx.TensorProto.FLOAT, None))
    g = read(model)
    lower_generation_stepwise(g)
    assert _count(g, "Attention") == LAYERS
    got = run_plan(numpy_compile(g), feeds)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_array_equal(got["sequences"], want[0])
    if op == "BeamSearch":
        np.testing.assert_allclose(got["sequences_scores"], want[1], rtol=1e-5, atol=1e-5)


def test_explain_says_how_the_search_was_lowered():
    feeds = _feeds("GreedySearch")
    (rec,) = [r for r in jb.compile_graph(read(_model("GreedySearch", feeds))).explain()
              if "GreedySearch node" in r.element]
    assert rec.compiles and "the prompt read through its decoder step" in rec.reason
    model = models.generation_model("GreedySearch", ["max_length"])
    g = read(model)
    lowered, records = generation.lowered(g, lambda graph, node: [])
    assert "the first step on the prompt" in records[0].reason
