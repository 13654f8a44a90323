"""ONNX Runtime's GreedySearch, BeamSearch and Sampling compiled on the JAX backend (one XLA
program holding one ``lax.while_loop``), on a decoder of ORT's fused ops: ONNX
Runtime's tokens at the edges of a search (max_length reached, eos on the first step, every
row padded on the left, num_return_sequences), Sampling's forced draws, and its real draws
equal to the NumPy kernel's (the same uniform numbers). Each case also checks that the node
was compiled, not run by its NumPy kernel: explain's records, before and after the run."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from itergraph.backends import jax as jb
from itergraph.backends.jax.analysis import analyze
from itergraph.backends.numpy import compile_graph as numpy_compile
from itergraph.backends.numpy import run_plan
from itergraph.frontends.onnx import read

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generation_models as gm  # noqa: E402

ort = pytest.importorskip("onnxruntime")
VOCAB = 24
I32 = np.int32
BEAM = ["min_length", "num_beams", "num_return_sequences", "length_penalty"]


def _model(op: str, inputs: list[str], **attrs) -> onnx.ModelProto:
    dec = gm.fused_decoder(VOCAB, 16, 2, layers=2, seed=5)
    return gm.search_model(op, dec, ["input_ids", *inputs], **attrs)


def _ids(left_pad: bool) -> np.ndarray:
    ids = np.array([[5, 7, 3, 9, 2], [4, 11, 5, 2, 8], [9, 9, 10, 12, 6]], I32)
    if left_pad:  # every row a different amount of padding (pad_token_id 0)
        ids[0, :2] = 0
        ids[2, :1] = 0
    return ids


def _compiled(model: onnx.ModelProto):
    """The compiled graph and its static records; asserts explain calls the node lowered."""
    g = read(model)
    static = analyze(g)
    return jb.compile_graph(g), static


def _check_compiled(cg, static, op: str) -> None:
    for records in (static, cg.explain()):
        (rec,) = [r for r in records if f"{op} node" in r.element]
        assert rec.compiles and "one XLA loop" in rec.reason, rec
        assert all(r.compiles for r in records), [r for r in records if not r.compiles]
    assert any("lax.while_loop" in r.reason for r in cg.explain())


def _ort(model, feeds):
    return ort.InferenceSession(model.SerializeToString()).run(None, feeds)


def _first_token(model, feeds) -> int:
    """The token ONNX Runtime's greedy search picks first for row 0 (eos out of reach)."""
    return int(_ort(model, feeds)[0][0, feeds["input_ids"].shape[1]])


GREEDY_CASES = {
    # name: (left padding, max_length, eos: None (out of the vocabulary) or "first")
    "max-length-reached": (False, 9, None),
    "one-step": (False, 6, None),
    "left-padded": (True, 10, None),
    "eos-first-step": (True, 10, "first"),
}


@pytest.mark.parametrize("case", list(GREEDY_CASES))
def test_greedy_search_compiled_edges(case):
    left_pad, max_length, eos = GREEDY_CASES[case]
    ids = _ids(left_pad)
    feeds = {"input_ids": ids, "max_length": np.array([max_length], I32),
             "attention_mask": (ids != 0).astype(I32)}
    inputs = ["max_length", "attention_mask"]
    eos_id = VOCAB + 5
    if eos == "first":
        eos_id = _first_token(_model("GreedySearch", inputs, eos_token_id=eos_id), feeds)
    model = _model("GreedySearch", inputs, eos_token_id=eos_id)
    cg, static = _compiled(model)
    got = cg.run(feeds)["sequences"]
    want = _ort(model, feeds)[0]
    if eos == "first":  # ORT leaves the tail of a row done at eos unwritten: compare the rest
        assert got[0, ids.shape[1]] == 0  # eos is padded over
        done = (got[:, ids.shape[1]:] == 0).all(axis=1)
        np.testing.assert_array_equal(got[~done], want[~done])
    else:
        np.testing.assert_array_equal(got, want)
    _check_compiled(cg, static, "GreedySearch")


BEAM_CASES = {
    # name: (left padding, max_length, beams, returned, eos: None or "first")
    "all-returned-max-length": (False, 9, 3, 3, None),
    "left-padded-2-of-4": (True, 11, 4, 2, None),
    "eos-first-step": (True, 10, 3, 2, "first"),
    "one-step": (False, 6, 2, 2, None),
}


