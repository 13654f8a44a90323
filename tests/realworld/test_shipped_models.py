"""Models as packages ship them (`models/shipped/README.md`), run as their users run them:
silero VAD called chunk by chunk with its state carried, against ONNX Runtime; on JAX each
call is one XLA program, as `explain` says. PP-OCR's text-direction classifier on crops of
several sizes, and written as OpenVINO IR and as ONNX."""

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import itergraph as ig
from itergraph.backends.jax.fast_call import FastCall
from itergraph.backends.jax.jit_step import JitStep

SILERO = Path(__file__).parent / "models" / "shipped" / "silero_vad_16k_op15.onnx"


def _stream(run, sr: int, chunks: int = 4, seed: int = 0):
    """Feed `chunks` chunks of noise through `run(feeds) -> [output, stateN]`."""
    rng = np.random.default_rng(seed)
    n = 512 if sr == 16000 else 256
    state = np.zeros((2, 1, 128), np.float32)
    probs = []
    for _ in range(chunks):
        x = (rng.standard_normal((1, n)) * 0.1).astype(np.float32)
        prob, state = run({"input": x, "state": state, "sr": np.array(sr, np.int64)})
        probs.append(np.asarray(prob))
    return np.concatenate(probs), state


@pytest.fixture(scope="module")
def ort_session():
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(str(SILERO), so, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("sr", [16000, 8000])
def test_silero_vad_streams_as_onnx_runtime(ort_session, backend, sr):
    sess = ig.load(SILERO).compile(backend)
    got = _stream(lambda f: list(sess.run(f).values()), sr)
    want = _stream(lambda f: ort_session.run(None, f), sr)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_silero_vad_is_one_xla_program_per_sample_rate_as_explain_says():
    m = ig.load(SILERO)
    assert m.choose_backend("auto") == "jax"
    assert "everything compiles with XLA" in m.explain("jax")
    sess = m.compile("jax")
    for sr in (16000, 8000, 16000):
        _stream(lambda f: list(sess.run(f).values()), sr, chunks=3)
        records = m._jax.explain()  # what the last run did
        assert records and all(r.compiles for r in records), [r for r in records
                                                               if not r.compiles]
        plan = m._jax.root.last_plan
        assert [type(s) for s in plan.steps] == [JitStep] and plan.tail is None
    fast = list(m._jax._fast.values())
    assert len(fast) == 2 and all(isinstance(f, FastCall) for f in fast)


@pytest.mark.parametrize("sr", [16000, 8000])
def test_silero_vad_as_openvino_ir_with_fixed_input_shapes(ort_session, sr, tmp_path):
    """Its Ifs give outputs of different ranks (a Squeeze when a length is 1), which OpenVINO's
    CPU plugin refuses; with the chunk's shape fixed (``convert --input-shapes``) they are
    decided while converting, and OpenVINO streams the written IR as ONNX Runtime does."""
    import openvino as ov

    n = 512 if sr == 16000 else 256
    fixed = ig.load(SILERO).with_input_shapes(f"input:[1,{n}],state:[2,1,128]")
    before = sum(n.op_type == "If" for _, n in ig.load(SILERO).graph.walk())
    assert sum(n.op_type == "If" for _, n in fixed.graph.walk()) < before
    fixed.save(tmp_path / "vad.xml")
    compiled = ov.Core().compile_model(str(tmp_path / "vad.xml"), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})

    def run_ov(feeds):
        out = compiled(feeds)
        return [np.asarray(out[o]) for o in compiled.outputs]

    def run_ort(feeds):
        return ort_session.run(None, feeds)

    got, got_state = _stream(run_ov, sr)
    want, want_state = _stream(run_ort, sr)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spec,message", [("inp:[1,512]", "no input 'inp'"),
                                          ("input:[1,a]", "whole numbers"),
                                          ("input:[1,512,3]", "does not fit"),
                                          ("input=[1,512]", "NAME:")])
def test_fixed_input_shapes_refused_with_a_reason(spec, message):
    with pytest.raises(ig.InputError, match=message):
        ig.load(SILERO).with_input_shapes(spec)


PPOCR_CLS = Path(__file__).parent / "models" / "shipped" / "ch_ppocr_mobile_v2.0_cls_infer.onnx"


def _crops(*shapes):
    rng = np.random.default_rng(5)
    return [rng.random(s, dtype=np.float32) for s in shapes]


@pytest.fixture(scope="module")
def ppocr_ort():
    return ort.InferenceSession(str(PPOCR_CLS), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_ppocr_classifier_runs_as_onnx_runtime(ppocr_ort, backend):
    """PP-OCR's text-direction classifier as RapidOCR ships it (paddle2onnx: no value_info,
    batch, height and width dynamic)."""
    sess = ig.load(PPOCR_CLS).compile(backend)
    for x in _crops((1, 3, 48, 192), (3, 3, 48, 100)):
        got = list(sess.run({"x": x}).values())
        want = ppocr_ort.run(None, {"x": x})
        np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)


def test_ppocr_classifier_written_runs_in_openvino_and_onnx_runtime(ppocr_ort, tmp_path):
    """Its global average pools read values the file leaves untyped: the IR writer takes
    their rank from ONNX's inference. One IR, crops of several sizes; and back to ONNX."""
    import openvino as ov

    m = ig.load(PPOCR_CLS)
    m.save(tmp_path / "cls.xml")
    m.save(tmp_path / "cls.onnx")
    compiled = ov.Core().compile_model(str(tmp_path / "cls.xml"), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    back = ort.InferenceSession(str(tmp_path / "cls.onnx"), providers=["CPUExecutionProvider"])
    for x in _crops((1, 3, 48, 192), (2, 3, 48, 320)):
        want = ppocr_ort.run(None, {"x": x})[0]
        got = np.asarray(compiled({"x": x})[compiled.outputs[0]])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(back.run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-6)
