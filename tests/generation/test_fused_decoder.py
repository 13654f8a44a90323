"""GreedySearch and BeamSearch (``com.microsoft``) whose GPT-2 decoder holds ONNX Runtime's
fused transformer operators, as ``onnxruntime.transformers.convert_generation`` writes it
after the transformer optimizer: LayerNormalization, Attention (unidirectional, the
attention_mask, ``past_0`` -> ``present_0`` of shape ``[2, B, heads, T, head_size]``),
SkipLayerNormalization, FastGelu. ORT is the oracle."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import itergraph as ig

ort = pytest.importorskip("onnxruntime")

VOCAB, HIDDEN, HEADS = 24, 16, 2
MS = "com.microsoft"


def fused_decoder(seed: int = 3) -> onnx.GraphProto:
    """One GPT-2 block between an embedding and a logits MatMul (the seed chosen so that
    greedy decoding varies its tokens)."""
    rng = np.random.default_rng(seed)

    def w(name, *shape, s=1.0):
        return nh.from_array((s * rng.standard_normal(shape)).astype(np.float32), name)

    H = HIDDEN
    inits = [w("emb", VOCAB, H), w("pos", 64, H, s=0.5), w("ln_g", H), w("ln_b", H),
             w("qkv_w", H, 3 * H, s=0.4), w("qkv_b", 3 * H), w("proj_w", H, H, s=0.4),
             w("proj_b", H), w("ln2_g", H), w("ln2_b", H), w("fc_w", H, 4 * H, s=0.4),
             w("fc_b", 4 * H), w("out_w", 4 * H, H, s=0.3), w("lnf_g", H), w("lnf_b", H),
             w("lm", H, VOCAB, s=2.0)]
    nodes = [
        h.make_node("Gather", ["emb", "input_ids"], ["e"]),
        h.make_node("Gather", ["pos", "position_ids"], ["p"]),
        h.make_node("Add", ["e", "p"], ["x"]),
        h.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], epsilon=1e-5),
        h.make_node("Attention", ["ln", "qkv_w", "qkv_b", "attention_mask", "past_0"],
                    ["att", "present_0"], domain=MS, num_heads=HEADS, unidirectional=1),
        h.make_node("MatMul", ["att", "proj_w"], ["proj"]),
        h.make_node("SkipLayerNormalization", ["proj", "x", "ln2_g", "ln2_b", "proj_b"],
                    ["ln2", "", "", "res"], domain=MS, epsilon=1e-5),
        h.make_node("MatMul", ["ln2", "fc_w"], ["fc"]),
        h.make_node("FastGelu", ["fc", "fc_b"], ["act"], domain=MS),
        h.make_node("MatMul", ["act", "out_w"], ["mlp"]),
        h.make_node("SkipLayerNormalization", ["mlp", "res", "lnf_g", "lnf_b"], ["hf"],
                    domain=MS, epsilon=1e-5),
        h.make_node("MatMul", ["hf", "lm"], ["logits"]),
    ]
    hd = H // HEADS
    inputs = [h.make_tensor_value_info("input_ids", T.INT32, ["B", "S"]),
              h.make_tensor_value_info("position_ids", T.INT32, ["B", "S"]),
              h.make_tensor_value_info("attention_mask", T.INT32, ["B", "T"]),
              h.make_tensor_value_info("past_0", T.FLOAT, [2, "B", HEADS, "P", hd])]
    outputs = [h.make_tensor_value_info("logits", T.FLOAT, ["B", "S", VOCAB]),
               h.make_tensor_value_info("present_0", T.FLOAT, [2, "B", HEADS, "T", hd])]
    return h.make_graph(nodes, "decoder", inputs, outputs, inits)


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