@pytest.mark.parametrize("case", list(BEAM_CASES))
def test_beam_search_compiled_edges(case):
    left_pad, max_length, beams, returned, eos = BEAM_CASES[case]
    ids = _ids(left_pad)
    feeds = {"input_ids": ids, "max_length": np.array([max_length], I32),
             "min_length": np.array([1], I32), "num_beams": np.array([beams], I32),
             "num_return_sequences": np.array([returned], I32),
             "length_penalty": np.array([1.0], np.float32),
             "attention_mask": (ids != 0).astype(I32)}
    eos_id = VOCAB + 5
    if eos == "first":
        greedy = {k: feeds[k] for k in ("input_ids", "max_length", "attention_mask")}
        eos_id = _first_token(_model("GreedySearch", list(greedy)[1:], eos_token_id=eos_id),
                              greedy)
    model = _model("BeamSearch", ["max_length", *BEAM, "attention_mask"], eos_token_id=eos_id)
    model.graph.node[0].output.append("sequences_scores")
    model.graph.output.append(onnx.helper.make_tensor_value_info(
        "sequences_scores", onnx.TensorProto.FLOAT, None))
    cg, static = _compiled(model)
    got = cg.run(feeds)
    want = _ort(model, feeds)
    np.testing.assert_array_equal(got["sequences"], want[0])
    np.testing.assert_allclose(got["sequences_scores"], want[1], rtol=1e-5, atol=1e-5)
    _check_compiled(cg, static, "BeamSearch")


SAMPLING_CASES = {
    # name: (left padding, max_length, sampling attributes, further inputs)
    "top-p-tiny": (False, 12, {"top_p": 1e-6}, {}),
    "temperature-left-padded": (True, 10, {"top_p": 1e-6, "temperature": 0.6}, {}),
    "presence": (False, 10, {"top_p": 1e-6, "presence_penalty": 2.0}, {"presence_mask": 1}),
    "repetition-min-length": (True, 12, {"top_p": 1e-6, "temperature": 1.4},
                              {"repetition_penalty": 1.5, "min_length": 10}),
    "one-step": (False, 6, {"top_p": 1e-6}, {}),
    "eos-first-step": (False, 10, {"top_p": 1e-6, "eos_token_id": "first"}, {}),
}


def _sampling(case: str):
    left_pad, max_length, attrs, extra = SAMPLING_CASES[case]
    ids = _ids(left_pad)
    feeds = {"input_ids": ids, "max_length": np.array([max_length], I32),
             "attention_mask": (ids != 0).astype(I32), "seed": np.array([11], I32)}
    for name, v in extra.items():
        if name == "presence_mask":
            pm = np.zeros((ids.shape[0], VOCAB), I32)
            pm[0, [0, 4]] = 1
            feeds[name] = pm
        else:
            feeds[name] = np.array([v], np.float32 if name.endswith("penalty") else I32)
    attrs = dict(attrs)
    if attrs.get("eos_token_id") == "first":
        greedy = {k: feeds[k] for k in ("input_ids", "max_length", "attention_mask")}
        attrs["eos_token_id"] = _first_token(_model("GreedySearch", list(greedy)[1:],
                                                    eos_token_id=VOCAB + 5), greedy)
    attrs.setdefault("eos_token_id", VOCAB + 5)
    return _model("Sampling", [k for k in feeds if k != "input_ids"], **attrs), feeds


@pytest.mark.parametrize("case", list(SAMPLING_CASES))
def test_forced_sampling_compiled_gives_ort_tokens(case):
    model, feeds = _sampling(case)
    cg, static = _compiled(model)
    got = cg.run(feeds)["sequences"]
    want = _ort(model, feeds)[0]
    if case == "eos-first-step":
        assert (got[0, feeds["input_ids"].shape[1]:] == 0).all()
        done = (got[:, feeds["input_ids"].shape[1]:] == 0).all(axis=1)
        np.testing.assert_array_equal(got[~done], want[~done])
    else:
        np.testing.assert_array_equal(got, want)
    _check_compiled(cg, static, "Sampling")


