"""The ``lower-generation`` transform: ONNX Runtime's GreedySearch (decoder-only) as standard
ONNX ops. ORT on the original model is the oracle; the lowered model must give its tokens in
ORT (written as ONNX, with no generation op left), on itergraph's NumPy and JAX backends and
in OpenVINO (written as IR)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import itergraph as ig
from itergraph.passes.lower_generation import lower_generation

sys.path.insert(0, str(Path(__file__).parent))
from models import generation_model  # noqa: E402
from test_fused_decoder import search_model  # noqa: E402
from test_greedy_search import ATTRS, CASES, I32, IDS, _feeds, _move_initializers  # noqa: E402

ort = pytest.importorskip("onnxruntime")
GENERATION_OPS = {"GreedySearch", "BeamSearch", "Sampling"}
#: OpenVINO's CPU plugin computes in bfloat16 on CPUs that have it unless told otherwise
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _ort(model_or_path, feeds):
    src = model_or_path.SerializeToString() if isinstance(model_or_path, onnx.ModelProto) \
        else str(model_or_path)
    return ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _openvino(path, feeds):
    ov = pytest.importorskip("openvino")
    return ov.Core().compile_model(str(path), "CPU", F32)(feeds)[0]


def _case(case):
    feeds = _feeds(case)
    return generation_model("GreedySearch", [k for k in feeds if k != "input_ids"],
                            **ATTRS.get(case, {})), feeds


def _models():
    """Every GreedySearch model of tests/generation: the processor cases, the decoder reading
    main-graph initializers (as convert_generation writes GPT-2), an init_decoder, and the
    decoder of ORT's fused transformer ops."""
    out = {case: _case(case) for case in CASES}
    f = _feeds("left_pad")
    names = [k for k in f if k != "input_ids"]
    out["main_graph_initializers"] = (_move_initializers(generation_model(
        "GreedySearch", names, opset_import=False)), f)
    out["init_decoder"] = (generation_model("GreedySearch", names, init_seed=4), f)
    out["fused_decoder"] = search_model("GreedySearch")
    return out


MODELS = _models()


def _check_lowered_onnx(path):
    written = onnx.load(str(path))
    ops = {n.op_type for n in written.graph.node}
    assert not ops & GENERATION_OPS and "Loop" in ops
    assert all(o.domain in ("", "ai.onnx", "com.microsoft") for o in written.opset_import)


@pytest.mark.parametrize("name", list(MODELS))
def test_lowered_runs_in_ort_without_generation_ops(name, tmp_path):
    model, feeds = MODELS[name]
    want = _ort(model, feeds)
    lowered = ig.optimize(model, ["lower-generation"])
    ig.save(lowered, str(tmp_path / "low.onnx"))
    _check_lowered_onnx(tmp_path / "low.onnx")
    np.testing.assert_array_equal(_ort(tmp_path / "low.onnx", feeds), want)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_lowered_runs_on_itergraph(name, backend):
    model, feeds = MODELS[name]
    want = _ort(model, feeds)
    lowered = ig.optimize(model, ["lower-generation"])
    np.testing.assert_array_equal(lowered.run(feeds, backend=backend)["sequences"], want)


@pytest.mark.parametrize("name", list(MODELS))
def test_lowered_runs_in_openvino(name, tmp_path):
    model, feeds = MODELS[name]
    want = _ort(model, feeds)
    ig.save(ig.optimize(model, ["lower-generation"]), str(tmp_path / "low.xml"))
    np.testing.assert_array_equal(_openvino(tmp_path / "low.xml", feeds), want)


@pytest.mark.parametrize("name", ["all_processors", "fused_decoder"])
def test_lowered_with_fixed_input_shapes_runs_in_openvino(name, tmp_path):
    """Written with the feeds' shapes fixed (``convert --input-shapes``): the caches and the
    mask enter the loop with static shapes and grow; OpenVINO must not keep their first
    length (it did when they were not Loop outputs: wrong tokens from the second step)."""
    model, feeds = MODELS[name]
    fixed = ig.load(model).with_input_shapes({k: np.shape(v) for k, v in feeds.items()})
    ig.save(fixed, str(tmp_path / "g.xml"))
    np.testing.assert_array_equal(_openvino(tmp_path / "g.xml", feeds), _ort(model, feeds))


@pytest.mark.parametrize("name", ["all_processors", "main_graph_initializers", "fused_decoder"])
def test_openvino_writer_lowers_by_itself(name, tmp_path):
    """``ig.save(model, "x.xml")`` of a model holding GreedySearch lowers it on the way
    (`passes.pipelines.OPENVINO_WRITE`); the user's model keeps its node."""
    model, feeds = MODELS[name]
    m = ig.load(model)
    ig.save(m, str(tmp_path / "g.xml"))
    assert any(n.op_type == "GreedySearch" for n in m.graph.nodes)
    np.testing.assert_array_equal(_openvino(tmp_path / "g.xml", feeds), _ort(model, feeds))


