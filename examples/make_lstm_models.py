"""Generate the demo models: one LSTM layer written two ways with ONNX loops.

- ``lstm_scan.onnx``: an ONNX Scan whose body is one LSTM step (h, c, x_t) -> (h', c', h').
- ``lstm_while.onnx``: an ONNX Loop with no trip count, driven by a condition
  (``t + 1 < sequence length``), that gathers x_t by the iteration number: a while loop.

Weights are outer-graph initializers that the loop bodies capture from the enclosing scope.
The gate order is ONNX's (input, output, forget, cell). Run:
``python examples/make_lstm_models.py --out examples/models``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

SEQ, BATCH, INPUT, HIDDEN = 12, 2, 4, 8
OPSET = 21


def weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = 1 / np.sqrt(HIDDEN)
    return {
        "W": rng.uniform(-s, s, (4 * HIDDEN, INPUT)).astype(np.float32),
        "R": rng.uniform(-s, s, (4 * HIDDEN, HIDDEN)).astype(np.float32),
        "B": rng.uniform(-s, s, (4 * HIDDEN,)).astype(np.float32),
    }


def _init(w: dict[str, np.ndarray]) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array(w["W"].T.copy(), "Wt"), numpy_helper.from_array(
        w["R"].T.copy(), "Rt"), numpy_helper.from_array(w["B"], "B")]


def _cell(x: str, hp: str, cp: str, ho: str, co: str) -> list[onnx.NodeProto]:
    """Nodes of one LSTM step reading captured Wt, Rt, B."""
    return [
        h.make_node("MatMul", [x, "Wt"], ["xw"]),
        h.make_node("MatMul", [hp, "Rt"], ["hr"]),
        h.make_node("Add", ["xw", "hr"], ["s0"]),
        h.make_node("Add", ["s0", "B"], ["gates"]),
        h.make_node("Split", ["gates"], ["gi", "go", "gf", "gc"], axis=1, num_outputs=4),
        h.make_node("Sigmoid", ["gi"], ["i"]),
        h.make_node("Sigmoid", ["go"], ["o"]),
        h.make_node("Sigmoid", ["gf"], ["f"]),
        h.make_node("Tanh", ["gc"], ["g"]),
        h.make_node("Mul", ["f", cp], ["fc"]),
        h.make_node("Mul", ["i", "g"], ["ig"]),
        h.make_node("Add", ["fc", "ig"], [co]),
        h.make_node("Tanh", [co], ["tc"]),
        h.make_node("Mul", ["o", "tc"], [ho]),
    ]


def _vi(name, shape, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, shape)


def scan_model(w) -> onnx.ModelProto:
    body = h.make_graph(
        [*_cell("x_t", "h_in", "c_in", "h_out", "c_out"),
         h.make_node("Identity", ["h_out"], ["y_t"])],
        "lstm_step",
        [_vi("h_in", [BATCH, HIDDEN]), _vi("c_in", [BATCH, HIDDEN]), _vi("x_t", [BATCH, INPUT])],
        [_vi("h_out", [BATCH, HIDDEN]), _vi("c_out", [BATCH, HIDDEN]), _vi("y_t", [BATCH, HIDDEN])],
    )
    graph = h.make_graph(
        [h.make_node("Scan", ["h0", "c0", "X"], ["h_last", "c_last", "Y"], body=body,
                     num_scan_inputs=1, name="lstm_scan")],
        "lstm_as_scan",
        [_vi("X", [SEQ, BATCH, INPUT]), _vi("h0", [BATCH, HIDDEN]), _vi("c0", [BATCH, HIDDEN])],
        [_vi("Y", [SEQ, BATCH, HIDDEN]), _vi("h_last", [BATCH, HIDDEN]),
         _vi("c_last", [BATCH, HIDDEN])],
        _init(w),
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=10)


def while_model(w) -> onnx.ModelProto:
    body = h.make_graph(
        [
            h.make_node("Gather", ["X", "t"], ["x_t"], axis=0),  # X captured from outside
            *_cell("x_t", "h_in", "c_in", "h_out", "c_out"),
            h.make_node("Add", ["t", "one"], ["t1"]),
            h.make_node("Less", ["t1", "seq_len"], ["go_on"]),
            h.make_node("Identity", ["h_out"], ["y_t"]),
        ],
        "lstm_step_while",
        [_vi("t", [], T.INT64), _vi("cond_in", [], T.BOOL), _vi("h_in", [BATCH, HIDDEN]),
         _vi("c_in", [BATCH, HIDDEN])],
        [_vi("go_on", [], T.BOOL), _vi("h_out", [BATCH, HIDDEN]), _vi("c_out", [BATCH, HIDDEN]),
         _vi("y_t", [BATCH, HIDDEN])],
        [numpy_helper.from_array(np.array(1, np.int64), "one")],
    )
    graph = h.make_graph(
        [
            h.make_node("Shape", ["X"], ["xs"], start=0, end=1),
            h.make_node("Squeeze", ["xs"], ["seq_len"]),
            h.make_node("Greater", ["seq_len", "zero"], ["nonempty"]),
            h.make_node("Loop", ["", "nonempty", "h0", "c0"], ["h_last", "c_last", "Y"],
                        body=body, name="lstm_while"),
        ],
        "lstm_as_while_loop",
        [_vi("X", ["seq", BATCH, INPUT]), _vi("h0", [BATCH, HIDDEN]),
         _vi("c0", [BATCH, HIDDEN])],
        [_vi("Y", ["seq", BATCH, HIDDEN]), _vi("h_last", [BATCH, HIDDEN]),
         _vi("c_last", [BATCH, HIDDEN])],
        [*_init(w), numpy_helper.from_array(np.array(0, np.int64), "zero")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], ir_version=10)


def inputs(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "X": rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32),
        "h0": np.zeros((BATCH, HIDDEN), np.float32),
        "c0": np.zeros((BATCH, HIDDEN), np.float32),
    }


def lstm_reference(x, h0, c0, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same LSTM as a plain NumPy loop (float64 accumulation)."""
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    hs, hh, cc = [], h0.astype(np.float64), c0.astype(np.float64)
    for xt in x:
        g = xt @ w["W"].T + hh @ w["R"].T + w["B"]
        i, o, f, c = np.split(g, 4, axis=1)
        cc = sig(f) * cc + sig(i) * np.tanh(c)
        hh = sig(o) * np.tanh(cc)
        hs.append(hh)
    return np.array(hs), hh, cc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="examples/models")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    w = weights()
    for name, model in (("lstm_scan", scan_model(w)), ("lstm_while", while_model(w))):
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, out / f"{name}.onnx")
        print(f"wrote {out / name}.onnx")
    np.savez(out / "inputs.npz", **inputs())


if __name__ == "__main__":
    main()
