"""ONNX Runtime's com.microsoft.Sampling run by itergraph: equal tokens where the draw is
forced (tiny top_p leaves one candidate per step); ORT's generator is not reproduced."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parent))
from models import VOCAB, generation_model  # noqa: E402

ort = pytest.importorskip("onnxruntime")

I32 = np.int32
IDS = np.array([[3, 4, 5], [6, 7, 8]], I32)
rng = np.random.default_rng(9)
VMASK = (rng.random(VOCAB) > 0.3).astype(I32)
PMASK = (rng.random((2, VOCAB)) > 0.5).astype(I32)
PRESENCE = np.zeros((2, VOCAB), I32)
PRESENCE[0, [0, 3]] = 1  # ORT puts the whole penalty on row 0's token 0: make it matter
CASES = {
    "top_p_tiny": ({"max_length": 10}, {"top_p": 1e-6}),
    "temperature": ({"max_length": 10, "repetition_penalty": 1.5},
                    {"top_p": 1e-6, "temperature": 0.7}),
    "presence": ({"max_length": 10, "presence_mask": PRESENCE},
                 {"top_p": 1e-6, "presence_penalty": 3.0}),
    "vocab_mask": ({"max_length": 10, "vocab_mask": VMASK}, {"top_p": 1e-6}),
    "prefix_mask": ({"max_length": 10, "prefix_vocab_mask": PMASK}, {"top_p": 1e-6}),
    "min_length": ({"max_length": 12, "min_length": 10}, {"top_p": 1e-6, "eos_token_id": 20}),
    "repetition_min_length": ({"max_length": 12, "min_length": 7, "repetition_penalty": 2.0},
                              {"top_p": 1e-6, "temperature": 1.3}),
    "no_repeat_2": ({"max_length": 12}, {"top_p": 1e-6, "no_repeat_ngram_size": 2}),
    "left_pad": ({"max_length": 10, "attention_mask": np.array([[0, 1, 1], [1, 1, 1]], I32)},
                 {"top_p": 1e-6}),
}


def _case(case):
    ins, attrs = CASES[case]
    feeds = {"input_ids": IDS.copy(), "seed": np.array([7], I32)}
    if case == "left_pad":
        feeds["input_ids"][0, 0] = 0
    for k, v in ins.items():
        feeds[k] = np.array([v], np.float32 if k.endswith("penalty") else I32) \
            if np.isscalar(v) else v
    return feeds, generation_model("Sampling", [k for k in feeds if k != "input_ids"], **attrs)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_forced_sampling_matches_ort(case, backend):
    feeds, model = _case(case)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    got = ig.load(model).run(feeds, backend=backend)["sequences"]
    np.testing.assert_array_equal(got, want)


def test_sampling_draws_are_valid_and_seeded():
    feeds, model = _case("top_p_tiny")
    model.graph.node[0].attribute[-1].f = 0.9  # top_p: a real draw
    m = ig.load(model)
    a, b = m.run(feeds)["sequences"], m.run(feeds)["sequences"]
    np.testing.assert_array_equal(a, b)
    assert a.shape == (2, 10) and (a >= 0).all() and (a < VOCAB).all()