@pytest.mark.parametrize("top_p,temperature", [(0.0, 1.0), (0.9, 1.0), (0.8, 2.5)])
def test_sampling_draws_compiled_equal_the_kernel(top_p, temperature):
    """Real draws: the compiled search uses the NumPy kernel's uniform numbers (seed by
    seed), so its tokens are the kernel's; another seed gives other tokens; the second
    run of a signature does not compile again."""
    model, feeds = _sampling("top-p-tiny")
    for a in model.graph.node[0].attribute:
        if a.name == "top_p":
            a.f = top_p
    model.graph.node[0].attribute.append(onnx.helper.make_attribute("temperature",
                                                                    temperature))
    cg, static = _compiled(model)
    kernel = numpy_compile(read(model))
    runs = {}
    for seed in (11, 12, 11):
        f = {**feeds, "seed": np.array([seed], I32)}
        got = cg.run(f)["sequences"]
        np.testing.assert_array_equal(got, run_plan(kernel, f)["sequences"])
        runs.setdefault(seed, got)
    assert cg.compiled_signatures == 1
    assert not np.array_equal(runs[11], runs[12])
    _check_compiled(cg, static, "Sampling")


def _top_p_graph(top_p: float, keep: int):
    from itergraph.ir import Graph, Node, Value, tensor

    s = Value("s", tensor("float32", (None, None)))
    node = Node("TopPFilter", [s], 1, {"top_p": top_p, "filter_value": -np.inf,
                                       "min_tokens_to_keep": keep},
                domain="itergraph", version=1, name="f")
    out = node.outputs[0]
    out.name = "out"
    return Graph("g", [s], [out], [node], opset_imports={"": 18, "itergraph": 1})


@pytest.mark.parametrize("top_p,keep", [(1e-6, 1), (0.5, 1), (0.9, 1), (0.99, 1),
                                        (0.5, 3), (0.9, 12), (0.3, 0)])
def test_top_p_filter_compiled_equals_the_kernel(top_p, keep):
    """The JAX rule of TopPFilter (a fast path over the 8 largest scores, a sort where the
    nucleus is larger) against the NumPy kernel (ONNX Runtime's cumulate_and_filter), on
    peaked and flat rows, ties, masked tokens and a row of equal scores."""
    from itergraph.backends.numpy.kernels.gen_sampling import top_p_filter

    rng = np.random.default_rng(3)
    s = np.concatenate([rng.standard_normal((3, 40)) * 6, rng.standard_normal((3, 40)) * 0.3,
                        np.round(rng.standard_normal((2, 40))), np.zeros((1, 40))]
                       ).astype(np.float32)
    s[2, :10] = np.finfo(np.float32).min
    g = _top_p_graph(top_p, keep)
    want = top_p_filter(s, top_p, -np.inf, keep)
    cg = jb.compile_graph(g)
    for rows in (s, s[:3], s[3:6]):  # the fast path holds for the peaked rows alone
        np.testing.assert_array_equal(cg.run({"s": rows})["out"],
                                      top_p_filter(rows, top_p, -np.inf, keep))
    np.testing.assert_array_equal(cg.run({"s": s})["out"], want)
    assert all(r.compiles for r in cg.explain())


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("bad", ["seed", "repetition_penalty", "attention_mask"])
def test_sampling_inputs_ort_refuses_are_input_errors_naming_the_node(backend, bad):
    """A negative seed, repetition_penalty 0, a mask of another shape: ONNX Runtime
    refuses them; the NumPy kernel raises an InputError naming the node and the input, the
    compiled search too for the seed, and an itergraph error naming the node for the
    others (the guard of the lowered form, which does not name the input)."""
    import itergraph as ig

    model, feeds = _sampling("repetition-min-length")
    model.graph.node[0].name = "sampler"
    feeds = {**feeds, **{"seed": {"seed": np.array([-3], I32)},
                         "repetition_penalty": {"repetition_penalty": np.zeros(1, np.float32)},
                         "attention_mask": {"attention_mask": np.ones((3, 4), I32)}}[bad]}
    with pytest.raises(Exception):  # noqa: B017 - ORT's own error type
        _ort(model, feeds)
    named = backend == "numpy" or bad == "seed"
    with pytest.raises(ig.InputError if named else ig.Error,
                       match=f"sampler.*{bad}" if named else "sampler"):
        ig.load(model).run(feeds, backend=backend)
