"""IR files that OpenVINO itself writes from ONNX models with loops and recurrent ops.

OpenVINO's ONNX importer turns Loop/Scan into its own Loop/TensorIterator and LSTM/GRU/RNN
into its sequence ops; itergraph must read what it saved and agree with it on both backends.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto
from onnx import helper as h
from ov_helpers import assert_close, run_ov

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
import make_lstm_models as demo  # noqa: E402

rng = np.random.default_rng(7)


def _rnn_model(op: str, direction: str, hidden=5, inp=3, seq=4, batch=2):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    dirs = 2 if direction == "bidirectional" else 1
    inits = [
        onnx.numpy_helper.from_array(rng.standard_normal((dirs, gates * hidden, inp))
                                     .astype(np.float32), "W"),
        onnx.numpy_helper.from_array(rng.standard_normal((dirs, gates * hidden, hidden))
                                     .astype(np.float32), "R"),
        onnx.numpy_helper.from_array(rng.standard_normal((dirs, 2 * gates * hidden))
                                     .astype(np.float32), "B"),
    ]
    node = h.make_node(op, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=hidden,
                       direction=direction)
    g = h.make_graph([node], op.lower(),
                     [h.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, inp])],
                     [h.make_tensor_value_info("Y", TensorProto.FLOAT, None),
                      h.make_tensor_value_info("Y_h", TensorProto.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)], ir_version=7)
    return m, {"X": rng.standard_normal((seq, batch, inp)).astype(np.float32)}


def _saved_by_openvino(m: onnx.ModelProto, tmp_path: Path) -> Path:
    src = tmp_path / "model.onnx"
    onnx.save(m, src)
    xml = tmp_path / "model.xml"
    ov.save_model(ov.Core().read_model(str(src)), str(xml), compress_to_fp16=False)
    return xml


def _check(m, feeds, tmp_path):
    xml = _saved_by_openvino(m, tmp_path)
    want = run_ov(xml, feeds)
    for backend in ("numpy", "jax"):
        got = list(ig.load(xml).run(feeds, backend=backend).values())
        assert len(got) == len(want)
        for i, (a, b) in enumerate(zip(got, want)):
            assert_close(a, b, 1e-4, 1e-5, f"{backend} output {i}")


@pytest.mark.parametrize("name", ["scan_model", "while_model"])
def test_loops_converted_by_openvino(name, tmp_path):
    _check(getattr(demo, name)(demo.weights()), demo.inputs(), tmp_path)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_recurrent_ops_converted_by_openvino(op, direction, tmp_path):
    m, feeds = _rnn_model(op, direction)
    _check(m, feeds, tmp_path)
