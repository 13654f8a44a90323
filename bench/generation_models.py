"""Tiny GPT-2-style decoders with random weights (fixed seeds), in the two forms generation
files take:

- `fused_decoder` + `search_model`: ONNX Runtime's ``com.microsoft`` GreedySearch /
  BeamSearch / Sampling over a decoder holding ORT's fused transformer ops (LayerNormalization,
  Attention with ``past_l`` -> ``present_l``, SkipLayerNormalization, FastGelu), as
  ``onnxruntime.transformers.convert_generation`` writes it after the transformer optimizer;
- `loop_model`: a standard-ONNX greedy decoder: a prefill on the prompt, then an ONNX Loop
  whose body runs one decoder step on the last token, the per-layer K/V caches growing by
  Concat, the next token by ArgMax (standard ops only: LayerNormalization, MatMul, Softmax,
  tanh GELU).

The same weights feed both forms (`weights`); the tests in tests/generation use
`fused_decoder` at its default sizes.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

MS = "com.microsoft"


def weights(vocab: int, hidden: int, layers: int = 1, seed: int = 3,
            positions: int = 64) -> dict[str, np.ndarray]:
    """The decoder's initializers by name, drawn in a fixed order (layer 0 unsuffixed)."""
    rng = np.random.default_rng(seed)
    H = hidden
    out: dict[str, np.ndarray] = {}

    def w(name, *shape, s=1.0):
        out[name] = (s * rng.standard_normal(shape)).astype(np.float32)

    w("emb", vocab, H)
    w("pos", positions, H, s=0.5)
    for layer in range(layers):
        x = f"_{layer}" if layer else ""
        w("ln_g" + x, H), w("ln_b" + x, H), w("qkv_w" + x, H, 3 * H, s=0.4)
        w("qkv_b" + x, 3 * H), w("proj_w" + x, H, H, s=0.4), w("proj_b" + x, H)
        w("ln2_g" + x, H), w("ln2_b" + x, H), w("fc_w" + x, H, 4 * H, s=0.4)
        w("fc_b" + x, 4 * H), w("out_w" + x, 4 * H, H, s=0.3)
    w("lnf_g", H), w("lnf_b", H), w("lm", H, vocab, s=2.0)
    return out


def _sfx(layer: int) -> str:
    return f"_{layer}" if layer else ""


