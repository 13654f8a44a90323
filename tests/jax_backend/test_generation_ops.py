"""ONNX Runtime's GreedySearch / BeamSearch (decoder-only, GPT) on the JAX backend
(`backends.jax.generation`): lowered to a first step and one XLA loop whose K/V caches and
attention mask are fixed-capacity buffers (ONNX Runtime's Attention reading them by
`loops.padded_attention`) and whose sequences are a [rows, max_length] buffer written at the
current length, giving ONNX Runtime's tokens and beam scores exactly; what the lowering does
not cover runs the node's NumPy kernel, and explain says so, before and after a run alike."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from itergraph.backends import jax as jb
from itergraph.backends.jax.analysis import analyze
from itergraph.frontends.onnx import read

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generation_models as gm  # noqa: E402

ort = pytest.importorskip("onnxruntime")
VOCAB = 24


def _model(op: str, mask: bool, **attrs):
    beam = ["min_length", "num_beams", "num_return_sequences", "length_penalty"]
    inputs = ["input_ids", "max_length"] + (beam if op == "BeamSearch" else []) + \
        (["attention_mask"] if mask else [])
    dec = gm.fused_decoder(VOCAB, 16, 2, layers=2, seed=5)
    return gm.search_model(op, dec, inputs, **attrs)


def _feeds(mask: bool, max_length: int, beams: int = 0) -> dict:
    ids = np.array([[0, 0, 7, 3, 9], [4, 11, 5, 2, 8]], np.int32)
    f = {"input_ids": ids, "max_length": np.array([max_length], np.int32)}
    if beams:
        f["min_length"] = np.array([1], np.int32)
        f["num_beams"] = np.array([beams], np.int32)
        f["num_return_sequences"] = np.array([1], np.int32)
        f["length_penalty"] = np.array([1.0], np.float32)
    if mask:
        f["attention_mask"] = (ids != 0).astype(np.int32)
    return f


def _run(model, feeds):
    """(tokens of the JAX backend, ONNX Runtime's, the compiled graph, the static records)."""
    g = read(model)
    cg = jb.compile_graph(g)
    static = analyze(g)
    got = next(iter(cg.run(feeds).values()))
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    said = all(r.compiles for r in static)
    ran = all(r.compiles for r in cg.explain())
    assert said == ran, (static, cg.explain())  # explain told the truth
    return got, want, cg, static


def _record(records, op: str):
    (rec,) = [r for r in records if op in r.element]
    return rec


@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("max_length", [6, 7, 12])
def test_greedy_search_is_one_xla_loop_with_ort_tokens(mask, max_length):
    model = _model("GreedySearch", mask, eos_token_id=VOCAB + 5)  # no eos: every step runs
    got, want, cg, static = _run(model, _feeds(mask, max_length))
    np.testing.assert_array_equal(got, want)
    for records in (static, cg.explain()):
        rec = _record(records, "GreedySearch node")
        assert rec.compiles and "lower-generation" in rec.reason
    _compiled(cg, static, "GreedySearch")


def test_greedy_search_stopping_at_eos_and_run_again():
    model = _model("GreedySearch", True, eos_token_id=3)
    g = read(model)
    cg = jb.compile_graph(g)
    sess = ort.InferenceSession(model.SerializeToString())
    for max_length in (9, 16, 9):
        f = _feeds(True, max_length)
        np.testing.assert_array_equal(next(iter(cg.run(f).values())), sess.run(None, f)[0])
    assert all(r.compiles for r in cg.explain() if "loop" in r.element)


def _with_outputs(model, *names):
    """`model` (one generation node) with the further outputs `names` of its node."""
    node = model.graph.node[0]
    for n in names:
        node.output.append(n)
        model.graph.output.append(onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT,
                                                                     None))
    return model


def _beam(mask: bool, max_length: int, beams: int, returned: int, penalty: float,
          extra: dict | None = None, **attrs):
    inputs = ["repetition_penalty"] if extra and "repetition_penalty" in extra else []
    beam = ["min_length", "num_beams", "num_return_sequences", "length_penalty"]
    model = gm.search_model("BeamSearch", gm.fused_decoder(VOCAB, 16, 2, layers=2, seed=5),
                            ["input_ids", "max_length", *beam, *inputs] +
                            (["attention_mask"] if mask else []), **attrs)
    f = _feeds(mask, max_length, beams)
    f["num_return_sequences"] = np.array([returned], np.int32)
    f["length_penalty"] = np.array([penalty], np.float32)
    f.update(extra or {})
    return _with_outputs(model, "sequences_scores"), f


