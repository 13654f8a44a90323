"""Hand-built ONNX Runtime generation models (``com.microsoft`` GreedySearch / BeamSearch /
Sampling) around a tiny GPT-style decoder: embedding Gather, a past that grows by Concat,
a mean over the past mixed in, MatMul to logits. Random weights, fixed seed."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

VOCAB, HIDDEN = 24, 8


def decoder(seed: int = 0) -> onnx.GraphProto:
    """GPT contract: inputs input_ids, position_ids, attention_mask, past_0; outputs logits,
    present_0 (past shape [2, B, 1, S, H])."""
    rng = np.random.default_rng(seed)
    emb = nh.from_array(rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32), "emb")
    pos = nh.from_array(rng.standard_normal((64, HIDDEN)).astype(np.float32) * 0.5, "pos")
    w = nh.from_array(rng.standard_normal((HIDDEN, VOCAB)).astype(np.float32) * 2, "w")
    ax = nh.from_array(np.array([2], np.int64), "ax2")
    ax0 = nh.from_array(np.array([0], np.int64), "ax0")
    nodes = [
        h.make_node("Gather", ["emb", "input_ids"], ["e"]),            # B,S,H
        h.make_node("Gather", ["pos", "position_ids"], ["p"]),
        h.make_node("Add", ["e", "p"], ["x"]),
        h.make_node("Unsqueeze", ["x", "ax0"], ["x0"]),                 # 1,B,S,H
        h.make_node("Unsqueeze", ["x0", "ax2"], ["x1"]),                # 1,B,1,S,H
        h.make_node("Concat", ["x1", "x1"], ["kv"], axis=0),            # 2,B,1,S,H
        h.make_node("Concat", ["past_0", "kv"], ["present_0"], axis=3),
        h.make_node("ReduceMean", ["present_0"], ["m"], axes=[0, 2, 3], keepdims=0),  # B,H
        h.make_node("Unsqueeze", ["m", "ax2"], ["m1"]),
        h.make_node("Transpose", ["m1"], ["m2"], perm=[0, 2, 1]),      # B,1,H
        h.make_node("Add", ["x", "m2"], ["y"]),
        h.make_node("MatMul", ["y", "w"], ["logits"]),
    ]
    nodes[7] = h.make_node("ReduceMean", ["present_0", "rax"], ["m"], keepdims=0)
    rax = nh.from_array(np.array([0, 2, 3], np.int64), "rax")
    inputs = [
        h.make_tensor_value_info("input_ids", T.INT32, ["B", "S"]),
        h.make_tensor_value_info("position_ids", T.INT32, ["B", "S"]),
        h.make_tensor_value_info("attention_mask", T.INT32, ["B", "T"]),
        h.make_tensor_value_info("past_0", T.FLOAT, [2, "B", 1, "P", HIDDEN]),
    ]
    outputs = [
        h.make_tensor_value_info("logits", T.FLOAT, ["B", "S", VOCAB]),
        h.make_tensor_value_info("present_0", T.FLOAT, [2, "B", 1, "T", HIDDEN]),
    ]
    return h.make_graph(nodes, "decoder", inputs, outputs, [emb, pos, w, ax, ax0, rax])


OPTIONAL = ["max_length", "min_length", "num_beams", "num_return_sequences", "length_penalty",
            "repetition_penalty", "vocab_mask", "prefix_vocab_mask", "attention_mask"]
_TYPES = {"max_length": (T.INT32, [1]), "min_length": (T.INT32, [1]),
          "num_beams": (T.INT32, [1]), "num_return_sequences": (T.INT32, [1]),
          "length_penalty": (T.FLOAT, [1]), "repetition_penalty": (T.FLOAT, [1]),
          "vocab_mask": (T.INT32, [VOCAB]), "prefix_vocab_mask": (T.INT32, ["B", VOCAB]),
          "attention_mask": (T.INT32, ["B", "S"]), "temperature": (T.FLOAT, [1]),
          "top_p": (T.FLOAT, [1]), "presence_mask": (T.INT32, ["B", VOCAB]),
          "seed": (T.INT32, [1])}


def generation_model(op: str, inputs: list[str], opset_import: bool = True,
                     init_seed: int | None = None, **attrs) -> onnx.ModelProto:
    """A model of one `op` node (GreedySearch / BeamSearch / Sampling) with graph inputs
    `inputs` (after input_ids) at their positions in the op's input list."""
    order = {"GreedySearch": ["input_ids", "max_length", "min_length", "repetition_penalty",
                              "vocab_mask", "prefix_vocab_mask", "attention_mask"],
             "BeamSearch": ["input_ids", "max_length", "min_length", "num_beams",
                            "num_return_sequences", "length_penalty", "repetition_penalty",
                            "vocab_mask", "prefix_vocab_mask", "attention_mask"],
             "Sampling": ["input_ids", "max_length", "min_length", "repetition_penalty",
                          "vocab_mask", "prefix_vocab_mask", "attention_mask",
                          "presence_mask", "seed"]}[op]
    names = ["input_ids"] + list(inputs)
    node_in = [n if n in names else "" for n in order]
    while node_in and node_in[-1] == "":
        node_in.pop()
    outs = ["sequences"] + (["sequences_scores"] if op == "BeamSearch" else [])
    attrs.setdefault("eos_token_id", 1)
    attrs.setdefault("pad_token_id", 0)
    if init_seed is not None:  # an init_decoder of other weights: run for the first step only
        attrs["init_decoder"] = decoder(init_seed)
    node = h.make_node(op, node_in, outs, domain="com.microsoft", decoder=decoder(),
                       **{"model_type": 0, **attrs})
    gin = [h.make_tensor_value_info("input_ids", T.INT32, ["B", "S"])]
    gin += [h.make_tensor_value_info(n, *_TYPES[n]) for n in inputs]
    gout = [h.make_tensor_value_info("sequences", T.INT32, None)]
    if op == "BeamSearch":
        gout.append(h.make_tensor_value_info("sequences_scores", T.FLOAT, None))
    g = h.make_graph([node], "gen", gin, gout)
    ops = [h.make_opsetid("", 18)]
    if opset_import:
        ops.append(h.make_opsetid("com.microsoft", 1))
    return h.make_model(g, opset_imports=ops, ir_version=9)