def fused_decoder(vocab: int = 24, hidden: int = 16, heads: int = 2, layers: int = 1,
                  seed: int = 3) -> onnx.GraphProto:
    """GPT-2 blocks between an embedding and a logits MatMul, with ORT's fused ops; the GPT
    contract of the generation ops: inputs input_ids, position_ids, attention_mask, past_l;
    outputs logits, present_l (``[2, B, heads, T, head_size]``)."""
    W = weights(vocab, hidden, layers, seed)
    inits = [nh.from_array(v, k) for k, v in W.items()]
    nodes = [
        h.make_node("Gather", ["emb", "input_ids"], ["e"]),
        h.make_node("Gather", ["pos", "position_ids"], ["p"]),
        h.make_node("Add", ["e", "p"], ["x"]),
        h.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], epsilon=1e-5),
    ]
    res, ln = "x", "ln"
    for layer in range(layers):
        x = _sfx(layer)
        last = layer == layers - 1
        nodes += [
            h.make_node("Attention", [ln, "qkv_w" + x, "qkv_b" + x, "attention_mask",
                                      f"past_{layer}"], ["att" + x, f"present_{layer}"],
                        domain=MS, num_heads=heads, unidirectional=1),
            h.make_node("MatMul", ["att" + x, "proj_w" + x], ["proj" + x]),
            h.make_node("SkipLayerNormalization",
                        ["proj" + x, res, "ln2_g" + x, "ln2_b" + x, "proj_b" + x],
                        ["ln2" + x, "", "", "res" + x], domain=MS, epsilon=1e-5),
            h.make_node("MatMul", ["ln2" + x, "fc_w" + x], ["fc" + x]),
            h.make_node("FastGelu", ["fc" + x, "fc_b" + x], ["act" + x], domain=MS),
            h.make_node("MatMul", ["act" + x, "out_w" + x], ["mlp" + x]),
        ]
        g, b = ("lnf_g", "lnf_b") if last else (f"ln_g_{layer + 1}", f"ln_b_{layer + 1}")
        nxt = "hf" if last else f"ln_{layer + 1}"
        outs = [nxt] if last else [nxt, "", "", f"r_{layer + 1}"]
        nodes.append(h.make_node("SkipLayerNormalization", ["mlp" + x, "res" + x, g, b], outs,
                                 domain=MS, epsilon=1e-5))
        res, ln = f"r_{layer + 1}", nxt
    nodes.append(h.make_node("MatMul", ["hf", "lm"], ["logits"]))
    hd = hidden // heads
    inputs = [h.make_tensor_value_info("input_ids", T.INT32, ["B", "S"]),
              h.make_tensor_value_info("position_ids", T.INT32, ["B", "S"]),
              h.make_tensor_value_info("attention_mask", T.INT32, ["B", "T"])]
    inputs += [h.make_tensor_value_info(f"past_{i}", T.FLOAT, [2, "B", heads, "P", hd])
               for i in range(layers)]
    outputs = [h.make_tensor_value_info("logits", T.FLOAT, ["B", "S", vocab])]
    outputs += [h.make_tensor_value_info(f"present_{i}", T.FLOAT, [2, "B", heads, "T", hd])
                for i in range(layers)]
    return h.make_graph(nodes, "decoder", inputs, outputs, inits)


_ORDER = {"GreedySearch": ["input_ids", "max_length", "min_length", "repetition_penalty",
                           "vocab_mask", "prefix_vocab_mask", "attention_mask"],
          "BeamSearch": ["input_ids", "max_length", "min_length", "num_beams",
                         "num_return_sequences", "length_penalty", "repetition_penalty",
                         "vocab_mask", "prefix_vocab_mask", "attention_mask"],
          "Sampling": ["input_ids", "max_length", "min_length", "repetition_penalty",
                       "vocab_mask", "prefix_vocab_mask", "attention_mask", "presence_mask",
                       "seed"]}
_TYPES = {"input_ids": (T.INT32, ["B", "S"]), "max_length": (T.INT32, [1]),
          "min_length": (T.INT32, [1]), "num_beams": (T.INT32, [1]),
          "num_return_sequences": (T.INT32, [1]), "length_penalty": (T.FLOAT, [1]),
          "repetition_penalty": (T.FLOAT, [1]),
          "attention_mask": (T.INT32, ["B", "S"]), "seed": (T.INT32, [1]),
          "presence_mask": (T.INT32, ["B", "V"]), "vocab_mask": (T.INT32, ["V"]),
          "prefix_vocab_mask": (T.INT32, ["B", "V"])}


