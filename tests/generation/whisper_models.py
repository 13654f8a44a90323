"""A hand-built ONNX Runtime Whisper-style generation model (``com.microsoft`` BeamSearch with
``model_type`` 2): a tiny random-weight audio encoder over float features ``[B, FEATURES,
FRAMES]`` that also runs the first decoder step on ``decoder_input_ids`` (the forced prompt),
and a decoder of ORT's fused ops (MultiHeadAttention, causal for the prompt). Names as
ORT's Whisper export writes them: encoder inputs ``encoder_input_ids, decoder_input_ids``;
outputs ``logits, encoder_hidden_states, present_{key,value}_{self,cross}_*``; decoder inputs
``input_ids, encoder_hidden_states, past_{key,value}_{self,cross}_*``; outputs ``logits,
present_{key,value}_self_*``."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from t5_models import HEAD, HEADS, HIDDEN, VOCAB, _Builder, _vi, _weights

FEATURES, FRAMES = 6, 5


def _mha(b, q, k, v, out, past=None, present=None, **attrs):
    ins = [q, k, v] + ([] if past is None else ["", "", "", past[0], past[1]])
    b.nodes.append(h.make_node("MultiHeadAttention", ins, [out, *(present or [])],
                               domain="com.microsoft", num_heads=HEADS, **attrs))
    return out


def _dec_step(b, W, ids, hs, past, present, ck, cv):
    x = b.op("Gather", [b.c(W["dec_emb"]), ids])
    q = b.op("MatMul", [x, b.c(W["sq"])])
    k = b.op("MatMul", [x, b.c(W["sk"])])
    v = b.op("MatMul", [x, b.c(W["sv"])])
    a = _mha(b, q, k, v, f"{b.prefix}self", past, present, unidirectional=1)
    qc = b.op("MatMul", [x, b.c(W["cq"])])
    a2 = _mha(b, qc, ck, cv, f"{b.prefix}cross")
    if hs is None:
        y = b.op("Add", [b.op("Add", [a, a2]), x])
    else:
        m = b.op("ReduceMean", [hs, b.c(np.array([1], np.int64))], keepdims=1)
        y = b.op("Add", [b.op("Add", [a, a2]),
                         b.op("Add", [x, b.op("MatMul", [m, b.c(W["hid"])])])])
    return b.op("MatMul", [y, b.c(W["out"])], "logits")


def whisper_weights(seed):
    W = _weights(seed)
    rng = np.random.default_rng(seed + 100)
    W["feat"] = (rng.standard_normal((FEATURES, HIDDEN)) * 0.7).astype(np.float32)
    return W


def encoder(seed=0, hidden=True) -> onnx.GraphProto:
    W = whisper_weights(seed)
    b = _Builder(np.random.default_rng(seed), "e_")
    f = b.op("Transpose", ["encoder_input_ids"], perm=[0, 2, 1])          # B, FRAMES, F
    hs = b.op("Tanh", [b.op("MatMul", [f, b.c(W["feat"])])], "encoder_hidden_states")
    ck = b.heads(b.op("MatMul", [hs, b.c(W["ck"])]), "present_key_cross_0")
    cv = b.heads(b.op("MatMul", [hs, b.c(W["cv"])]), "present_value_cross_0")
    _dec_step(b, W, "decoder_input_ids", hs if hidden else None, None,
              ["present_key_self_0", "present_value_self_0"], ck, cv)
    ins = [_vi("encoder_input_ids", T.FLOAT, ["B", FEATURES, FRAMES]),
           _vi("decoder_input_ids", T.INT32, ["B", "P"])]
    outs = [_vi("logits", T.FLOAT, ["B", "P", VOCAB]),
            _vi("encoder_hidden_states", T.FLOAT, ["B", FRAMES, HIDDEN])]
    outs += [_vi(n, T.FLOAT, ["B", HEADS, "P", HEAD])
             for n in ("present_key_self_0", "present_value_self_0")]
    outs += [_vi(n, T.FLOAT, ["B", HEADS, FRAMES, HEAD])
             for n in ("present_key_cross_0", "present_value_cross_0")]
    return h.make_graph(b.nodes, "whisper encoder and decoder init", ins, outs, b.inits)


def decoder(seed=0, hidden=True) -> onnx.GraphProto:
    W = whisper_weights(seed)
    b = _Builder(np.random.default_rng(seed), "d_")
    _dec_step(b, W, "input_ids", "encoder_hidden_states" if hidden else None,
              ["past_key_self_0", "past_value_self_0"],
              ["present_key_self_0", "present_value_self_0"],
              "past_key_cross_0", "past_value_cross_0")
    ins = [_vi("input_ids", T.INT32, ["B", 1])]
    if hidden:
        ins.append(_vi("encoder_hidden_states", T.FLOAT, ["B", FRAMES, HIDDEN]))
    ins += [_vi("past_key_self_0", T.FLOAT, ["B", HEADS, "P", HEAD]),
           _vi("past_value_self_0", T.FLOAT, ["B", HEADS, "P", HEAD]),
           _vi("past_key_cross_0", T.FLOAT, ["B", HEADS, FRAMES, HEAD]),
           _vi("past_value_cross_0", T.FLOAT, ["B", HEADS, FRAMES, HEAD])]
    outs = [_vi("logits", T.FLOAT, ["B", 1, VOCAB])]
    outs += [_vi(n, T.FLOAT, ["B", HEADS, "T", HEAD])
             for n in ("present_key_self_0", "present_value_self_0")]
    return h.make_graph(b.nodes, "whisper decoder", ins, outs, b.inits)


ORDER = ["input_features", "max_length", "min_length", "num_beams", "num_return_sequences",
         "length_penalty", "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
         "attention_mask", "decoder_input_ids"]
_TYPES = {"input_features": (T.FLOAT, ["B", FEATURES, FRAMES]), "max_length": (T.INT32, [1]),
          "min_length": (T.INT32, [1]), "num_beams": (T.INT32, [1]),
          "num_return_sequences": (T.INT32, [1]), "length_penalty": (T.FLOAT, [1]),
          "repetition_penalty": (T.FLOAT, [1]), "vocab_mask": (T.INT32, [VOCAB]),
          "prefix_vocab_mask": (T.INT32, ["B", VOCAB]),
          "decoder_input_ids": (T.INT32, ["B", "P"])}


def whisper_model(inputs: list[str], seed: int = 0, hidden: bool = False,
                  **attrs) -> onnx.ModelProto:
    names = ["input_features"] + list(inputs)
    node_in = [n if n in names else "" for n in ORDER]
    while node_in[-1] == "":
        node_in.pop()
    attrs.setdefault("eos_token_id", 1)
    attrs.setdefault("pad_token_id", 0)
    attrs.setdefault("decoder_start_token_id", 2)
    attrs.setdefault("vocab_size", VOCAB)
    node = h.make_node("BeamSearch", node_in, ["sequences", "sequences_scores"],
                       domain="com.microsoft", name="BeamSearch_whisper",
                       encoder=encoder(seed, hidden), decoder=decoder(seed, hidden),
                       **{"model_type": 2, **attrs})
    gin = [_vi(n, *_TYPES[n]) for n in names]
    gout = [_vi("sequences", T.INT32, None), _vi("sequences_scores", T.FLOAT, None)]
    g = h.make_graph([node], "whisper generation", gin, gout)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18),
                                          h.make_opsetid("com.microsoft", 1)], ir_version=8)
