"""Hand-built ONNX Runtime encoder-decoder generation models (``com.microsoft`` BeamSearch /
GreedySearch with ``model_type`` 1, the T5 contract of ``convert_generation``): a tiny
random-weight T5-like encoder and decoder of standard ONNX ops, one layer, two heads.

Two encoder forms, as ONNX Runtime reads them:

- legacy (``--separate_encoder_and_decoder_init`` off in old exports): inputs
  ``encoder_input_ids, encoder_attention_mask, decoder_input_ids``; outputs ``logits,
  encoder_hidden_states, present_key_self_0, present_value_self_0, present_key_cross_0,
  present_value_cross_0`` (the first decoder step is inside the encoder);
- current: inputs ``encoder_input_ids, encoder_attention_mask``; outputs
  ``present_key_cross_0, present_value_cross_0`` only.

The decoder: inputs ``input_ids`` [B, 1], ``encoder_attention_mask``, optionally
``encoder_hidden_states``, ``past_key_self_0, past_value_self_0, past_key_cross_0,
past_value_cross_0``; outputs ``logits, present_key_self_0, present_value_self_0``."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

VOCAB, HIDDEN, HEADS = 24, 8, 2
HEAD = HIDDEN // HEADS


class _Builder:
    def __init__(self, rng, prefix=""):
        self.rng, self.nodes, self.inits, self.n = rng, [], [], 0
        self.prefix = prefix

    def w(self, *shape, s=1.0):
        name = f"{self.prefix}w{len(self.inits)}"
        self.inits.append(nh.from_array((s * self.rng.standard_normal(shape)).astype(np.float32),
                                        name))
        return name

    def c(self, arr):
        name = f"{self.prefix}c{len(self.inits)}"
        self.inits.append(nh.from_array(np.asarray(arr), name))
        return name

    def op(self, op, ins, out=None, **attrs):
        if out is None:
            self.n += 1
            out = f"{self.prefix}t{self.n}"
        self.nodes.append(h.make_node(op, ins, [out], **attrs))
        return out

    def heads(self, x, out=None):
        """[B, S, HIDDEN] -> [B, HEADS, S, HEAD]."""
        r = self.op("Reshape", [x, self.c(np.array([0, -1, HEADS, HEAD], np.int64))])
        return self.op("Transpose", [r], out, perm=[0, 2, 1, 3])

    def attend(self, q, k, v, bias=None):
        """softmax(q k^T / sqrt(HEAD) + bias) v over [B, HEADS, *, HEAD]."""
        kt = self.op("Transpose", [k], perm=[0, 1, 3, 2])
        s = self.op("Mul", [self.op("MatMul", [q, kt]),
                            self.c(np.array(HEAD ** -0.5, np.float32))])
        if bias is not None:
            s = self.op("Add", [s, bias])
        return self.op("MatMul", [self.op("Softmax", [s], axis=-1), v])


def _weights(seed):
    rng = np.random.default_rng(seed)
    return {k: (s * rng.standard_normal(shape)).astype(np.float32) for k, shape, s in [
        ("enc_emb", (VOCAB, HIDDEN), 1.0), ("enc_w", (HIDDEN, HIDDEN), 0.6),
        ("ck", (HIDDEN, HIDDEN), 0.6), ("cv", (HIDDEN, HIDDEN), 0.6),
        ("dec_emb", (VOCAB, HIDDEN), 1.0), ("sq", (HIDDEN, HIDDEN), 0.6),
        ("sk", (HIDDEN, HIDDEN), 0.6), ("sv", (HIDDEN, HIDDEN), 0.6),
        ("cq", (HIDDEN, HIDDEN), 0.6), ("hid", (HIDDEN, HIDDEN), 0.3),
        ("out", (HIDDEN, VOCAB), 2.0)]}


def _mask_bias(b: _Builder, mask):
    """[B, S] int mask -> [B, 1, 1, S] additive bias (0 or -1e4)."""
    m = b.op("Cast", [mask], to=T.FLOAT)
    m = b.op("Unsqueeze", [m, b.c(np.array([1, 2], np.int64))])
    return b.op("Mul", [b.op("Sub", [m, b.c(np.array(1.0, np.float32))]),
                        b.c(np.array(1e4, np.float32))])


def _encode(b: _Builder, W, ids, mask):
    """encoder_hidden_states [B, S, HIDDEN] and the cross key / value [B, HEADS, S, HEAD]."""
    e = b.op("Gather", [b.c(W["enc_emb"]), ids])
    hs = b.op("Tanh", [b.op("MatMul", [e, b.c(W["enc_w"])])])
    mf = b.op("Unsqueeze", [b.op("Cast", [mask], to=T.FLOAT), b.c(np.array([2], np.int64))])
    return b.op("Mul", [hs, mf])


def _cross(b: _Builder, W, hs, names):
    k = b.heads(b.op("MatMul", [hs, b.c(W["ck"])]), names[0])
    v = b.heads(b.op("MatMul", [hs, b.c(W["cv"])]), names[1])
    return k, v


def _step(b: _Builder, W, ids, mask, past_k, past_v, ck, cv, hs, present):
    """One decoder step: logits [B, 1, VOCAB] and the grown self key / value."""
    x = b.op("Gather", [b.c(W["dec_emb"]), ids])                          # B,1,H
    if hs is not None:  # the decoder reads encoder_hidden_states: add its masked mean
        m = b.op("ReduceMean", [hs, b.c(np.array([1], np.int64))], keepdims=1)
        x = b.op("Add", [x, b.op("MatMul", [m, b.c(W["hid"])])])
    q = b.heads(b.op("MatMul", [x, b.c(W["sq"])]))
    k = b.heads(b.op("MatMul", [x, b.c(W["sk"])]))
    v = b.heads(b.op("MatMul", [x, b.c(W["sv"])]))
    if past_k is not None:
        k = b.op("Concat", [past_k, k], present[0], axis=2)
        v = b.op("Concat", [past_v, v], present[1], axis=2)
    else:
        k = b.op("Identity", [k], present[0])
        v = b.op("Identity", [v], present[1])
    a = b.attend(q, k, v)
    qc = b.heads(b.op("MatMul", [x, b.c(W["cq"])]))
    a2 = b.attend(qc, ck, cv, _mask_bias(b, mask))
    y = b.op("Transpose", [b.op("Add", [a, a2])], perm=[0, 2, 1, 3])
    y = b.op("Reshape", [y, b.c(np.array([0, 0, HIDDEN], np.int64))])
    return b.op("MatMul", [b.op("Add", [y, x]), b.c(W["out"])], "logits")


def _fused_step(b: _Builder, W, ids, mask, past_k, past_v, ck, cv, hs, present):
    """`_step` as ORT's T5 fusion writes it: SimplifiedLayerNormalization, a self
    MultiHeadAttention with past_key / past_value -> present_key / present_value, a cross
    MultiHeadAttention on the cross keys / values in heads with the key padding mask,
    SkipSimplifiedLayerNormalization (``scale`` 1 as T5 has none: scaled weights here)."""
    x = b.op("Gather", [b.c(W["dec_emb"]), ids])
    if hs is not None:
        m = b.op("ReduceMean", [hs, b.c(np.array([1], np.int64))], keepdims=1)
        x = b.op("Add", [x, b.op("MatMul", [m, b.c(W["hid"])])])
    xn = b.op("SimplifiedLayerNormalization", [x, b.c(np.linspace(0.5, 1.5, HIDDEN)
                                                      .astype(np.float32))],
              axis=-1, epsilon=1e-6)
    q = b.op("MatMul", [xn, b.c(W["sq"] * HEAD ** -0.5)])
    k = b.op("MatMul", [xn, b.c(W["sk"])])
    v = b.op("MatMul", [xn, b.c(W["sv"])])
    ins = [q, k, v] + ([] if past_k is None else ["", "", "", past_k, past_v])
    a = f"{b.prefix}self_attn"
    b.nodes.append(h.make_node("MultiHeadAttention", ins, [a, *present],
                               domain="com.microsoft", num_heads=HEADS, scale=1.0))
    qc = b.op("MatMul", [xn, b.c(W["cq"] * HEAD ** -0.5)])
    a2 = f"{b.prefix}cross_attn"
    b.nodes.append(h.make_node("MultiHeadAttention", [qc, ck, cv, "", mask], [a2],
                               domain="com.microsoft", num_heads=HEADS, scale=1.0,
                               mask_filter_value=-1e4))
    y = f"{b.prefix}skip_norm"
    b.nodes.append(h.make_node("SkipSimplifiedLayerNormalization",
                               [b.op("Add", [a, a2]), x,
                                b.c(np.linspace(1.2, 0.8, HIDDEN).astype(np.float32))],
                               [y], domain="com.microsoft", epsilon=1e-6))
    return b.op("MatMul", [y, b.c(W["out"])], "logits")


def _vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


SELF = ["present_key_self_0", "present_value_self_0"]
CROSS = ["present_key_cross_0", "present_value_cross_0"]


def encoder(seed: int = 0, legacy: bool = True, fused: bool = False) -> onnx.GraphProto:
    W = _weights(seed)
    b = _Builder(np.random.default_rng(seed), "e_")
    hs = _encode(b, W, "encoder_input_ids", "encoder_attention_mask")
    ck, cv = _cross(b, W, hs, CROSS)
    ins = [_vi("encoder_input_ids", T.INT32, ["B", "S"]),
           _vi("encoder_attention_mask", T.INT32, ["B", "S"])]
    kv = [HEADS, None, HEAD]
    cross_out = [_vi(n, T.FLOAT, ["B", HEADS, "S", HEAD]) for n in CROSS]
    if not legacy:
        return h.make_graph(b.nodes, "t5 encoder", ins, cross_out, b.inits)
    b.op("Identity", [hs], "encoder_hidden_states")
    (_fused_step if fused else _step)(b, W, "decoder_input_ids", "encoder_attention_mask",
                                      None, None, ck, cv, "encoder_hidden_states", SELF)
    ins.append(_vi("decoder_input_ids", T.INT32, ["B", 1]))
    del kv
    outs = [_vi("logits", T.FLOAT, ["B", 1, VOCAB]),
            _vi("encoder_hidden_states", T.FLOAT, ["B", "S", HIDDEN])]
    outs += [_vi(n, T.FLOAT, ["B", HEADS, 1, HEAD]) for n in SELF] + cross_out
    return h.make_graph(b.nodes, "t5 encoder and decoder init", ins, outs, b.inits)


def decoder(seed: int = 0, hidden_states: bool = True, ids_len=1,
            fused: bool = False) -> onnx.GraphProto:
    W = _weights(seed)
    b = _Builder(np.random.default_rng(seed), "d_")
    hs = "encoder_hidden_states" if hidden_states else None
    (_fused_step if fused else _step)(
        b, W, "input_ids", "encoder_attention_mask", "past_key_self_0", "past_value_self_0",
        "past_key_cross_0", "past_value_cross_0", hs, SELF)
    ins = [_vi("input_ids", T.INT32, ["B", ids_len]),
           _vi("encoder_attention_mask", T.INT32, ["B", "S"])]
    if hidden_states:
        ins.append(_vi("encoder_hidden_states", T.FLOAT, ["B", "S", HIDDEN]))
    ins += [_vi("past_key_self_0", T.FLOAT, ["B", HEADS, "P", HEAD]),
            _vi("past_value_self_0", T.FLOAT, ["B", HEADS, "P", HEAD]),
            _vi("past_key_cross_0", T.FLOAT, ["B", HEADS, "S", HEAD]),
            _vi("past_value_cross_0", T.FLOAT, ["B", HEADS, "S", HEAD])]
    outs = [_vi("logits", T.FLOAT, ["B", 1, VOCAB])]
    outs += [_vi(n, T.FLOAT, ["B", HEADS, "T", HEAD]) for n in SELF]
    return h.make_graph(b.nodes, "t5 decoder", ins, outs, b.inits)


_TYPES = {"max_length": (T.INT32, [1]), "min_length": (T.INT32, [1]),
          "num_beams": (T.INT32, [1]), "num_return_sequences": (T.INT32, [1]),
          "length_penalty": (T.FLOAT, [1]), "repetition_penalty": (T.FLOAT, [1]),
          "vocab_mask": (T.INT32, [VOCAB]), "prefix_vocab_mask": (T.INT32, ["B", VOCAB]),
          "attention_mask": (T.INT32, ["B", "S"])}
ORDER = {"GreedySearch": ["input_ids", "max_length", "min_length", "repetition_penalty",
                          "vocab_mask", "prefix_vocab_mask", "attention_mask"],
         "BeamSearch": ["input_ids", "max_length", "min_length", "num_beams",
                        "num_return_sequences", "length_penalty", "repetition_penalty",
                        "vocab_mask", "prefix_vocab_mask", "attention_mask"]}


def t5_model(op: str, inputs: list[str], *, legacy: bool = True, hidden_states: bool = True,
             opset_import: bool = True, seed: int = 0, ids_len=1, fused: bool = False,
             **attrs) -> onnx.ModelProto:
    """One `op` node (model_type 1) with graph inputs ``input_ids`` + `inputs`."""
    names = ["input_ids"] + list(inputs)
    node_in = [n if n in names else "" for n in ORDER[op]]
    while node_in and node_in[-1] == "":
        node_in.pop()
    outs = ["sequences"] + (["sequences_scores"] if op == "BeamSearch" else [])
    attrs.setdefault("eos_token_id", 1)
    attrs.setdefault("pad_token_id", 0)
    attrs.setdefault("decoder_start_token_id", 2)
    node = h.make_node(op, node_in, outs, domain="com.microsoft", name=f"{op}_t5",
                       encoder=encoder(seed, legacy, fused),
                       decoder=decoder(seed, hidden_states and legacy, ids_len, fused),
                       **{"model_type": 1, **attrs})
    gin = [_vi("input_ids", T.INT32, ["B", "S"])]
    gin += [_vi(n, *_TYPES[n]) for n in inputs]
    gout = [_vi("sequences", T.INT32, None)]
    if op == "BeamSearch":
        gout.append(_vi("sequences_scores", T.FLOAT, None))
    g = h.make_graph([node], "t5 generation", gin, gout)
    ops = [h.make_opsetid("", 18)]
    if opset_import:
        ops.append(h.make_opsetid("com.microsoft", 1))
    return h.make_model(g, opset_imports=ops, ir_version=8)