def search_model(op: str, decoder: onnx.GraphProto, inputs: list[str],
                 **attrs) -> onnx.ModelProto:
    """One `op` node (GreedySearch / BeamSearch / Sampling, GPT model_type 0) over `decoder`,
    with graph inputs `inputs` (input_ids first) at their places in the op's input list."""
    node_in = [n if n in inputs else "" for n in _ORDER[op]]
    while node_in[-1] == "":
        node_in.pop()
    outs = ["sequences"]
    attrs.setdefault("eos_token_id", 1)
    attrs.setdefault("pad_token_id", 0)
    node = h.make_node(op, node_in, outs, domain=MS, decoder=decoder,
                       **{"model_type": 0, **attrs})
    g = h.make_graph([node], "gen", [h.make_tensor_value_info(n, *_TYPES[n]) for n in inputs],
                     [h.make_tensor_value_info("sequences", T.INT32, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(MS, 1)],
                        ir_version=9)


# ----------------------------------------------------------------------------- standard ONNX


class _Nodes:
    def __init__(self, prefix: str):
        self.nodes: list[onnx.NodeProto] = []
        self.prefix = prefix

    def __call__(self, op, inputs, n_out=1, name=None, **attrs):
        base = name or f"{self.prefix}{op.lower()}{len(self.nodes)}"
        outs = [base] if n_out == 1 else [f"{base}_{i}" for i in range(n_out)]
        self.nodes.append(h.make_node(op, inputs, outs, **attrs))
        return outs[0] if n_out == 1 else outs


def _std_decoder(n: _Nodes, x: str, pasts: list[tuple[str, str]] | None, mask: str | None,
                 layers: int, heads: int, hidden: int) -> tuple[str, list[tuple[str, str]]]:
    """Decoder blocks on `x` [B, S, H] with standard ops: logits [B, S, V] and the presents
    (K and V of each layer, [B, heads, T, head_size], grown by Concat from `pasts`)."""
    presents = []
    ln = n("LayerNormalization", [x, "ln_g", "ln_b"], epsilon=1e-5)
    res = x
    for layer in range(layers):
        s = _sfx(layer)
        qkv = n("Add", [n("MatMul", [ln, "qkv_w" + s]), "qkv_b" + s])
        q, k, v = n("Split", [qkv, "c_split3"], 3, axis=2)
        q, k, v = (n("Transpose", [n("Reshape", [t, "c_heads"])], perm=[0, 2, 1, 3])
                   for t in (q, k, v))
        if pasts is not None:
            k = n("Concat", [pasts[layer][0], k], axis=2)
            v = n("Concat", [pasts[layer][1], v], axis=2)
        presents.append((k, v))
        sc = n("Mul", [n("MatMul", [q, n("Transpose", [k], perm=[0, 1, 3, 2])]), "c_scale"])
        if mask is not None:
            sc = n("Add", [sc, mask])
        att = n("MatMul", [n("Softmax", [sc], axis=-1), v])
        att = n("Reshape", [n("Transpose", [att], perm=[0, 2, 1, 3]), "c_merge"])
        proj = n("Add", [n("MatMul", [att, "proj_w" + s]), "proj_b" + s])
        res = n("Add", [proj, res])
        ln2 = n("LayerNormalization", [res, "ln2_g" + s, "ln2_b" + s], epsilon=1e-5)
        fc = n("Add", [n("MatMul", [ln2, "fc_w" + s]), "fc_b" + s])
        # GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        inner = n("Mul", [n("Add", [fc, n("Mul", [n("Pow", [fc, "c_three"]), "c_gelu_a"])]),
                          "c_gelu_b"])
        act = n("Mul", [n("Mul", [fc, "c_half"]), n("Add", [n("Tanh", [inner]), "c_one"])])
        res = n("Add", [n("MatMul", [act, "out_w" + s]), res])
        g, b = ("lnf_g", "lnf_b") if layer == layers - 1 else (f"ln_g_{layer + 1}",
                                                                f"ln_b_{layer + 1}")
        ln = n("LayerNormalization", [res, g, b], epsilon=1e-5)
    return n("MatMul", [ln, "lm"]), presents


