"""The default engine ("auto") on ONNX Runtime's generation operators: a generation file is
compiled work (a loop over the tokens), so "auto" answers its first calls on NumPy while the
search compiles behind them, then runs it on JAX, measured faster, with ONNX Runtime's
tokens on both engines."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import itergraph as ig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generation_models as gm  # noqa: E402

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("jax")
I32 = np.int32


def test_auto_runs_a_greedy_search_on_jax_once_compiled(monkeypatch):
    from itergraph.tiered import TRIALS, TieredRunner

    monkeypatch.delenv("ITERGRAPH_BACKEND", raising=False)
    ids = np.array([[5, 7, 3, 9], [4, 11, 5, 2]], I32)
    feeds = {"input_ids": ids, "max_length": np.array([40], I32),
             "attention_mask": np.ones_like(ids)}
    # eos out of the vocabulary: every call makes 36 tokens, the NumPy kernel a step each
    model = gm.search_model("GreedySearch", gm.fused_decoder(seed=5), list(feeds),
                            eos_token_id=99)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    sess = ig.load(model).compile()
    runner = sess._call
    assert sess.backend == "jax" and isinstance(runner, TieredRunner)
    np.testing.assert_array_equal(sess.run(feeds)["sequences"], want)  # NumPy's answer
    assert runner.engine_for(feeds) is None  # the search compiles behind the call
    for _ in range(2 * TRIALS + 4):  # JAX's warm-up call, then both engines timed per call
        runner.wait(120)  # (max_length's value, known after the first run, signs the program)
        np.testing.assert_array_equal(sess.run(feeds)["sequences"], want)
        if runner.engine_for(feeds) is not None:
            break
    assert runner.engine_for(feeds) == "jax"
    np.testing.assert_array_equal(sess.run(feeds)["sequences"], want)
