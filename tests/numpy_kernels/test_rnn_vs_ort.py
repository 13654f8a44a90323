"""LSTM, GRU and RNN kernels against ONNX Runtime on random weights.

Covers every direction, both layouts, per-batch ``sequence_lens``, initial states, biases,
peepholes, ``clip``, ``input_forget``, ``linear_before_reset`` and activation lists with
alpha/beta parameters.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper as h

from onnx_builders import I32, model, run_ig, run_ort, vi

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


def _case(op, direction, layout, with_lens, seed=0, **attrs):
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x_shape = (SEQ, BATCH, INPUT) if layout == 0 else (BATCH, SEQ, INPUT)
    s_shape = (dirs, BATCH, HIDDEN) if layout == 0 else (BATCH, dirs, HIDDEN)
    feeds = {
        "X": rng.standard_normal(x_shape).astype(np.float32),
        "W": (0.5 * rng.standard_normal((dirs, g * HIDDEN, INPUT))).astype(np.float32),
        "R": (0.5 * rng.standard_normal((dirs, g * HIDDEN, HIDDEN))).astype(np.float32),
        "B": (0.3 * rng.standard_normal((dirs, 2 * g * HIDDEN))).astype(np.float32),
        "initial_h": (0.5 * rng.standard_normal(s_shape)).astype(np.float32),
    }
    names = ["X", "W", "R", "B", "", "initial_h"]
    if with_lens:
        feeds["sequence_lens"] = np.array([SEQ, 2, 4][:BATCH], dtype=np.int32)
        names[4] = "sequence_lens"
    if op == "LSTM":
        feeds["initial_c"] = (0.5 * rng.standard_normal(s_shape)).astype(np.float32)
        feeds["P"] = (0.3 * rng.standard_normal((dirs, 3 * HIDDEN))).astype(np.float32)
        names += ["initial_c", "P"]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = h.make_node(op, names, outs, hidden_size=HIDDEN, direction=direction,
                       layout=layout, **attrs)
    inputs = [vi(n, I32 if n == "sequence_lens" else 1, list(feeds[n].shape))
              for n in names if n]
    y_shape = [SEQ, dirs, BATCH, HIDDEN] if layout == 0 else [BATCH, SEQ, dirs, HIDDEN]
    shapes = {"Y": y_shape, "Y_h": list(s_shape), "Y_c": list(s_shape)}
    m = model([node], inputs, [vi(o, 1, shapes[o]) for o in outs], opset=14)
    return m, feeds


def _compare(m, feeds, rtol=1e-4, atol=1e-5):
    got = run_ig(m, feeds)
    node = m.graph.node[0]
    layout = next((a.i for a in node.attribute if a.name == "layout"), 0)
    if layout == 0:
        want = run_ort(m, feeds)
    else:  # ONNX Runtime has no batch-major layout: run the time-major model, transpose back
        m0 = _time_major(m)
        feeds0 = {k: (np.swapaxes(v, 0, 1) if k in ("X", "initial_h", "initial_c") else v)
                  for k, v in feeds.items()}
        want = run_ort(m0, feeds0)
        want = {k: (v.transpose(2, 0, 1, 3) if k == "Y" else np.swapaxes(v, 0, 1))
                for k, v in want.items()}
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        assert got[k].shape == want[k].shape, (k, got[k].shape, want[k].shape)
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)


def _time_major(m):
    import onnx

    m0 = onnx.ModelProto()
    m0.CopyFrom(m)
    for a in m0.graph.node[0].attribute:
        if a.name == "layout":
            a.i = 0
    for v in [*m0.graph.input, *m0.graph.output]:
        dims = v.type.tensor_type.shape.dim
        if v.name in ("X", "initial_h", "initial_c", "Y_h", "Y_c"):
            d0, d1 = dims[0].dim_value, dims[1].dim_value
            dims[0].dim_value, dims[1].dim_value = d1, d0
        elif v.name == "Y":  # [batch, seq, dirs, H] -> [seq, dirs, batch, H]
            b, t, d = dims[0].dim_value, dims[1].dim_value, dims[2].dim_value
            dims[0].dim_value, dims[1].dim_value, dims[2].dim_value = t, d, b
    return m0


@pytest.mark.parametrize(
    "op,direction,layout,with_lens",
    list(itertools.product(["LSTM", "GRU", "RNN"], ["forward", "reverse", "bidirectional"],
                           [0, 1], [False, True])),
)
def test_cell_matches_onnxruntime(op, direction, layout, with_lens):
    m, feeds = _case(op, direction, layout, with_lens)
    _compare(m, feeds)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_clip_and_input_forget(direction):
    m, feeds = _case("LSTM", direction, 0, True, seed=1, clip=0.7, input_forget=1)
    _compare(m, feeds)


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset(lbr):
    m, feeds = _case("GRU", "bidirectional", 0, True, seed=2, linear_before_reset=lbr)
    _compare(m, feeds)


def test_activation_lists_consume_alpha_beta_in_order():
    # f=HardSigmoid(alpha, beta), g=LeakyRelu(alpha), h=ScaledTanh(alpha, beta), per direction
    acts = ["HardSigmoid", "LeakyRelu", "ScaledTanh", "Sigmoid", "Tanh", "Softsign"]
    m, feeds = _case("LSTM", "bidirectional", 0, False, seed=3, activations=acts,
                     activation_alpha=[0.3, 0.05, 0.9], activation_beta=[0.4, 1.2])
    _compare(m, feeds)


def test_rnn_relu_and_gru_affine_activations():
    m, feeds = _case("RNN", "reverse", 0, True, seed=4, activations=["Relu"])
    _compare(m, feeds)
    m, feeds = _case("GRU", "forward", 1, False, seed=5, activations=["Sigmoid", "Affine"],
                     activation_alpha=[0.8], activation_beta=[0.1])
    _compare(m, feeds)


def test_optional_inputs_omitted():
    """No bias, no initial state, no sequence_lens: ONNX defaults are zeros."""
    rng = np.random.default_rng(6)
    feeds = {
        "X": rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32),
        "W": rng.standard_normal((1, 4 * HIDDEN, INPUT)).astype(np.float32),
        "R": rng.standard_normal((1, 4 * HIDDEN, HIDDEN)).astype(np.float32),
    }
    node = h.make_node("LSTM", ["X", "W", "R"], ["", "Y_h"], hidden_size=HIDDEN)
    ins = [vi(k, 1, list(v.shape)) for k, v in feeds.items()]
    m = model([node], ins, [vi("Y_h", 1, [1, BATCH, HIDDEN])], opset=14)
    _compare(m, feeds)


CLIPS = [-1.0, -0.5, 0.0, -0.0, float("nan"), 0.3]


@pytest.mark.parametrize("clip", CLIPS)
@pytest.mark.parametrize("op", ["RNN", "LSTM", "GRU"])
def test_clip_zero_or_negative_as_onnxruntime(op, clip):
    """ONNX Runtime is the oracle for a clip that is not above 0: it runs an RNN (1.32: a
    negative or NaN clip clips nothing, 0 clips every activation input to 0) and refuses an LSTM or
    GRU when the session is made (``clip_ > 0.f``). Both backends give ORT's outputs, or the
    file is refused as it is (ModelError naming the clip), by `load` and so by `check`."""
    import itergraph as ig

    m, feeds = _case(op, "bidirectional", 0, True, seed=7, clip=clip)
    try:
        want = run_ort(m, feeds)
    except Exception as e:  # noqa: BLE001 - ORT's refusal is the oracle
        assert "clip_ > 0" in str(e), e
        want = None
    if want is None:
        for what in (lambda: ig.load(m), lambda: ig.check(m, "onnxruntime")):
            with pytest.raises(ig.ModelError, match="attribute 'clip' is"):
                what()
        return
    assert ig.check(m, "onnxruntime").ok
    for backend in ("numpy", "jax"):
        got = run_ig(m, feeds, backend=backend)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5,
                                       err_msg=f"{backend} {k}")


@pytest.mark.parametrize("clip", [-1.0, 0.0])
def test_rnn_clip_not_above_zero_in_the_openvino_ir(tmp_path, clip):
    """OpenVINO's clip 0 means no clipping: an RNN's negative clip (no clipping in ORT) is
    written so and OpenVINO runs it to ORT's outputs; its clip 0 (every input clipped to 0)
    has no OpenVINO form and is refused when saved, naming the node."""
    import onnx
    import openvino as ov

    import itergraph as ig

    m, feeds = _case("RNN", "forward", 0, False, seed=8, clip=clip)
    m.graph.node[0].name = "cell"
    onnx.checker.check_model(m)
    xml = tmp_path / "m.xml"
    if clip == 0.0:
        with pytest.raises(ig.UnsupportedError, match="'cell'.*clip=0.0"):
            ig.save(ig.load(m), xml)
        return
    ig.save(ig.load(m), xml)
    want = run_ort(m, feeds)
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feeds)
    for out, name in zip(compiled.outputs, want):
        np.testing.assert_allclose(result[out], want[name], rtol=1e-4, atol=1e-5, err_msg=name)
