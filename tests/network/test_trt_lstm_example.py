"""The TensorRT-style LSTM example (examples/trt_lstm.py) matches ONNX's LSTM in ORT."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import itergraph as ig

_PATH = Path(__file__).resolve().parents[2] / "examples" / "trt_lstm.py"
_spec = importlib.util.spec_from_file_location("trt_lstm", _PATH)
trt_lstm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trt_lstm)


@pytest.mark.parametrize("seq,batch,input_size,hidden", [(7, 3, 5, 4), (1, 1, 2, 3), (16, 2, 3, 6)])
def test_lstm_matches_onnx_lstm(seq, batch, input_size, hidden):
    diffs = trt_lstm.run_example(seq, batch, input_size, hidden, seed=seq)
    assert max(diffs.values()) < 1e-5, diffs


def test_lstm_zero_length_sequence_keeps_initial_state():
    w = trt_lstm.weights(3, 4)
    rng = np.random.default_rng(0)
    h0, c0 = rng.standard_normal((2, 4), np.float32), rng.standard_normal((2, 4), np.float32)
    outs = ig.load(trt_lstm.lstm_network(w, 2)).run(
        {"X": np.zeros((0, 2, 3), np.float32), "h0": h0, "c0": c0})
    assert outs["Y"].shape == (0, 2, 4)
    np.testing.assert_array_equal(outs["h_last"], h0)
    np.testing.assert_array_equal(outs["c_last"], c0)