def test_every_row_ending_early_is_padded():
    """ORT leaves its buffer unwritten after every row met eos; the lowered model pads as
    the kernel does. The written part equals ORT's."""
    feeds = {"input_ids": IDS, "max_length": np.array([12], I32)}
    model = generation_model("GreedySearch", ["max_length"], eos_token_id=1,
                             no_repeat_ngram_size=1)
    want = _ort(model, feeds)
    got = ig.optimize(model, ["lower-generation"]).run(feeds)["sequences"]
    np.testing.assert_array_equal(got[:, :7], want[:, :7])
    assert got.shape == want.shape and (got[:, 7:] == 0).all()


def test_prompt_not_below_max_length_fails(tmp_path):
    feeds = {"input_ids": IDS, "max_length": np.array([3], I32)}
    _fails_before_and_after_lowering(generation_model("GreedySearch", ["max_length"]), feeds,
                                     tmp_path)


def _fails_before_and_after_lowering(model, feeds, tmp_path):
    """The operator fails on `feeds`, and so does its lowering, in itergraph and ORT."""
    with pytest.raises(ig.Error):
        ig.load(model).run(feeds)
    lowered = ig.optimize(model, ["lower-generation"])
    with pytest.raises(ig.Error):
        lowered.run(feeds)
    ig.save(lowered, str(tmp_path / "low.onnx"))
    with pytest.raises(Exception):  # noqa: B017 (ORT's own error class)
        _ort(tmp_path / "low.onnx", feeds)


@pytest.mark.parametrize("attrs,feature", [
    ({"model_type": 1}, "model_type 1"),
    ({"logits_processor": 1}, "logits_processor"),
    ({"vocab_size": 30}, "vocab_size"),
])
def test_refusals_name_the_feature(attrs, feature):
    model = generation_model("GreedySearch", ["max_length"], **attrs)
    model.graph.node[0].name = "gen"
    m = ig.load(model)
    with pytest.raises(ig.UnsupportedError, match=f"gen.*{feature}"):
        lower_generation(m.graph)
    assert m.graph.nodes[0].op_type == "GreedySearch"  # unchanged
    with pytest.raises(ig.UnsupportedError, match=feature):
        ig.optimize(model, ["lower-generation"])


def test_no_max_length_refused():
    model = generation_model("GreedySearch", [])
    with pytest.raises(ig.UnsupportedError, match="max_length"):
        ig.optimize(model, ["lower-generation"])


def test_unlowered_round_trip_keeps_subgraph_names(tmp_path):
    """Without the transform the ONNX writer keeps GreedySearch and its decoder's contract
    names (the lowering is not applied on the way to ONNX)."""
    model, feeds = MODELS["main_graph_initializers"]
    ig.save(ig.load(model), str(tmp_path / "g.onnx"))
    written = onnx.load(str(tmp_path / "g.onnx"))
    assert written.graph.node[0].op_type == "GreedySearch"
    dec = next(a.g for a in written.graph.node[0].attribute if a.name == "decoder")
    assert [i.name for i in dec.input][:3] == ["input_ids", "position_ids", "attention_mask"]
    np.testing.assert_array_equal(_ort(tmp_path / "g.onnx", feeds), _ort(model, feeds))


def test_listed_as_a_transform():
    from itergraph.transforms import TRANSFORMS

    assert "lower-generation" in TRANSFORMS
    assert "Guarantees:" in TRANSFORMS["lower-generation"].contract()


# -- BeamSearch ------------------------------------------------------------------------------

def _beam_models():
    """Every BeamSearch (model_type 0) model of tests/generation: the processor cases, main-
    graph initializers, an init_decoder, the fused decoder."""
    import test_beam_search as tb

    out = {case: (tb._model(case, tb._feeds(case)), tb._feeds(case)) for case in tb.CASES}
    f = _feeds("min_length")
    f.update(num_beams=np.array([2], I32), num_return_sequences=np.array([1], I32),
             length_penalty=np.array([1.0], np.float32))
    names = [k for k in f if k != "input_ids"]
    out["main_graph_initializers"] = (_move_initializers(generation_model("BeamSearch", names)),
                                      f)
    f = _feeds("left_pad")
    f.update(min_length=np.array([1], I32), num_beams=np.array([3], I32),
             num_return_sequences=np.array([2], I32), length_penalty=np.array([1.0], np.float32))
    names = [k for k in f if k != "input_ids"]
    out["init_decoder"] = (generation_model("BeamSearch", names, init_seed=4), f)
    out["fused_decoder"] = search_model("BeamSearch", 3)
    return out


BEAM_MODELS = _beam_models()


