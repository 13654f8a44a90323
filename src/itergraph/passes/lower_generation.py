"""ONNX Runtime's ``com.microsoft.GreedySearch`` (decoder-only, ``model_type`` 0) as standard
ONNX operators: the first step on the prompt, then a ``Loop`` over the further tokens.

What the lowered nodes compute, in the terms of the NumPy kernel
(`backends.numpy.kernels.gen_greedy`, which matches ONNX Runtime)::

    ids = Cast(input_ids, int32)                                   # [B, S]
    mask = Cast(attention_mask, bool) if given else ids != pad
    pos = Where(mask, CumSum(mask, 1) - 1, 0)
    past_i = ConstantOfShape([2, B, heads, 0, head_size])         # the decoder's past_i
    logits, present.. = first_decoder(ids, pos, mask, past..)      # init_decoder, else decoder
    tok, done = pick(process(logits[:, -1], ids, first=True), done=False)
    ids = Concat(ids, tok)
    Loop(M = max_length - S - 1, cond = not all(done)):            # carried: tok, pos, mask,
        pos = pos[:, -1:] + 1; mask = Concat(mask, 1)              #   ids, done, present..
        logits, present.. = decoder(tok, pos, mask, present..)
        tok, done = pick(process(logits[:, -1], ids, first=False), done)
        ids = Concat(ids, tok); cond = not all(done)
    sequences = Concat(ids, ConstantOfShape([B, max_length - len(ids)], pad))

    pick(scores, done): tok = ArgMax(scores, 1); done |= tok == eos; tok = Where(done, pad, tok)
    process (gen_logits's order): repetition_penalty on the tokens present in ids
      (ScatterElements of ones into a [B, V + 1] scratch), no_repeat_ngram_size (the n-gram
      windows of ids compared with its last n - 1 tokens, their next tokens scattered),
      vocab_mask, prefix_vocab_mask (first step), eos held back while len(ids) < min_length.

The decoder's initializers become initializers of the node's graph (shared by both copies);
the values it reads from enclosing graphs stay read as they are. A prompt of max_length
tokens or more fails at the final ``ConstantOfShape`` (a negative dimension), as the
operator fails.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, where
from ..ir.builder import Builder
from ..ir.clone import clone_node, clone_value
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Last, Loop
from ..ir.types import DataType, TensorType
from .base import Pass

MS = "com.microsoft"
F32, I32, I64, BOOL = DataType.FLOAT32, DataType.INT32, DataType.INT64, DataType.BOOL
LOWEST = np.finfo(np.float32).min
GREEDY_INPUTS = ("input_ids", "max_length", "min_length", "repetition_penalty", "vocab_mask",
                 "prefix_vocab_mask", "attention_mask")
#: attributes the lowering reads or that say nothing it must honour
KNOWN_ATTRS = {"decoder", "init_decoder", "model_type", "eos_token_id", "pad_token_id",
               "no_repeat_ngram_size", "vocab_size", "logits_processor",
               "decoder_start_token_id"}


def _t(dtype: DataType, shape=None) -> TensorType:
    return TensorType(dtype, None if shape is None else tuple(shape))


def is_greedy(node: Node) -> bool:
    return node.op_type == "GreedySearch" and node.domain == MS


class LowerGeneration(Pass):
    """ONNX Runtime's ``com.microsoft.GreedySearch`` of a decoder-only model as standard ops.

    Applies to: every ``com.microsoft`` ``GreedySearch`` node at any depth with
    ``model_type`` 0 (GPT: decoder inputs ``input_ids, position_ids, attention_mask,
    past_*`` with static ``[2, batch, heads, past, head_size]`` pasts, outputs ``logits,
    present_*``; an ``init_decoder`` of the same contract runs the first step) and a
    ``max_length`` input. The node becomes the first decoding step on the prompt followed by
    an ONNX ``Loop`` over the further tokens whose body inlines the decoder (the pasts and
    presents become loop-carried values), applies the logits processing the node asks for
    (``repetition_penalty``, ``no_repeat_ngram_size``, ``vocab_mask``,
    ``prefix_vocab_mask`` on the first step, ``min_length``), takes ``ArgMax``, pads after
    ``eos_token_id`` with ``pad_token_id``, and stops when every row has met eos or
    ``max_length`` is reached; ``sequences`` is padded to ``[batch, max_length]``.

    Returns: the number of ``GreedySearch`` nodes lowered.

    Guarantees: ``sequences`` keeps its value for every input on which the operator runs
    (that of the NumPy kernel, which is ONNX Runtime's; where every row meets eos before
    max_length ONNX Runtime leaves the tail unwritten, the lowered form pads it as the
    kernel does); a prompt not shorter than max_length fails in both. A node that asks for
    what the lowering cannot express (another ``model_type``, ``logits_processor``, an
    ``encoder``, a ``vocab_size`` other than the logits' static width, a decoder off the GPT
    contract, a missing ``max_length``, outputs beyond ``sequences``) is an
    `UnsupportedError` naming the node and the feature; the graph is then unchanged.
    """

    name = "lower_generation"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        done = 0
        for node in list(graph.nodes):
            if is_greedy(node):
                plan = _check(node)  # refuse before changing anything
                i = graph.nodes.index(node)
                new = _Lowering(graph, node, plan).build()
                graph.nodes[i:i + 1] = new
                done += 1
                continue
            for g in node.subgraphs():
                done += self(g)
        return done

    def applicable(self, graph: Graph) -> bool:
        return any(is_greedy(n) for _, n in graph.walk())


lower_generation = LowerGeneration()


def _refuse(node: Node, what: str) -> UnsupportedError:
    return UnsupportedError(f"{where(node)}: cannot lower GreedySearch to standard ONNX "
                            f"operators: {what}")


def _check(node: Node) -> dict:
    """What the lowering needs of `node`: refuses (`UnsupportedError`) what it cannot do."""
    a = node.attrs
    model_type = int(a.get("model_type", 0))
    if model_type != 0:
        raise _refuse(node, f"model_type {model_type} (only 0, decoder-only GPT)")
    if int(a.get("logits_processor", 0)):
        raise _refuse(node, f"attribute 'logits_processor' = {a['logits_processor']}")
    if "encoder" in a:
        raise _refuse(node, "attribute 'encoder' with model_type 0")
    unknown = sorted(set(a) - KNOWN_ATTRS)
    if unknown:
        raise _refuse(node, f"attribute '{unknown[0]}'")
    dec = a.get("decoder")
    if not isinstance(dec, Graph):
        raise _refuse(node, "no 'decoder' attribute")
    names = [v.name for v in dec.inputs]
    if names[:3] != ["input_ids", "position_ids", "attention_mask"] or len(dec.inputs) < 4:
        raise _refuse(node, f"decoder inputs {names} are not input_ids, position_ids, "
                            f"attention_mask, past_*")
    if len(dec.outputs) != len(dec.inputs) - 2:
        raise _refuse(node, f"the decoder has {len(dec.outputs)} outputs; logits and one "
                            f"present per past expected")
    pasts = []
    for v in dec.inputs[3:]:
        t = v.type
        shape = t.shape if isinstance(t, TensorType) else None
        if shape is None or len(shape) != 5 or not isinstance(shape[2], int) \
                or not isinstance(shape[4], int):
            raise _refuse(node, f"decoder input '{v.name}' needs a static shape [2, batch, "
                                f"heads, past, head_size], got {shape}")
        k = shape[0] if isinstance(shape[0], int) else 2
        pasts.append((k, shape[2], shape[4], t.dtype or F32))
    init = a.get("init_decoder")
    if init is not None and ([v.name for v in init.inputs] != names or
                             [v.name for v in init.outputs] != [v.name for v in dec.outputs]):
        raise _refuse(node, "init_decoder inputs / outputs differ from the decoder's")
    vocab = a.get("vocab_size")
    if vocab is not None and int(vocab) != -1:
        lt = dec.outputs[0].type
        width = lt.shape[-1] if isinstance(lt, TensorType) and lt.shape else None
        if width != int(vocab):
            raise _refuse(node, f"attribute 'vocab_size' {vocab} where the decoder's logits "
                                f"have width {width}")
    ins = list(node.inputs) + [None] * (len(GREEDY_INPUTS) - len(node.inputs))
    if len(node.inputs) > len(GREEDY_INPUTS):
        raise _refuse(node, f"{len(node.inputs)} inputs (at most {len(GREEDY_INPUTS)})")
    feeds = dict(zip(GREEDY_INPUTS, ins))
    if feeds["max_length"] is None:
        raise _refuse(node, "no max_length input (ONNX Runtime requires it)")
    extra = [v.name for v in node.outputs[1:] if v is not None]
    if extra:
        raise _refuse(node, f"output '{extra[0]}' beyond sequences")

    def dtype(v: Value) -> DataType:
        return v.type.dtype if isinstance(v.type, TensorType) and v.type.dtype else I32

    return {"decoder": dec, "init": init, "pasts": pasts, "feeds": feeds,
            "idt": dtype(dec.inputs[0]), "pdt": dtype(dec.inputs[1]),
            "mdt": dtype(dec.inputs[2]),
            "eos": int(a.get("eos_token_id", -1)), "pad": int(a.get("pad_token_id", 0)),
            "ngram": int(a.get("no_repeat_ngram_size", 0))}


class _Lowering:
    """The nodes that replace one GreedySearch node (`build`)."""

    def __init__(self, graph: Graph, node: Node, plan: dict):
        self.graph, self.node, self.p = graph, node, plan
        self.prefix = node.name or "greedy_search"
        self.outer = Builder(graph, self.prefix)
        self.lowest: Value | None = None
        # the decoders' initializers, once, in the node's graph
        self.shared: dict[int, Value] = {}
        for g in (plan["decoder"], plan["init"]):
            for init in (g.initializers if g is not None else []):
                c = clone_value(init)
                c.name = self.outer.fresh(init.name or "init")
                graph.initializers.append(c)
                self.shared[init.uid] = c

    # -- pieces ----------------------------------------------------------------------------
    def inline(self, b: Builder, dec: Graph, feeds: list[Value], tag: str) -> list[Value]:
        """`dec`'s nodes appended to `b`, its inputs read from `feeds`; its outputs."""
        m = dict(self.shared)
        for formal, actual in zip(dec.inputs, feeds):
            m[formal.uid] = actual
        for n in dec.nodes:
            c = clone_node(n, m)
            for v in c.outputs:
                if v.name:
                    v.name = f"{self.prefix}/{tag}/{v.name}"
            c.name = f"{self.prefix}/{tag}/{c.name}" if c.name else b.fresh(c.op_type)
            b.nodes.append(c)
        return [m.get(v.uid, v) for v in dec.outputs]

    def cast(self, b: Builder, v: Value, dt: DataType, shape=None) -> Value:
        """`v` cast to `dt`; `shape` (default: `v`'s when its type has one) its type's."""
        if shape is None and isinstance(v.type, TensorType):
            shape = v.type.shape
        return b.node("Cast", [v], {"to": dt.onnx}, type=_t(dt, shape))

    def dim(self, b: Builder, v: Value, axis: int) -> Value:
        """``Shape(v)[axis]`` as an int64 scalar."""
        s = b.node("Shape", [v], type=_t(I64, [None]))
        return b.node("Gather", [s, self.outer.i64(axis, "axis")], {"axis": 0},
                      type=_t(I64, []))

    def scalar(self, b: Builder, v: Value, dt: DataType) -> Value:
        """A one-element input as a scalar of `dt`."""
        r = b.node("Reshape", [v, self.outer.i64(np.zeros(0, np.int64), "scalar")])
        return self.cast(b, r, dt)

    def scatter_ones(self, b: Builder, rows: Value, idx: Value, keep: Value | None,
                     vocab: Value) -> Value:
        """bool ``[B, V]``: True at ``[r, idx[r, j]]`` for each j (where `keep`, when given).
        The writes all write 1 (skipped ones go to a scratch column V): ties are harmless."""
        o = self.outer
        idx = self.cast(b, idx, I64)
        if keep is not None:
            idx = b.node("Where", [keep, idx, b.unsqueeze(vocab, 0)])
        v1 = b.node("Add", [vocab, o.i64(1, "one")])
        shape = b.node("Concat", [b.unsqueeze(rows, 0), b.unsqueeze(v1, 0)], {"axis": 0})
        zeros = b.node("ConstantOfShape", [shape], {"value": np.zeros(1, np.int32)},
                       version=9, type=_t(I32, [None, None]))
        ones = b.node("ConstantOfShape", [b.node("Shape", [idx])],
                      {"value": np.ones(1, np.int32)}, version=9)
        hit = b.node("ScatterElements", [zeros, idx, ones], {"axis": 1})
        hit = b.node("Slice", [hit, o.i64([0], "start"), b.unsqueeze(vocab, 0),
                               o.i64([1], "axis")])
        return self.cast(b, hit, BOOL)

    def ban(self, b: Builder, scores: Value, banned: Value) -> Value:
        if self.lowest is None:
            self.lowest = self.outer.const(np.float32(LOWEST), "lowest")
        return b.node("Where", [banned, self.lowest, scores], type=_t(F32, [None, None]))

    def process(self, b: Builder, logits: Value, ids: Value, first: bool) -> Value:
        """The last position's logits, processed as ONNX Runtime does (`gen_logits`)."""
        o, f = self.outer, self.p["feeds"]
        last = b.node("Gather", [logits, o.i64(-1, "last")], {"axis": 1})
        scores = self.cast(b, last, F32)
        rows, vocab = self.dim(b, scores, 0), self.dim(b, scores, 1)
        if f["repetition_penalty"] is not None:
            pen = self.scalar(b, f["repetition_penalty"], F32)
            seen = self.scatter_ones(b, rows, ids, None, vocab)
            neg = b.node("Less", [scores, o.const(np.float32(0), "zero")])
            moved = b.node("Where", [neg, b.node("Mul", [scores, pen]),
                                     b.node("Div", [scores, pen])])
            scores = b.node("Where", [seen, moved, scores], type=_t(F32, [None, None]))
        n = self.p["ngram"]
        if n == 1:
            scores = self.ban(b, scores, self.scatter_ones(b, rows, ids, None, vocab))
        elif n > 1:
            length = self.dim(b, ids, 1)
            count = b.node("Sub", [length, o.i64(n - 1, "n1")])  # windows: L - n + 1
            starts = b.node("Range", [o.i64(0, "zero"), count, o.i64(1, "one")], version=11)
            idx = b.node("Add", [b.unsqueeze(starts, 1), o.i64(np.arange(n - 1)[None], "k")])
            windows = b.node("Gather", [ids, idx], {"axis": 1})           # [B, W, n-1]
            tail_at = b.node("Max", [b.node("Add", [count, o.i64(np.arange(n - 1), "k")]),
                                     o.i64(0, "zero")])  # in range however short ids is
            tail = b.node("Gather", [ids, tail_at], {"axis": 1})          # [B, n-1]
            same = b.node("Equal", [windows, b.unsqueeze(tail, 1)])
            match = b.node("ReduceMin", [self.cast(b, same, I32)], {"axes": [2], "keepdims": 0})
            nxt = b.node("Slice", [ids, o.i64([n - 1], "start"),
                                   o.i64([np.iinfo(np.int64).max], "end"), o.i64([1], "axis")])
            keep = self.cast(b, match, BOOL)
            scores = self.ban(b, scores, self.scatter_ones(b, rows, nxt, keep, vocab))
        if f["vocab_mask"] is not None:
            off = b.node("Equal", [self.cast(b, f["vocab_mask"], I64), o.i64(0, "zero")])
            scores = self.ban(b, scores, off)
        if first and f["prefix_vocab_mask"] is not None:
            off = b.node("Equal", [self.cast(b, f["prefix_vocab_mask"], I64), o.i64(0, "zero")])
            scores = self.ban(b, scores, off)
        if f["min_length"] is not None and self.p["eos"] >= 0:
            short = b.node("Less", [self.dim(b, ids, 1), self.min_length])
            col = b.node("Range", [o.i64(0, "zero"), vocab, o.i64(1, "one")], version=11)
            is_eos = b.node("Equal", [col, o.i64(self.p["eos"], "eos")])
            scores = self.ban(b, scores, b.node("And", [short, is_eos], version=7))
        return scores

    def pick(self, b: Builder, scores: Value, done: Value | None) -> tuple[Value, Value]:
        """``(token [B, 1] int32, done [B])`` after the argmax of `scores`."""
        tok = self.cast(b, b.node("ArgMax", [scores], {"axis": 1, "keepdims": 0}), I32)
        hit = b.node("Equal", [tok, self.eos], type=_t(BOOL, [None]))
        if done is not None:
            hit = b.node("Or", [done, hit], version=7, type=_t(BOOL, [None]))
        tok = b.node("Where", [hit, self.pad, tok])
        return b.unsqueeze(tok, 1, type=_t(I32, [None, 1])), hit

    def going(self, b: Builder, done: Value, out: Value | None = None) -> Value:
        """Scalar bool: some row has not met eos."""
        low = b.node("ReduceMin", [self.cast(b, done, I32)], {"keepdims": 0})
        return b.node("Equal", [low, self.outer.const(np.int32(0), "zero")], out=out,
                      type=_t(BOOL, []))

    # -- the whole ---------------------------------------------------------------------------
    def build(self) -> list[Node]:
        p, f, o = self.p, self.p["feeds"], self.outer
        self.eos = o.const(np.int32(p["eos"]), "eos")
        self.pad = o.const(np.int32(p["pad"]), "pad")
        ids = self.cast(o, f["input_ids"], I32)
        if f["attention_mask"] is not None:
            mask = self.cast(o, f["attention_mask"], BOOL)
        else:
            mask = o.node("Not", [o.node("Equal", [ids, self.pad])], version=1)
        mask64 = self.cast(o, mask, I64)
        csum = o.node("CumSum", [mask64, o.i64(1, "axis")], version=11)
        pos = o.node("Where", [mask, o.node("Sub", [csum, o.i64(1, "one")]), o.i64(0, "zero")])
        batch = self.dim(o, ids, 0)
        batch1 = o.unsqueeze(batch, 0)
        pasts = []
        for k, heads, size, dt in p["pasts"]:
            shape = o.node("Concat", [o.i64([k], "k"), batch1, o.i64([heads, 0, size], "hs")],
                           {"axis": 0})
            pasts.append(o.node("ConstantOfShape", [shape],
                                {"value": np.zeros(1, dt.numpy)}, version=9,
                                type=_t(dt, [k, None, heads, 0, size])))
        if f["min_length"] is not None:
            self.min_length = self.scalar(o, f["min_length"], I64)
        max_length = self.scalar(o, f["max_length"], I64)

        first = p["init"] if p["init"] is not None else p["decoder"]
        two = [None, None]
        outs = self.inline(o, first, [self.cast(o, ids, p["idt"], two),
                                      self.cast(o, pos, p["pdt"], two),
                                      self.cast(o, mask64, p["mdt"], two), *pasts], "first")
        scores = self.process(o, outs[0], ids, first=True)
        tok, done = self.pick(o, scores, None)
        ids1 = o.node("Concat", [ids, tok], {"axis": 1}, type=_t(I32, [None, None]))
        pos_last = o.node("Slice", [pos, o.i64([-1], "start"),
                                    o.i64([np.iinfo(np.int64).max], "end"), o.i64([1], "axis")])
        ones = o.node("ConstantOfShape", [o.node("Concat", [batch1, o.i64([1], "one")],
                                                 {"axis": 0})],
                      {"value": np.ones(1, np.int64)}, version=9, type=_t(I64, [None, 1]))
        trips = o.node("Sub", [o.node("Sub", [max_length, self.dim(o, ids, 1)]),
                               o.i64(1, "one")], type=_t(I64, []))
        cond0 = self.going(o, done)

        loop, ids_out = self.body(outs[1:], tok, pos_last, mask64, ids1, done, ones, trips,
                                  cond0)
        o.nodes.append(loop)
        width = o.node("Sub", [max_length, self.dim(o, ids_out, 1)])
        fill_shape = o.node("Concat", [batch1, o.unsqueeze(width, 0)], {"axis": 0})
        fill = o.node("ConstantOfShape", [fill_shape], {"value": np.array([p["pad"]], np.int32)},
                      version=9)
        seq = self.node.outputs[0]
        o.node("Concat", [ids_out, fill], {"axis": 1}, out=seq)
        if seq.type is None:
            seq.type = _t(I32, [None, None])
        return o.nodes

    def body(self, presents, tok, pos_last, mask64, ids1, done, ones, trips, cond0):
        p = self.p
        b = Builder(self.graph, f"{self.prefix}/loop")
        it = Value(f"{self.prefix}/iteration", _t(I64, []))
        cond_in = Value(f"{self.prefix}/cond_in", _t(BOOL, []))

        def param(v: Value, name: str, t: TensorType) -> Value:
            return Value(f"{self.prefix}/{name}", t)

        tok_p = param(tok, "token", _t(I32, [None, 1]))
        pos_p = param(pos_last, "position", _t(I64, [None, 1]))
        mask_p = param(mask64, "mask", _t(I64, [None, None]))
        ids_p = param(ids1, "ids", _t(I32, [None, None]))
        done_p = param(done, "done", _t(BOOL, [None]))
        past_p = [param(v, f"past_{i}", _t(dt, [k, None, h, None, s]))
                  for i, (v, (k, h, s, dt)) in enumerate(zip(presents, p["pasts"]))]
        pos = b.node("Add", [pos_p, self.outer.i64(1, "one")], type=_t(I64, [None, 1]))
        mask = b.node("Concat", [mask_p, ones], {"axis": 1}, type=_t(I64, [None, None]))
        outs = self.inline(b, p["decoder"], [self.cast(b, tok_p, p["idt"], [None, 1]),
                                             self.cast(b, pos, p["pdt"], [None, 1]),
                                             self.cast(b, mask, p["mdt"], [None, None]),
                                             *past_p], "step")
        scores = self.process(b, outs[0], ids_p, first=False)
        tok_n, done_n = self.pick(b, scores, done_p)
        ids_n = b.node("Concat", [ids_p, tok_n], {"axis": 1}, type=_t(I32, [None, None]))
        cond_out = self.going(b, done_n)
        carried_vals = [tok, pos_last, mask64, ids1, done, *presents]
        params = [tok_p, pos_p, mask_p, ids_p, done_p, *past_p]
        results = [tok_n, pos, mask, ids_n, done_n, *outs[1:]]
        # a result that is its parameter or an outer value needs a node of its own
        for j, r in enumerate(results):
            if r is params[j] or r.producer is None or r.producer not in b.nodes:
                results[j] = b.node("Identity", [r], version=16, type=params[j].type)
        body = Graph(f"{self.prefix}_body", inputs=[it, cond_in, *params],
                     outputs=[cond_out, *results], nodes=b.nodes)
        ports = [Carried(v, prm, r) for v, prm, r in zip(carried_vals, params, results)]
        ids_out = Value(f"{self.prefix}/ids_final", _t(I32, [None, None]))
        outs_ports = [Last(results[3], ids_out)]
        loop = Loop(body, ports, outs_ports, trip_count=trips, initial_condition=cond0,
                    condition_result=cond_out, condition_param=cond_in, iteration_param=it,
                    name=f"{self.prefix}/loop", negative_trip_count="zero")
        return loop, ids_out