def loop_model(vocab: int, hidden: int, heads: int, layers: int = 1, seed: int = 3,
               beams: int = 0) -> onnx.ModelProto:
    """Greedy (`beams` 0) or beam decoding as standard ONNX (opset 17): inputs ``input_ids``
    int64 [B, S] (B 1 for beams) and ``max_new`` int64 scalar (>= 1); output ``tokens`` int64
    [B, max_new]. The prompt is run once (causal mask), then a Loop of ``max_new`` steps, each
    picking tokens from the logits carried in and running the decoder on them (the last
    step's logits unused, as in the loops exporters write), its K/V caches carried and grown
    by Concat. Greedy: ArgMax. Beams: LogSoftmax plus the beams' scores, TopK over beams x
    vocab, beams and caches reordered by Gather, sequences grown by Concat; the best beam's
    tokens returned (no end token: every beam runs ``max_new`` steps)."""
    W = weights(vocab, hidden, layers, seed)
    hd, P = hidden // heads, W["pos"].shape[0]
    causal = np.triu(np.full((P, P), -1e9, np.float32), 1)
    consts = {"c_split3": np.array([hidden] * 3, np.int64),
              "c_heads": np.array([0, 0, heads, hd], np.int64),
              "c_merge": np.array([0, 0, hidden], np.int64),
              "c_scale": np.array(1 / np.sqrt(hd), np.float32),
              "c_three": np.array(3, np.float32), "c_gelu_a": np.array(0.044715, np.float32),
              "c_gelu_b": np.array(np.sqrt(2 / np.pi), np.float32),
              "c_half": np.array(0.5, np.float32), "c_one": np.array(1, np.float32),
              "c_causal": causal, "c_i0": np.array(0, np.int64), "c_i1": np.array(1, np.int64),
              "c_last": np.array(-1, np.int64), "c_ax0": np.array([0], np.int64),
              "c_ax2": np.array([2], np.int64), "c_zero2": np.array([0, 0], np.int64),
              "c_ax1": np.array([1], np.int64)}
    if beams:
        consts.update({"c_tile2": np.array([beams, 1], np.int64),
                       "c_tile4": np.array([beams, 1, 1, 1], np.int64),
                       "c_scores0": np.array([0] + [-1e9] * (beams - 1), np.float32),
                       "c_seqs0": np.zeros((beams, 1), np.int64),
                       "c_flat": np.array([-1], np.int64), "c_k": np.array([beams], np.int64),
                       "c_vocab": np.array(vocab, np.int64),
                       "c_best": np.array([0, 1], np.int64),
                       "c_end": np.array([1, 1 << 30], np.int64),
                       "c_ax01": np.array([0, 1], np.int64)})

    # prefill
    n = _Nodes("pre_")
    S = n("Gather", [n("Shape", ["input_ids"]), "c_i1"], axis=0)
    x = n("Add", [n("Gather", ["emb", "input_ids"]),
                  n("Gather", ["pos", n("Range", ["c_i0", S, "c_i1"])])])
    S1 = n("Unsqueeze", [S, "c_ax0"])
    mask = n("Slice", ["c_causal", "c_zero2", n("Concat", [S1, S1], axis=0)])
    logits, presents = _std_decoder(n, x, None, mask, layers, heads, hidden)
    last0 = n("Gather", [logits, "c_last"], axis=1)               # [B, V]

    pre_caches = [t for kv in presents for t in kv]
    if beams:  # every beam starts from the prompt; only beam 0 counts at the first step
        last0 = n("Tile", [last0, "c_tile2"])
        pre_caches = [n("Tile", [t, "c_tile4"]) for t in pre_caches]

    # the loop body: one token
    b = _Nodes("step_")
    pasts = [(f"k{i}", f"v{i}") for i in range(layers)]
    extra_in, extra_out = [], []
    if beams:
        tot = b("Add", [b("LogSoftmax", ["last"], axis=-1), b("Unsqueeze", ["scores", "c_ax1"])])
        top, idx = b("TopK", [b("Reshape", [tot, "c_flat"]), "c_k"], 2, axis=0)
        beam = b("Div", [idx, "c_vocab"])
        tok = b("Unsqueeze", [b("Mod", [idx, "c_vocab"]), "c_ax1"])   # [beams, 1]
        b.nodes += [h.make_node("Identity", [top], ["scores_out"]),
                    h.make_node("Concat", [b("Gather", ["seqs", beam], axis=0), tok],
                                ["seqs_out"], axis=1)]
        pasts = [(b("Gather", [k, beam], axis=0), b("Gather", [v, beam], axis=0))
                 for k, v in pasts]
        extra_in = [h.make_tensor_value_info("scores", T.FLOAT, [beams]),
                    h.make_tensor_value_info("seqs", T.INT64, [beams, None])]
        extra_out = [h.make_tensor_value_info("scores_out", T.FLOAT, [beams]),
                     h.make_tensor_value_info("seqs_out", T.INT64, [beams, None])]
    else:
        tok = b("ArgMax", ["last"], axis=-1, keepdims=1)             # [B, 1]
    bx = b("Add", [b("Gather", ["emb", tok]),
                   b("Gather", ["pos", b("Unsqueeze", ["at", "c_ax0"])])])
    blogits, bpres = _std_decoder(b, bx, pasts, None, layers, heads, hidden)
    nxt = b("Gather", [blogits, "c_last"], axis=1)
    b.nodes += [h.make_node("Identity", ["cond"], ["cond_out"]),
                h.make_node("Add", ["at", "c_i1"], ["at_out"]),
                h.make_node("Identity", [nxt], ["last_out"])]
    if not beams:
        b.nodes.append(h.make_node("Identity", [tok], ["tok_scan"]))
    for i, (k, v) in enumerate(bpres):
        b.nodes += [h.make_node("Identity", [k], [f"k{i}_out"]),
                    h.make_node("Identity", [v], [f"v{i}_out"])]
    cache = [T.FLOAT, ["B", heads, None, hd]]
    body_in = [h.make_tensor_value_info("i", T.INT64, []),
               h.make_tensor_value_info("cond", T.BOOL, []),
               h.make_tensor_value_info("last", T.FLOAT, ["B", vocab]),
               h.make_tensor_value_info("at", T.INT64, [])]
    body_out = [h.make_tensor_value_info("cond_out", T.BOOL, []),
                h.make_tensor_value_info("last_out", T.FLOAT, ["B", vocab]),
                h.make_tensor_value_info("at_out", T.INT64, [])]
    body_in += extra_in
    body_out += extra_out
    for i in range(layers):
        body_in += [h.make_tensor_value_info(f"k{i}", *cache),
                    h.make_tensor_value_info(f"v{i}", *cache)]
        body_out += [h.make_tensor_value_info(f"k{i}_out", *cache),
                     h.make_tensor_value_info(f"v{i}_out", *cache)]
    if not beams:
        body_out.append(h.make_tensor_value_info("tok_scan", T.INT64, ["B", 1]))
    body = h.make_graph(b.nodes, "step", body_in, body_out)

    carried = [last0, S] + (["c_scores0", "c_seqs0"] if beams else []) + pre_caches
    loop_out = [f"loop_out{i}" for i in range(len(carried))]
    if beams:  # the best beam (TopK sorts), less the placeholder column
        n.nodes.append(h.make_node("Loop", ["max_new", "", *carried], loop_out, body=body))
        n.nodes.append(h.make_node("Slice", [loop_out[3], "c_best", "c_end", "c_ax01"],
                                   ["tokens"]))
    else:
        n.nodes.append(h.make_node("Loop", ["max_new", "", *carried], loop_out + ["scan_toks"],
                                   body=body))
        n.nodes.append(h.make_node("Transpose", [n("Squeeze", ["scan_toks", "c_ax2"])],
                                   ["tokens"], perm=[1, 0]))            # [B, max_new]
    used = {i for nd in n.nodes + b.nodes for i in nd.input}
    inits = [nh.from_array(v, k) for k, v in {**W, **consts}.items() if k in used]
    g = h.make_graph(n.nodes, "beam_loop" if beams else "greedy_loop",
                     [h.make_tensor_value_info("input_ids", T.INT64, ["B", "S"]),
                      h.make_tensor_value_info("max_new", T.INT64, [])],
                     [h.make_tensor_value_info("tokens", T.INT64, ["B", "N"])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
