"""ONNX Runtime's com.microsoft.MultiHeadAttention (as its BART / T5 / Whisper fusions write
it: self attention with past_key / past_value and presents, cross attention on keys and values
already in heads) on both backends: ORT is the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig

ort = pytest.importorskip("onnxruntime")

B, S, L, P, N, H = 2, 3, 4, 5, 2, 4
D = N * H
rng = np.random.default_rng(21)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


MASK = np.array([[1, 1, 0, 1], [0, 1, 1, 1]], np.int32)
MASK_P = np.ones((B, P + S), np.int32)
MASK_P[0, :2] = 0
CASES = {
    "self": ({"query": _r(B, S, D), "key": _r(B, S, D), "value": _r(B, S, D)}, {}, 1),
    "bias": ({"query": _r(B, S, D), "key": _r(B, L, D), "value": _r(B, L, D),
              "bias": _r(3 * D)}, {}, 1),
    "padding_mask": ({"query": _r(B, S, D), "key": _r(B, L, D), "value": _r(B, L, D),
                      "key_padding_mask": MASK}, {"mask_filter_value": -1e4}, 1),
    "lengths_mask": ({"query": _r(B, S, D), "key": _r(B, L, D), "value": _r(B, L, D),
                      "key_padding_mask": np.array([2, 4], np.int32)}, {}, 1),
    "attention_bias": ({"query": _r(B, S, D), "key": _r(B, L, D), "value": _r(B, L, D),
                        "attention_bias": _r(1, N, S, L)}, {"scale": 1.0}, 1),
    "past": ({"query": _r(B, S, D), "key": _r(B, S, D), "value": _r(B, S, D),
              "past_key": _r(B, N, P, H), "past_value": _r(B, N, P, H)}, {}, 3),
    "past_mask_bias": ({"query": _r(B, 1, D), "key": _r(B, 1, D), "value": _r(B, 1, D),
                        "key_padding_mask": MASK_P[:, :P + 1],
                        "attention_bias": _r(1, N, 1, P + 1),
                        "past_key": _r(B, N, P, H), "past_value": _r(B, N, P, H)},
                       {"scale": 1.0}, 3),
    "past_unidirectional": ({"query": _r(B, S, D), "key": _r(B, S, D), "value": _r(B, S, D),
                             "past_key": _r(B, N, P, H), "past_value": _r(B, N, P, H)},
                            {"unidirectional": 1}, 3),
    "cross_bnsh": ({"query": _r(B, S, D), "key": _r(B, N, L, H), "value": _r(B, N, L, H),
                    "key_padding_mask": MASK}, {"scale": 1.0}, 1),
}
ORDER = ["query", "key", "value", "bias", "key_padding_mask", "attention_bias", "past_key",
         "past_value"]


def _model(feeds, attrs, n_out):
    ins = [n if n in feeds else "" for n in ORDER]
    while ins[-1] == "":
        ins.pop()
    outs = ["output", "present_key", "present_value"][:n_out]
    node = h.make_node("MultiHeadAttention", ins, outs, domain="com.microsoft", num_heads=N,
                       **attrs)
    dt = {np.dtype(np.float32): T.FLOAT, np.dtype(np.int32): T.INT32}
    g = h.make_graph([node], "mha",
                     [h.make_tensor_value_info(k, dt[v.dtype], v.shape) for k, v in
                      feeds.items()],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17),
                                          h.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_mha_matches_ort(case, backend):
    feeds, attrs, n_out = CASES[case]
    model = _model(feeds, attrs, n_out)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ig.load(model).run(feeds, backend=backend)
    for name, w in zip(["output", "present_key", "present_value"], want):
        np.testing.assert_allclose(got[name], w, rtol=2e-5, atol=2e-5, err_msg=name)