def _compiled(cg, static, op: str):
    """The node was lowered and everything ran compiled, its loop with the caches, the
    mask as fixed-capacity buffers; explain said so before the run too."""
    for records in (static, cg.explain()):
        rec = _record(records, f"{op} node")
        assert rec.compiles and "lower-generation" in rec.reason, rec
        assert all(r.compiles for r in records), [r for r in records if not r.compiles]
    (loop,) = [r for r in cg.explain() if f"{op}_0/loop" in r.element
               and "fixed-capacity" in r.reason]
    assert "past_0" in loop.reason and "mask" in loop.reason
    assert not any("seqs" in r.reason for r in cg.explain())  # a fixed buffer, not grown


BEAM_CASES = {
    # name: (mask, max_length, num_beams, num_return_sequences, length_penalty, extra, attrs)
    "2beams": (True, 9, 2, 1, 1.0, None, {}),
    "3beams-no-mask": (False, 9, 3, 1, 1.0, None, {}),
    "4beams-all-returned": (True, 12, 4, 4, 1.0, None, {}),
    "3beams-penalty-2-eos-mid-way": (True, 14, 3, 2, 2.0, None, {"eos_token_id": 6}),
    "4beams-early-stopping-eos-mid-way": (True, 14, 4, 3, 1.0, None,
                                          {"eos_token_id": 6, "early_stopping": 1}),
    "4beams-eos-mid-way": (False, 14, 4, 4, 1.0, None, {"eos_token_id": 6}),
    "1beam": (True, 10, 1, 1, 1.0, None, {}),
    "min-length-repetition-penalty": (True, 12, 3, 2, 1.0,
                                      {"min_length": np.array([9], np.int32),
                                       "repetition_penalty": np.array([1.5], np.float32)},
                                      {"eos_token_id": 6}),
    "no-repeat-ngram-2": (True, 12, 3, 3, 1.0, None,
                          {"eos_token_id": 6, "no_repeat_ngram_size": 2}),
    "no-repeat-ngram-1": (False, 9, 2, 2, 1.0, None, {"no_repeat_ngram_size": 1}),
}


#: further runs of a case's compiled program, each feeds changed so (a max_length is a
#: program of its own; length_penalty is read at run time, so the same program serves)
RUN_AGAIN = {"2beams": [{"max_length": np.array([7], np.int32)}, {}],
             "4beams-all-returned": [{"length_penalty": np.array([0.6], np.float32)}]}


@pytest.mark.parametrize("case", list(BEAM_CASES))
def test_beam_search_is_one_xla_loop_with_ort_tokens_and_scores(case):
    mask, max_length, beams, returned, penalty, extra, attrs = BEAM_CASES[case]
    model, feeds = _beam(mask, max_length, beams, returned, penalty, extra, **attrs)
    g = read(model)
    cg = jb.compile_graph(g)
    static = analyze(g)
    sess = ort.InferenceSession(model.SerializeToString())
    again = [{**feeds, **change} for change in RUN_AGAIN.get(case, [])]
    for f in (feeds, *again):
        got = cg.run(f)
        want = sess.run(None, f)
        np.testing.assert_array_equal(got["sequences"], want[0])
        np.testing.assert_allclose(got["sequences_scores"], want[1], rtol=1e-5, atol=1e-5)
    _compiled(cg, static, "BeamSearch")


def test_beam_search_scores_output_compiled():
    """The optional per-step scores too: a buffer of the loop written at each step."""
    model, feeds = _beam(True, 10, 3, 2, 1.0)
    _with_outputs(model, "scores")
    g = read(model)
    cg = jb.compile_graph(g)
    static = analyze(g)
    got = cg.run(feeds)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_array_equal(got["sequences"], want[0])
    np.testing.assert_allclose(got["sequences_scores"], want[1], rtol=1e-5, atol=1e-5)
    assert got["scores"].shape == want[2].shape == (10 - 5, 2, 3, VOCAB)
    np.testing.assert_allclose(got["scores"], want[2], rtol=1e-5, atol=1e-5)
    _compiled(cg, static, "BeamSearch")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_greedy_search_with_no_repeat_ngram_size_is_one_xla_loop(n):
    """The n-gram windows are read from the fixed-size sequence buffer."""
    model = _model("GreedySearch", True, no_repeat_ngram_size=n)
    got, want, cg, static = _run(model, _feeds(True, 12))
    np.testing.assert_array_equal(got, want)
    _compiled(cg, static, "GreedySearch")


def test_a_node_the_lowering_refuses_runs_its_kernel():
    """A GreedySearch whose decoder is off the GPT contract (lower-generation refuses it)."""
    model = _model("GreedySearch", True)
    attr = next(a for a in model.graph.node[0].attribute if a.name == "decoder")
    attr.g.input[1].name, attr.g.input[2].name = attr.g.input[2].name, attr.g.input[1].name
    g = read(model)
    rec = _record(analyze(g), "GreedySearch")
    assert not rec.compiles and "NumPy kernel" in rec.reason and "cannot lower" in rec.reason
