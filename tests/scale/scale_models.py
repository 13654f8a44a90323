"""The models of the scale tests: a recurrent loop (an LSTM written as an ONNX Scan over time,
batch on axis 0) and a greedy decoder (an ONNX Loop that stops when its token is the end
token: a data-dependent trip count)."""

from __future__ import annotations

import numpy as np
from onnx import helper as h

from onnx_builders import I64, B, F, body, const, model, vi

HIDDEN, FEATURES, VOCAB, EOS = 8, 4, 6, 0


def lstm_scan(seed: int = 0, hidden: int = HIDDEN, features: int = FEATURES):
    """X [N, T, F], H0/C0 [N, H] -> Y [N, T, H] (every step's h), H [N, H] (the last)."""
    HIDDEN, FEATURES = hidden, features  # noqa: N806 - the module's sizes, overridden
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.5, (FEATURES, 4 * HIDDEN)).astype(np.float32)
    r = rng.normal(0, 0.5, (HIDDEN, 4 * HIDDEN)).astype(np.float32)
    b = rng.normal(0, 0.1, (4 * HIDDEN,)).astype(np.float32)
    nodes = [
        h.make_node("MatMul", ["x", "W"], ["xw"]),
        h.make_node("MatMul", ["h", "R"], ["hr"]),
        h.make_node("Add", ["xw", "hr"], ["s"]),
        h.make_node("Add", ["s", "Bias"], ["g"]),
        h.make_node("Split", ["g"], ["gi", "gf", "gc", "go"], axis=1, num_outputs=4),
        h.make_node("Sigmoid", ["gi"], ["i"]),
        h.make_node("Sigmoid", ["gf"], ["f"]),
        h.make_node("Tanh", ["gc"], ["cc"]),
        h.make_node("Sigmoid", ["go"], ["o"]),
        h.make_node("Mul", ["f", "c"], ["fc"]),
        h.make_node("Mul", ["i", "cc"], ["ic"]),
        h.make_node("Add", ["fc", "ic"], ["c2"]),
        h.make_node("Tanh", ["c2"], ["tc"]),
        h.make_node("Mul", ["o", "tc"], ["h2"]),
        h.make_node("Identity", ["h2"], ["y"]),
    ]
    g = body(nodes, [vi("h", F, ["N", HIDDEN]), vi("c", F, ["N", HIDDEN]),
                     vi("x", F, ["N", FEATURES])],
             [vi("h2", F, ["N", HIDDEN]), vi("c2", F, ["N", HIDDEN]),
              vi("y", F, ["N", HIDDEN])])
    scan = h.make_node("Scan", ["H0", "C0", "X"], ["H", "C", "Y"], body=g, num_scan_inputs=1,
                       scan_input_axes=[1], scan_output_axes=[1])
    return model([scan], [vi("X", F, ["N", "T", FEATURES]), vi("H0", F, ["N", HIDDEN]),
                          vi("C0", F, ["N", HIDDEN])],
                 [vi("H", F, ["N", HIDDEN]), vi("Y", F, ["N", "T", HIDDEN])],
                 [const("W", w), const("R", r), const("Bias", b)])


def decoder(seed: int = 1, max_len: int = 40, hidden: int = HIDDEN, vocab: int = VOCAB):
    """S [N, H] -> TOKENS [steps, N]: h <- tanh(h R + b), token = argmax(h V); stops after
    the step whose token (summed over the batch) is EOS -- per example, so the trip count
    depends on the data."""
    HIDDEN, VOCAB = hidden, vocab  # noqa: N806 - the module's sizes, overridden
    rng = np.random.default_rng(seed)
    r = rng.normal(0, 0.9, (HIDDEN, HIDDEN)).astype(np.float32)
    v = rng.normal(0, 1.0, (HIDDEN, VOCAB)).astype(np.float32)
    nodes = [
        h.make_node("MatMul", ["h", "R"], ["hr"]),
        h.make_node("Tanh", ["hr"], ["h2"]),
        h.make_node("MatMul", ["h2", "V"], ["logits"]),
        h.make_node("ArgMax", ["logits"], ["tok"], axis=1, keepdims=0),
        h.make_node("Equal", ["tok", "eos"], ["ended"]),
        h.make_node("Cast", ["ended"], ["ended_i"], to=7),
        h.make_node("ReduceMax", ["ended_i"], ["any_ended"], keepdims=0),
        h.make_node("Equal", ["any_ended", "zero"], ["cond_out"]),
    ]
    g = body(nodes, [vi("it", I64, []), vi("cond_in", B, []), vi("h", F, ["N", HIDDEN])],
             [vi("cond_out", B, []), vi("h2", F, ["N", HIDDEN]), vi("tok", I64, ["N"])],
             [const("eos", np.int64(EOS)), const("zero", np.int64(0))])
    loop = h.make_node("Loop", ["M", "cond0", "S"], ["H", "TOKENS"], body=g)
    return model([loop], [vi("S", F, ["N", HIDDEN])], [vi("H", F, ["N", HIDDEN]),
                                                         vi("TOKENS", I64, [None, "N"])],
                 [const("M", np.int64(max_len)), const("cond0", np.bool_(True)),
                  const("R", r), const("V", v)])


def lstm_feeds(n: int, lengths=(5,), seed: int = 2, hidden: int = HIDDEN,
               features: int = FEATURES) -> list[dict]:
    HIDDEN, FEATURES = hidden, features  # noqa: N806 - the module's sizes, overridden
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        t = lengths[k % len(lengths)]
        out.append({"X": rng.normal(size=(1, t, FEATURES)).astype(np.float32),
                    "H0": rng.normal(0, 0.1, (1, HIDDEN)).astype(np.float32),
                    "C0": np.zeros((1, HIDDEN), np.float32)})
    return out


def decoder_feeds(n: int, seed: int = 3, hidden: int = HIDDEN) -> list[dict]:
    HIDDEN = hidden  # noqa: N806 - the module's size, overridden
    rng = np.random.default_rng(seed)
    return [{"S": rng.normal(0, 1.5, (1, HIDDEN)).astype(np.float32)} for _ in range(n)]
