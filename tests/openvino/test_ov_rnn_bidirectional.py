"""Bidirectional LSTMSequence/GRUSequence/RNNSequence as OpenVINO's converters write them.

OpenVINO applies its first activations to both directions; a file may list them once or, as
OpenVINO's ONNX frontend copies a bidirectional ONNX node's, once per direction (the second
list is then ignored by OpenVINO). Each model is built with OpenVINO's Python API, saved, and
checked by `check_model`: OpenVINO vs itergraph (NumPy, JAX), then itergraph's written IR run
by OpenVINO.
"""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops
import pytest
from onnx import TensorProto
from onnx import helper as h
from ov_helpers import check_model

rng = np.random.default_rng(13)
H, N, T, I = 4, 3, 5, 2
LENS = np.array([5, 3, 4], np.int32)

DEFAULTS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"], "RNN": ["tanh"]}
OTHER = {"LSTM": ["sigmoid", "relu", "relu"], "GRU": ["sigmoid", "relu"], "RNN": ["relu"]}


def f32(*shape, scale=0.5):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _sequence(op: str, acts: list[str]):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    x = ops.parameter([N, T, I], np.float32, name="x")
    h0 = ops.parameter([N, 2, H], np.float32, name="h0")
    lens = ops.parameter([N], np.int32, name="lens")
    w, r = ops.constant(f32(2, gates * H, I)), ops.constant(f32(2, gates * H, H))
    b = ops.constant(f32(2, gates * H))
    params = [x, h0, lens]
    if op == "LSTM":
        c0 = ops.parameter([N, 2, H], np.float32, name="c0")
        params.append(c0)
        node = ops.lstm_sequence(x, h0, c0, lens, w, r, b, H, "bidirectional", activations=acts)
    elif op == "GRU":
        node = ops.gru_sequence(x, h0, lens, w, r, b, H, "bidirectional", activations=acts)
    else:
        node = ops.rnn_sequence(x, h0, lens, w, r, b, H, "bidirectional", activations=acts)
    feeds = {"x": f32(N, T, I, scale=1.0), "h0": f32(N, 2, H), "lens": LENS}
    if op == "LSTM":
        feeds["c0"] = f32(N, 2, H)
    return ov.Model(list(node.outputs()), params), feeds


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("listing", ["once", "per_direction", "second_ignored", "other_once"])
def test_bidirectional_sequence(op, listing, tmp_path):
    acts = {"once": DEFAULTS[op], "per_direction": DEFAULTS[op] * 2,
            "second_ignored": DEFAULTS[op] + OTHER[op], "other_once": OTHER[op]}[listing]
    m, feeds = _sequence(op, acts)
    check_model(m, feeds, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_bidirectional_from_openvino_onnx_frontend(op, tmp_path):
    """An ONNX bidirectional node with activations per direction, converted by OpenVINO."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    acts = [a.capitalize() for a in DEFAULTS[op]] * 2
    inits = [onnx.numpy_helper.from_array(f32(2, gates * H, I), "W"),
             onnx.numpy_helper.from_array(f32(2, gates * H, H), "R"),
             onnx.numpy_helper.from_array(f32(2, 2 * gates * H), "B")]
    node = h.make_node(op, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=H,
                       direction="bidirectional", activations=acts)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", TensorProto.FLOAT, [T, N, I])],
                     [h.make_tensor_value_info("Y", TensorProto.FLOAT, [T, 2, N, H]),
                      h.make_tensor_value_info("Y_h", TensorProto.FLOAT, [2, N, H])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)], ir_version=7)
    src = tmp_path / "m.onnx"
    onnx.save(m, src)
    check_model(ov.Core().read_model(str(src)), {"X": f32(T, N, I, scale=1.0)}, tmp_path,
                rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("acts", [["sigmoid", "tanh", "tanh"], ["Sigmoid", "Relu", "RELU"]])
def test_onnx_lstm_activation_names_in_any_case_written_as_ir(acts, tmp_path):
    """ONNX Runtime matches activation names without regard to case; so does the writer."""
    import onnxruntime as ort
    from ov_helpers import run_ov

    import itergraph as ig

    w, r, b = f32(1, 4 * H, I), f32(1, 4 * H, H), f32(1, 8 * H)
    node = h.make_node("LSTM", ["x", "w", "r", "b"], ["y", "yh", "yc"], hidden_size=H,
                       activations=acts)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, [T, N, I])],
                     [h.make_tensor_value_info(n, TensorProto.FLOAT, None)
                      for n in ("y", "yh", "yc")],
                     [onnx.numpy_helper.from_array(a, n) for a, n in ((w, "w"), (r, "r"),
                                                                      (b, "b"))])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    feeds = {"x": f32(T, N, I)}
    want = ort.InferenceSession(m.SerializeToString()).run(None, feeds)
    ig.load(m).save(tmp_path / "m.xml")
    for got, ref in zip(run_ov(tmp_path / "m.xml", feeds), want):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
