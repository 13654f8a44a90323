"""ONNX Runtime's GreedySearch / BeamSearch (decoder-only, GPT) on the JAX backend
(`backends.jax.generation`): lowered to a first step and one XLA loop whose K/V caches and
attention mask are fixed-capacity buffers (ONNX Runtime's Attention reading them by
`loops.padded_attention`), giving ONNX Runtime's tokens exactly; what the lowering or the
buffers do not cover runs the node's NumPy kernel, and explain says so, before and after a
run alike."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
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
        # only the pad to max_length after the loop, shaped by how many tokens it made
        assert {r.element.split()[0] for r in records if not r.compiles} <= \
            {"ConstantOfShape"}, records
    (loop,) = [r for r in cg.explain() if "GreedySearch_0/loop" in r.element
               and "fixed-capacity" in r.reason]
    assert "past_0" in loop.reason and "mask" in loop.reason


def test_greedy_search_stopping_at_eos_and_run_again():
    model = _model("GreedySearch", True, eos_token_id=3)
    g = read(model)
    cg = jb.compile_graph(g)
    sess = ort.InferenceSession(model.SerializeToString())
    for max_length in (9, 16, 9):
        f = _feeds(True, max_length)
        np.testing.assert_array_equal(next(iter(cg.run(f).values())), sess.run(None, f)[0])
    assert all(r.compiles for r in cg.explain() if "loop" in r.element)


def test_beam_search_runs_its_numpy_kernel_and_explain_says_why():
    """BeamSearch's lowered body pads hypotheses to max_length from the valid length of its
    grown sequences, which XLA would need when compiling: the node keeps its kernel."""
    for mask in (True, False):
        got, want, cg, static = _run(_model("BeamSearch", mask), _feeds(mask, 9, beams=3))
        np.testing.assert_array_equal(got, want)
        for records in (static, cg.explain()):
            rec = _record(records, "BeamSearch")
            assert not rec.compiles and "NumPy kernel" in rec.reason \
                and "valid length" in rec.reason, rec


def test_greedy_search_the_buffers_cannot_serve_falls_back_to_its_kernel():
    """no_repeat_ngram_size reads n-gram windows by a Range over the sequence's length."""
    model = _model("GreedySearch", True, no_repeat_ngram_size=2)
    got, want, cg, static = _run(model, _feeds(True, 10))
    np.testing.assert_array_equal(got, want)
    for records in (static, cg.explain()):
        rec = _record(records, "GreedySearch")
        assert not rec.compiles and "NumPy kernel" in rec.reason and "Range" in rec.reason


def test_a_node_the_lowering_refuses_runs_its_kernel():
    """A GreedySearch whose decoder is off the GPT contract (lower-generation refuses it)."""
    model = _model("GreedySearch", True)
    attr = next(a for a in model.graph.node[0].attribute if a.name == "decoder")
    attr.g.input[1].name, attr.g.input[2].name = attr.g.input[2].name, attr.g.input[1].name
    g = read(model)
    rec = _record(analyze(g), "GreedySearch")
    assert not rec.compiles and "NumPy kernel" in rec.reason and "cannot lower" in rec.reason