def _ort_beam(model_or_path, feeds):
    src = model_or_path.SerializeToString() if isinstance(model_or_path, onnx.ModelProto) \
        else str(model_or_path)
    return ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)


def _same_beams(got, want):
    np.testing.assert_array_equal(got[0], want[0])
    if len(want) > 1:
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(BEAM_MODELS))
def test_beam_lowered_runs_in_ort_without_generation_ops(name, tmp_path):
    model, feeds = BEAM_MODELS[name]
    want = _ort_beam(model, feeds)
    ig.save(ig.optimize(model, ["lower-generation"]), str(tmp_path / "low.onnx"))
    _check_lowered_onnx(tmp_path / "low.onnx")
    _same_beams(_ort_beam(tmp_path / "low.onnx", feeds), want)


def _beam_runs():
    """(model, backend) pairs: the lowered models on NumPy, and on JAX those that
    `test_beam_search` does not run there (the JAX backend runs a BeamSearch node as this
    very lowering, compiled: its cases are `test_beam_matches_ort[jax-*]`)."""
    import test_beam_search as tb

    return [(name, backend) for name in BEAM_MODELS for backend in ("numpy", "jax")
            if backend == "numpy" or name not in tb.CASES]


@pytest.mark.parametrize(("name", "backend"), _beam_runs())
def test_beam_lowered_runs_on_itergraph(name, backend):
    model, feeds = BEAM_MODELS[name]
    want = _ort_beam(model, feeds)
    got = ig.optimize(model, ["lower-generation"]).run(feeds, backend=backend)
    _same_beams([got["sequences"], got.get("sequences_scores")][:len(want)], want)


@pytest.mark.parametrize("name", list(BEAM_MODELS))
def test_beam_lowered_runs_in_openvino(name, tmp_path):
    ov = pytest.importorskip("openvino")
    model, feeds = BEAM_MODELS[name]
    want = _ort_beam(model, feeds)
    ig.save(ig.optimize(model, ["lower-generation"]), str(tmp_path / "low.xml"))
    res = ov.Core().compile_model(str(tmp_path / "low.xml"), "CPU", F32)(feeds)
    _same_beams([res[i] for i in range(len(want))], want)


def test_beam_num_return_sequences_out_of_range_fails(tmp_path):
    import test_beam_search as tb

    for nr in (0, 4):
        feeds = tb._feeds("plain")
        feeds["num_return_sequences"] = np.array([nr], I32)
        _fails_before_and_after_lowering(tb._model("plain", feeds), feeds, tmp_path)


@pytest.mark.parametrize("case", ["plain", "return_2", "prefix_mask", "left_pad"])
def test_beam_scores_output_lowered(case, tmp_path):
    """BeamSearch's optional scores output (every step's processed log-probabilities plus
    the beam scores) from the lowered model, in ONNX Runtime and on both backends."""
    import test_beam_search as tb

    feeds = tb._feeds(case)
    model = tb._with_scores(tb._model(case, feeds))
    want = _ort_beam(model, feeds)
    low = ig.optimize(model, ["lower-generation"])
    ig.save(low, str(tmp_path / "low.onnx"))
    _check_lowered_onnx(tmp_path / "low.onnx")
    runs = [_ort_beam(tmp_path / "low.onnx", feeds)]
    for backend in ("numpy", "jax"):
        got = low.run(feeds, backend=backend)
        runs.append([got["sequences"], got["sequences_scores"], got["scores"]])
    for got in runs:
        _same_beams(got[:2], want[:2])
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["return_2", "fused_decoder"])
def test_openvino_writer_lowers_beam_search_by_itself(name, tmp_path):
    ov = pytest.importorskip("openvino")
    model, feeds = BEAM_MODELS[name]
    ig.save(ig.load(model), str(tmp_path / "b.xml"))
    res = ov.Core().compile_model(str(tmp_path / "b.xml"), "CPU", F32)(feeds)
    want = _ort_beam(model, feeds)
    _same_beams([res[i] for i in range(len(want))], want)


@pytest.mark.parametrize("op", ["GreedySearch", "BeamSearch"])
def test_two_layer_fused_decoder_in_openvino(op, tmp_path):
    """Layer 2's Attention reads a SkipLayerNormalization output the file gives no type: the
    IR writer follows it back to a typed value."""
    import generation_models

    model, feeds = search_model(op, 3 if op == "BeamSearch" else 1)
    dec = next(a for a in model.graph.node[0].attribute if a.name == "decoder")
    dec.g.CopyFrom(generation_models.fused_decoder(24, 16, 2, layers=2, seed=3))
    want = _ort_beam(model, feeds)[0]
    ig.save(ig.load(model), str(tmp_path / "g.xml"))
    np.testing.assert_array_equal(_openvino(tmp_path / "g.xml", feeds), want)
