"""GreedySearch and BeamSearch (``com.microsoft``) whose GPT-2 decoder holds ONNX Runtime's
fused transformer operators, as ``onnxruntime.transformers.convert_generation`` writes it
after the transformer optimizer: LayerNormalization, Attention (unidirectional, the
attention_mask, ``past_0`` -> ``present_0`` of shape ``[2, B, heads, T, head_size]``),
SkipLayerNormalization, FastGelu. ORT is the oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import generation_models  # noqa: E402

ort = pytest.importorskip("onnxruntime")

VOCAB, HIDDEN, HEADS = 24, 16, 2
MS = "com.microsoft"


def fused_decoder(seed: int = 3) -> onnx.GraphProto:
    """One GPT-2 block between an embedding and a logits MatMul (the seed chosen so that
    greedy decoding varies its tokens); built by bench/generation_models.py."""
    return generation_models.fused_decoder(VOCAB, HIDDEN, HEADS, layers=1, seed=seed)


def search_model(op: str, num_beams: int = 1) -> tuple[onnx.ModelProto, dict]:
    ids = np.array([[0, 4, 5], [6, 7, 8]], np.int32)
    feeds = {"input_ids": ids, "max_length": np.array([9], np.int32),
             "attention_mask": np.array([[0, 1, 1], [1, 1, 1]], np.int32)}
    if op == "BeamSearch":
        # ORT needs max_length .. length_penalty given (it reads "max_length is required")
        feeds.update(min_length=np.array([1], np.int32), num_beams=np.array([num_beams], np.int32),
                     num_return_sequences=np.array([1], np.int32),
                     length_penalty=np.array([1.0], np.float32))
        order = ["input_ids", "max_length", "min_length", "num_beams", "num_return_sequences",
                 "length_penalty", "", "", "", "attention_mask"]
    else:
        order = ["input_ids", "max_length", "", "", "", "", "attention_mask"]
    node = h.make_node(op, order, ["sequences"], domain=MS, decoder=fused_decoder(),
                       model_type=0, eos_token_id=1, pad_token_id=0)
    types = {"input_ids": (T.INT32, ["B", "S"]), "max_length": (T.INT32, [1]),
             "min_length": (T.INT32, [1]),
             "num_beams": (T.INT32, [1]), "num_return_sequences": (T.INT32, [1]),
             "length_penalty": (T.FLOAT, [1]), "attention_mask": (T.INT32, ["B", "S"])}
    gin = [h.make_tensor_value_info(k, *types[k]) for k in feeds]
    g = h.make_graph([node], "gen", gin, [h.make_tensor_value_info("sequences", T.INT32, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(MS, 1)],
                     ir_version=9)
    return m, feeds


@pytest.mark.parametrize("op,beams", [("GreedySearch", 1), ("BeamSearch", 3)])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_fused_decoder_search_matches_ort(op, beams, backend):
    model, feeds = search_model(op, beams)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = ig.load(model).run(feeds, backend=backend)["sequences"]
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want[..., 3:])) > 2  # a decoding that exercises the model
