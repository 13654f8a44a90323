"""ONNX Runtime's ``com.microsoft.GreedySearch`` and ``BeamSearch`` (decoder-only,
``model_type`` 0) as standard ONNX operators: the first step on the prompt, then a ``Loop``
over the further tokens.

GreedySearch, in the terms of the NumPy kernel (`backends.numpy.kernels.gen_greedy`, which
matches ONNX Runtime)::

    ids = Cast(input_ids, int32)                                   # [B, S]
    mask = Cast(attention_mask, int64) if given else ids != pad
    pos = Where(ids != pad, CumSum(ids != pad, 1) - 1, 0)   # ORT counts from the ids
    last = CumSum(ids != pad, 1)[:, -1:] - 1                 # the second step is at last + 1
    past_i = ConstantOfShape([2, B, heads, 0, head_size])         # the decoder's past_i
    logits, present.. = first_decoder(ids, pos, mask, past..)      # init_decoder, else decoder
    seqs = Concat(ids, ConstantOfShape([B, max_length - S], pad)); n = S   # [B, max_length]
    tok, done = pick(process(logits[:, -1], seqs, n, first=True), done=False)
    seqs = write(seqs, tok, n); n = n + 1
    Loop(M = max_length - S - 1, cond = not all(done)):            # carried: tok, pos, mask,
        pos = (last, then pos) + 1; mask = Concat(mask, 1)         #   seqs, n, done, present..
        logits, present.. = decoder(tok, pos, mask, present..)
        tok, done = pick(process(logits[:, -1], seqs, n, first=False), done)
        seqs = write(seqs, tok, n); n = n + 1; cond = not all(done)
    sequences = seqs

    write(seqs, tok, n) = Where(Range(0, max_length) == n, tok, seqs): column n set to tok.
    The sequences are a fixed-size buffer of which the first n columns are tokens (the rest
    pad), not a value grown by Concat: every shape in the loop is then fixed by max_length,
    which a compiler (XLA) needs; the K/V caches and the mask still grow by Concat (the JAX
    backend carries those as buffers itself).

    pick(scores, done): tok = ArgMax(scores, 1); done |= tok == eos; tok = Where(done, pad, tok)
    process (gen_logits's order): repetition_penalty on the tokens present in seqs[:, :n]
      (ScatterElements of ones into a [B, V + 1] scratch, the columns from n on sent to the
      scratch column), no_repeat_ngram_size (every n-gram window of the buffer compared with
      the last n - 1 tokens, the next tokens of those matching within the first n columns
      scattered), vocab_mask, prefix_vocab_mask (first step), eos held back while n <
      min_length.

BeamSearch (`gen_beam`) keeps ``B * num_beams`` rows (each prompt row repeated) and, per
step, batched over the batch: ``LogSoftmax``, the same processing, the beam scores added,
``TopK`` of ``2 * num_beams`` over ``[B, num_beams * V]`` (ties: lower index first, as the
kernel's stable sort); the eos candidates among the first ``num_beams`` join the batch's
hypotheses (kept as the best ``num_beams`` scores ``[B, K]`` and sequences ``[B, K,
max_length]`` by a ``TopK`` over the new ones, latest first, and the kept ones), the first
``num_beams`` other candidates are the next beams (rows reordered by ``Gather``: the
sequence buffer, positions, mask and every present; the token written at column n); a
batch is done when it holds ``num_beams`` hypotheses and early_stopping or its worst beats
the best candidate (read at ORT's offset ``batch * num_beams``). After the loop the open
beams of the batches not done join the hypotheses; ``TopK`` of ``num_return_sequences``
gives ``sequences`` and ``sequences_scores``. The optional ``scores`` output is a carried
``[max_length - S, R, V]`` buffer of zeros, each step's scores (processed, plus the beam
scores) written at the step's index by a ``Where``, reshaped to ``[max_length - S, B,
num_beams, V]`` after the loop. Hypotheses of exactly equal score may be ordered otherwise
than ORT's sequential insertion where a new one ties the worst kept one.

The decoder's initializers become initializers of the node's graph (shared by both copies);
the values it reads from enclosing graphs stay read as they are. A prompt of max_length
tokens or more fails at a ``ConstantOfShape`` of a negative dimension (`guard`), as the
operator fails.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import UnsupportedError, where
from ..ir.builder import Builder
from ..ir.clone import clone_node, clone_value
from ..ir.graph import MICROSOFT_DOMAIN as MS
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Last, Loop
from ..ir.types import DataType, TensorType
from ..semantics.generation import (
    MAX_BEAMS,
    MAX_LENGTH_LIMIT,
    required_inputs,
    required_token_ids,
)
from .base import Pass
from .decoder_positions import causal_decoder

F32, I32, I64, BOOL = DataType.FLOAT32, DataType.INT32, DataType.INT64, DataType.BOOL
LOWEST = np.finfo(np.float32).min
GREEDY_INPUTS = ("input_ids", "max_length", "min_length", "repetition_penalty", "vocab_mask",
                 "prefix_vocab_mask", "attention_mask")
BEAM_INPUTS = ("input_ids", "max_length", "min_length", "num_beams", "num_return_sequences",
               "length_penalty", "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
               "attention_mask", "decoder_input_ids", "logits_processor")
SAMPLING_INPUTS = (*GREEDY_INPUTS, "presence_mask", "seed")
INPUTS = {"GreedySearch": GREEDY_INPUTS, "BeamSearch": BEAM_INPUTS, "Sampling": SAMPLING_INPUTS}
#: attributes the lowering reads or that say nothing it must honour
KNOWN_ATTRS = {"decoder", "init_decoder", "model_type", "eos_token_id", "pad_token_id",
               "no_repeat_ngram_size", "vocab_size", "logits_processor",
               "decoder_start_token_id"}
BEAM_ATTRS = KNOWN_ATTRS | {"early_stopping"}
SAMPLING_ATTRS = KNOWN_ATTRS | {"temperature", "top_p", "filter_value", "min_tokens_to_keep",
                                "presence_penalty", "custom"}
ATTRS = {"GreedySearch": KNOWN_ATTRS, "BeamSearch": BEAM_ATTRS, "Sampling": SAMPLING_ATTRS}
#: the outputs each lowering computes (an asked-for output beyond them is refused)
COMPUTED = {"GreedySearch": ("sequences",),
            "BeamSearch": ("sequences", "sequences_scores", "scores"),
            "Sampling": ("sequences",)}
#: whether BeamSearch is lowered too (else left as it is)
LOWER_BEAM = True
#: the ops whose prompt `stepwise` reads through the loop's step (one decoder to compile,
#: against S sequential steps on the prompt). BeamSearch is left out: it would run those
#: steps on every beam's row, and measured it gave a 30% cheaper first call for 12-20% more
#: per 32-token call and a first token 2.8x slower after a 56-token prompt.
STEPWISE_OPS = frozenset({"GreedySearch", "Sampling"})


def _t(dtype: DataType, shape=None) -> TensorType:
    return TensorType(dtype, None if shape is None else tuple(shape))


def is_greedy(node: Node) -> bool:
    return node.op_type == "GreedySearch" and node.domain == MS


def lowered_op(node: Node) -> bool:
    """Whether the pass lowers `node`."""
    return node.domain == MS and (node.op_type == "GreedySearch" or
                                  (LOWER_BEAM and node.op_type == "BeamSearch"))


class LowerGeneration(Pass):
    """ONNX Runtime's ``com.microsoft.GreedySearch`` / ``BeamSearch`` of a decoder-only model
    as standard ops.

    Applies to: every ``com.microsoft`` ``GreedySearch`` and ``BeamSearch`` node at any
    depth with
    ``model_type`` 0 (GPT: decoder inputs ``input_ids, position_ids, attention_mask,
    past_*`` with static ``[2, batch, heads, past, head_size]`` pasts, outputs ``logits,
    present_*``; an ``init_decoder`` of the same contract runs the first step) and a
    ``max_length`` input. The node becomes the first decoding step on the prompt followed by
    an ONNX ``Loop`` over the further tokens whose body inlines the decoder (the pasts and
    presents become loop-carried values), applies the logits processing the node asks for
    (``repetition_penalty``, ``no_repeat_ngram_size``, ``vocab_mask``,
    ``prefix_vocab_mask`` on the first step, ``min_length``), takes ``ArgMax``, pads after
    ``eos_token_id`` with ``pad_token_id``, and stops when every row has met eos or
    ``max_length`` is reached; the sequences are a ``[batch, max_length]`` buffer of pad
    written at the current length (every shape in the loop fixed by ``max_length``).
    BeamSearch likewise keeps ``batch * num_beams`` rows, its hypotheses as loop-carried
    tensors, and gives ``sequences`` ``[batch, num_return_sequences, max_length]``,
    ``sequences_scores`` and the optional ``scores`` (module docstring).

    Returns: the number of nodes lowered.

    Guarantees: the outputs keep their values for every input on which the operator runs
    (those of the NumPy kernels, which are ONNX Runtime's; where every row meets eos before
    max_length ONNX Runtime's GreedySearch leaves the tail unwritten, the lowered form pads
    it as the kernel does; BeamSearch's scores up to rounding: ``LogSoftmax`` and ``Pow``
    are the runtime's; hypotheses of equal score, see the module docstring); a prompt not
    shorter than max_length, num_return_sequences outside [1, num_beams], and the other inputs
    ONNX Runtime refuses (`semantics.generation.check_inputs`: repetition_penalty <= 0,
    num_beams outside [1, 128], max_length above 4096, mask shapes) fail in both; a node
    without eos_token_id, pad_token_id or an input ORT requires is a `ModelError`.
    A node that asks for
    what the lowering cannot express (another ``model_type``, ``logits_processor``, an
    ``encoder``, a ``vocab_size`` other than the logits' static width, a decoder off the GPT
    contract, a missing ``max_length``, the inputs ``decoder_input_ids`` or
    ``logits_processor``) is an
    `UnsupportedError` naming the node and the feature; the graph is then unchanged.
    """

    name = "lower_generation"
    in_place = True

    def __init__(self, stepwise: bool = False):
        self.stepwise = stepwise

    def __call__(self, graph: Graph) -> int:
        done = 0
        for node in list(graph.nodes):
            if lowered_op(node):
                plan = _check(node, self.stepwise)  # refuse before changing anything
                i = graph.nodes.index(node)
                cls = _Lowering if is_greedy(node) else _BeamLowering
                new = cls(graph, node, plan).build()
                graph.nodes[i:i + 1] = new
                done += 1
                continue
            for g in node.subgraphs():
                done += self(g)
        return done

    def applicable(self, graph: Graph) -> bool:
        return any(lowered_op(n) for _, n in graph.walk())


lower_generation = LowerGeneration()


def lower_generation_stepwise(graph: Graph) -> int:
    """`lower_generation` in the form a compiler wants: one decoder step, the prompt read
    through it where that is exact (`stepwise`); returns the number of nodes lowered."""
    return LowerGeneration(stepwise=True)(graph)


def _refuse(node: Node, what: str) -> UnsupportedError:
    return UnsupportedError(f"{where(node)}: cannot lower {node.op_type} to standard ONNX "
                            f"operators: {what}")


def _check(node: Node, stepwise: bool = False) -> dict:
    """What the lowering needs of `node`: refuses (`UnsupportedError`) what it cannot do.
    ``stepwise`` in the plan: whether the prompt is read through the loop's step (asked for
    by `stepwise`, and provably the same)."""
    a = node.attrs
    model_type = int(a.get("model_type", 0))
    if model_type != 0:
        raise _refuse(node, f"model_type {model_type} (only 0, decoder-only GPT)")
    if int(a.get("logits_processor", 0)):
        raise _refuse(node, f"attribute 'logits_processor' = {a['logits_processor']}")
    if "encoder" in a:
        raise _refuse(node, "attribute 'encoder' with model_type 0")
    unknown = sorted(set(a) - ATTRS[node.op_type])
    if unknown:
        raise _refuse(node, f"attribute '{unknown[0]}'")
    if int(a.get("custom", 0)):
        raise _refuse(node, "attribute 'custom' = 1")
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
    names = INPUTS[node.op_type]
    ins = list(node.inputs) + [None] * (len(names) - len(node.inputs))
    if len(node.inputs) > len(names):
        raise _refuse(node, f"{len(node.inputs)} inputs (at most {len(names)})")
    feeds = dict(zip(names, ins))
    if feeds["max_length"] is None:
        raise _refuse(node, "no max_length input (ONNX Runtime requires it)")
    required_inputs(node, names)  # ORT refuses the node without them
    for name in ("decoder_input_ids", "logits_processor"):
        if feeds.get(name) is not None:
            raise _refuse(node, f"input '{name}'")
    eos, pad = required_token_ids(node)  # ORT refuses the model without them
    computed = COMPUTED[node.op_type]
    extra = [v.name for v in node.outputs[len(computed):] if v is not None and v.name]
    if extra:
        raise _refuse(node, f"output '{extra[0]}' (beyond {', '.join(computed)})")

    def dtype(v: Value) -> DataType:
        return v.type.dtype if isinstance(v.type, TensorType) and v.type.dtype else I32

    scores = node.op_type == "BeamSearch" and len(node.outputs) > 2 and node.outputs[2]
    stepwise = (stepwise and node.op_type in STEPWISE_OPS and init is None and not scores
                and causal_decoder(dec))
    return {"decoder": dec, "init": init, "pasts": pasts, "feeds": feeds, "stepwise": stepwise,
            "idt": dtype(dec.inputs[0]), "pdt": dtype(dec.inputs[1]),
            "mdt": dtype(dec.inputs[2]),
            "eos": eos, "pad": pad,
            "ngram": int(a.get("no_repeat_ngram_size", 0)),
            "early": bool(int(a.get("early_stopping", 0)))}


class _Lowering:
    """The nodes that replace one GreedySearch node (`build`)."""

    def __init__(self, graph: Graph, node: Node, plan: dict):
        self.graph, self.node, self.p = graph, node, plan
        # a prefix of its own per node: two unnamed nodes of one graph get distinct names
        self.prefix = node.name or f"{node.op_type}_{graph.nodes.index(node)}"
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

    def positions(self, b: Builder, ids: Value, mask: Value | None) -> tuple[Value, ...]:
        """``(mask64, pos, last)`` of the prompt `ids` as ONNX Runtime's ``CreateGptInputs``
        makes them (`gen_greedy.prompt`): the given attention `mask` as int64 (None: ``ids !=
        pad``), each token's position among the tokens that are not pad (0 at pad; from the
        ids even when a mask is given), and ``last`` [B, 1], the count of non-pad tokens less
        one (the next step's position is ``last + 1``)."""
        real = b.node("Not", [b.node("Equal", [ids, self.pad])], version=1)
        real64 = self.cast(b, real, I64)
        mask64 = real64 if mask is None else self.cast(b, mask, I64)
        csum = b.node("CumSum", [real64, b.i64(1, "axis")], version=11)
        pos = b.node("Where", [real, b.node("Sub", [csum, b.i64(1, "one")]), b.i64(0, "zero")])
        last = b.node("Sub", [b.node("Slice", [csum, b.i64([-1], "start"), b.i64(
            [np.iinfo(np.int64).max], "end"), b.i64([1], "axis")]), b.i64(1, "one")],
            type=_t(I64, [None, 1]))
        return mask64, pos, last

    def empty_pasts(self, b: Builder, p: dict, rows1: Value) -> list[Value]:
        """The decoder's ``past_*`` inputs before the first step: ``[k, rows, heads, 0,
        size]`` zeros (`rows1`: the row count as a 1-element vector)."""
        pasts = []
        for k, heads, size, dt in p["pasts"]:
            shape = b.node("Concat", [b.i64([k], "k"), rows1, b.i64([heads, 0, size], "hs")],
                           {"axis": 0})
            pasts.append(b.node("ConstantOfShape", [shape],
                                {"value": np.zeros(1, dt.numpy)}, version=9,
                                type=_t(dt, [k, None, heads, 0, size])))
        return pasts

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

    def guard(self, b: Builder, ok: Value) -> Value:
        """An int64 scalar 0 that fails to compute where the bool scalar `ok` is false (a
        ``ConstantOfShape`` of dimension -1, an error in every runtime): ONNX Runtime's
        refusals of inputs, kept by adding it to a value the outputs depend on."""
        o = self.outer
        dim = b.node("Where", [ok, o.i64([0], "z"), o.i64([-1], "m1")])
        c = b.node("ConstantOfShape", [dim], {"value": np.zeros(1, np.int64)}, version=9)
        return b.node("Mul", [b.node("ReduceSum", [b.node("Shape", [c])], {"keepdims": 0}),
                              o.i64(0, "zero")], type=_t(I64, []))

    def checked_max_length(self, b: Builder, ids: Value, beam: bool) -> Value:
        """max_length as an int64 scalar that fails to compute where ONNX Runtime refuses
        the inputs (`semantics.generation.check_inputs`: repetition_penalty not above 0, an
        attention mask not of input_ids' shape, a prefix_vocab_mask of another batch; BeamSearch:
        num_beams outside [1, MAX_BEAMS], max_length above MAX_LENGTH_LIMIT), and where the
        prompt is not shorter than max_length."""
        o, f = self.outer, self.p["feeds"]
        ml = self.scalar(b, f["max_length"], I64)
        oks = [b.node("Less", [self.dim(b, ids, 1), ml])]
        if f["repetition_penalty"] is not None:
            oks.append(b.node("Greater", [self.scalar(b, f["repetition_penalty"], F32),
                                          o.const(np.float32(0), "zero")]))
        shape = b.node("Shape", [ids])
        if f["attention_mask"] is not None:
            same = b.node("Equal", [b.node("Shape", [f["attention_mask"]]), shape])
            oks.append(self.cast(b, b.node("ReduceMin", [self.cast(b, same, I32)],
                                           {"keepdims": 0}), BOOL))
        if f["prefix_vocab_mask"] is not None:
            first = o.i64(0, "zero")
            oks.append(b.node("Equal", [
                b.node("Gather", [b.node("Shape", [f["prefix_vocab_mask"]]), first]),
                b.node("Gather", [shape, first])]))
        if beam:
            oks.append(b.node("LessOrEqual", [ml, o.i64(MAX_LENGTH_LIMIT, "limit")],
                              version=16))
            oks.append(b.node("GreaterOrEqual", [self.k, o.i64(1, "one")], version=16))
            oks.append(b.node("LessOrEqual", [self.k, o.i64(MAX_BEAMS, "beams")], version=16))
        for ok in oks:
            ml = b.node("Add", [ml, self.guard(b, ok)], type=_t(I64, []))
        return ml

    def prepare(self, b: Builder, scores: Value) -> Value:
        """The scores the processing starts from (greedy: the logits themselves)."""
        return scores

    def rows(self, b: Builder, v: Value) -> Value:
        """`v` [B, ...] with each row repeated for its beams (greedy: one row each)."""
        return v

    def ban(self, b: Builder, scores: Value, banned: Value) -> Value:
        if self.lowest is None:
            self.lowest = self.outer.const(np.float32(LOWEST), "lowest")
        return b.node("Where", [banned, self.lowest, scores], type=_t(F32, [None, None]))

    def process(self, b: Builder, logits: Value, ids: Value, length: Value,
                first: bool | Value) -> Value:
        """The last position's logits, processed as ONNX Runtime does (`gen_logits`), for
        the sequences `ids` ([B, max_length], of which the first `length` columns are
        tokens); `first`: whether this is the first step (a bool scalar where that is known
        only when running)."""
        o, f = self.outer, self.p["feeds"]
        valid = b.node("Less", [self.cols, length])                       # [max_length]
        last = b.node("Gather", [logits, o.i64(-1, "last")], {"axis": 1})
        scores = self.prepare(b, self.cast(b, last, F32))
        rows, vocab = self.dim(b, scores, 0), self.dim(b, scores, 1)
        for name, axis in (("vocab_mask", 0), ("prefix_vocab_mask", 1)):
            if first and f[name] is not None:  # ORT refuses masks of another width
                width = b.node("Gather", [b.node("Shape", [f[name]]), o.i64(axis, "axis")],
                               {"axis": 0})
                zero = self.guard(b, b.node("Equal", [width, vocab]))
                scores = b.node("Add", [scores, self.cast(b, zero, F32, [])],
                                type=_t(F32, [None, None]))
        if f["repetition_penalty"] is not None:
            pen = self.scalar(b, f["repetition_penalty"], F32)
            seen = self.scatter_ones(b, rows, ids, valid, vocab)
            neg = b.node("Less", [scores, o.const(np.float32(0), "zero")])
            moved = b.node("Where", [neg, b.node("Mul", [scores, pen]),
                                     b.node("Div", [scores, pen])])
            scores = b.node("Where", [seen, moved, scores], type=_t(F32, [None, None]))
        n = self.p["ngram"]
        if n == 1:
            scores = self.ban(b, scores, self.scatter_ones(b, rows, ids, valid, vocab))
        elif n > 1:  # every window of the buffer; those reaching past `length` are off
            count = b.node("Sub", [self.max_length, o.i64(n - 1, "n1")])
            starts = b.node("Range", [o.i64(0, "zero"), count, o.i64(1, "one")], version=11)
            idx = b.node("Add", [b.unsqueeze(starts, 1), o.i64(np.arange(n - 1)[None], "k")])
            windows = b.node("Gather", [ids, idx], {"axis": 1})           # [B, W, n-1]
            tail_at = b.node("Max", [b.node("Add", [b.node("Sub", [length, o.i64(
                n - 1, "n1")]), o.i64(np.arange(n - 1), "k")]), o.i64(0, "zero")])
            tail = b.node("Gather", [ids, tail_at], {"axis": 1})          # [B, n-1]
            same = b.node("Equal", [windows, b.unsqueeze(tail, 1)])
            match = b.node("ReduceMin", [self.cast(b, same, I32), o.i64([2], "a2")],
                           {"keepdims": 0}, version=18)
            nxt = b.node("Slice", [ids, o.i64([n - 1], "start"),
                                   o.i64([np.iinfo(np.int64).max], "end"), o.i64([1], "axis")])
            inside = b.node("Less", [b.node("Add", [starts, o.i64(n - 1, "n1")]), length])
            keep = b.node("And", [self.cast(b, match, BOOL), inside], version=7)
            scores = self.ban(b, scores, self.scatter_ones(b, rows, nxt, keep, vocab))
        if f["vocab_mask"] is not None:
            off = b.node("Equal", [self.cast(b, f["vocab_mask"], I64), o.i64(0, "zero")])
            scores = self.ban(b, scores, off)
        if first and f["prefix_vocab_mask"] is not None:
            off = b.node("Equal", [self.rows(b, self.cast(b, f["prefix_vocab_mask"], I64)),
                                   o.i64(0, "zero")])
            if isinstance(first, Value):
                off = b.node("And", [off, first], version=7)
            scores = self.ban(b, scores, off)
        if f["min_length"] is not None and self.p["eos"] >= 0:
            short = b.node("Less", [length, self.min_length])
            col = b.node("Range", [o.i64(0, "zero"), vocab, o.i64(1, "one")], version=11)
            is_eos = b.node("Equal", [col, o.i64(self.p["eos"], "eos")])
            scores = self.ban(b, scores, b.node("And", [short, is_eos], version=7))
        return scores

    def choose(self, b: Builder, scores: Value, step: Callable[[], Value]) -> Value:
        """Each row's token [B] (any integer type) from `scores`; `step()` builds the step's
        index (an int64 scalar, 0 on the prompt) where it is needed. Greedy: the argmax."""
        return b.node("ArgMax", [scores], {"axis": 1, "keepdims": 0})

    def pick(self, b: Builder, scores: Value, done: Value | None, step: Callable[[], Value]
             ) -> tuple[Value, Value]:
        """``(token [B, 1] int32, done [B])`` after `choose` on `scores`."""
        tok = self.cast(b, self.choose(b, scores, step), I32)
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

    def buffer(self, b: Builder, ids: Value) -> Value:
        """The prompt `ids` [R, S] int32 followed by pad up to [R, max_length]: the
        sequences' fixed-size buffer (also ``self.cols``, its column indices)."""
        o = self.outer
        self.cols = o.node("Range", [o.i64(0, "zero"), self.max_length, o.i64(1, "one")],
                           version=11, type=_t(I64, [None]))
        rest = b.node("Sub", [self.max_length, self.dim(b, ids, 1)])
        shape = b.node("Concat", [b.unsqueeze(self.dim(b, ids, 0), 0), b.unsqueeze(rest, 0)],
                       {"axis": 0})
        fill = b.node("ConstantOfShape", [shape], {"value": np.array([self.p["pad"]], np.int32)},
                      version=9)
        return b.node("Concat", [ids, fill], {"axis": 1}, type=_t(I32, [None, None]))

    def write(self, b: Builder, buf: Value, tok: Value, at: Value,
              when: Value | None = None) -> Value:
        """`buf` [R, max_length] with column `at` (int64 scalar) set to `tok` [R, 1] (where
        the bool scalar `when` holds, when given)."""
        here = b.node("Equal", [self.cols, at])
        if when is not None:
            here = b.node("And", [here, when], version=7)
        return b.node("Where", [here, tok, buf], type=_t(I32, [None, None]))

    # -- the whole ---------------------------------------------------------------------------
    def build(self) -> list[Node]:
        p, f, o = self.p, self.p["feeds"], self.outer
        self.eos = o.const(np.int32(p["eos"]), "eos")
        self.pad = o.const(np.int32(p["pad"]), "pad")
        if self.p["stepwise"]:
            return self.build_stepwise()
        ids = self.cast(o, f["input_ids"], I32)
        mask64, pos, pos_last = self.positions(o, ids, f["attention_mask"])
        batch = self.dim(o, ids, 0)
        batch1 = o.unsqueeze(batch, 0)
        pasts = self.empty_pasts(o, p, batch1)
        if f["min_length"] is not None:
            self.min_length = self.scalar(o, f["min_length"], I64)
        self.max_length = self.checked_max_length(o, ids, beam=False)
        seqs = self.buffer(o, ids)
        length = self.dim(o, ids, 1)

        first = p["init"] if p["init"] is not None else p["decoder"]
        two = [None, None]
        outs = self.inline(o, first, [self.cast(o, ids, p["idt"], two),
                                      self.cast(o, pos, p["pdt"], two),
                                      self.cast(o, mask64, p["mdt"], two), *pasts], "first")
        scores = self.process(o, outs[0], seqs, length, first=True)
        tok, done = self.pick(o, scores, None, lambda: o.i64(0, "zero"))
        seqs1 = self.write(o, seqs, tok, length)
        ones = o.node("ConstantOfShape", [o.node("Concat", [batch1, o.i64([1], "one")],
                                                 {"axis": 0})],
                      {"value": np.ones(1, np.int64)}, version=9, type=_t(I64, [None, 1]))
        trips = o.node("Sub", [o.node("Sub", [self.max_length, length]), o.i64(1, "one")],
                       type=_t(I64, []))
        cond0 = self.going(o, done)
        state = {"token": tok, "position": pos_last, "mask": mask64, "seqs": seqs1,
                 "length": o.node("Add", [length, o.i64(1, "one")], type=_t(I64, [])),
                 "done": done}
        loop, final = self.body(state, outs[1:], ones, trips, cond0)
        o.nodes.append(loop)
        seq = self.node.outputs[0]
        o.node("Identity", [final], version=16, out=seq)
        if seq.type is None:
            seq.type = _t(I32, [None, None])
        return o.nodes

    def body(self, state: dict, presents, ones, trips, cond0):
        """The greedy Loop (`state`: the carried values other than the presents) and its
        final sequences."""
        p = self.p
        b = Builder(self.graph, f"{self.prefix}/loop")
        it = Value(f"{self.prefix}/iteration", _t(I64, []))
        cond_in = Value(f"{self.prefix}/cond_in", _t(BOOL, []))
        prm = {k: Value(f"{self.prefix}/{k}", GREEDY_TYPES[k]) for k in state}
        past_p = [Value(f"{self.prefix}/past_{i}", _t(dt, [k, None, h, None, s]))
                  for i, (k, h, s, dt) in enumerate(p["pasts"])]
        pos = b.node("Add", [prm["position"], self.outer.i64(1, "one")],
                     type=_t(I64, [None, 1]))
        mask = b.node("Concat", [prm["mask"], ones], {"axis": 1}, type=_t(I64, [None, None]))
        outs = self.inline(b, p["decoder"], [self.cast(b, prm["token"], p["idt"], [None, 1]),
                                             self.cast(b, pos, p["pdt"], [None, 1]),
                                             self.cast(b, mask, p["mdt"], [None, None]),
                                             *past_p], "step")
        scores = self.process(b, outs[0], prm["seqs"], prm["length"], first=False)
        tok_n, done_n = self.pick(b, scores, prm["done"],
                                  lambda: b.node("Add", [it, self.outer.i64(1, "one")]))
        new = {"token": tok_n, "position": pos, "mask": mask, "done": done_n,
               "seqs": self.write(b, prm["seqs"], tok_n, prm["length"]),
               "length": b.node("Add", [prm["length"], self.outer.i64(1, "one")],
                                type=_t(I64, []))}
        loop, final = self.make_loop(b, state, prm, new, presents, past_p, outs[1:],
                                     self.going(b, done_n), trips, cond0, it, cond_in,
                                     ["seqs"])
        return loop, final["seqs"]

    def make_loop(self, b: Builder, state: dict, prm: dict, new: dict, presents: list,
                  past_p: list, presents_n: list, cond_out: Value, trips: Value,
                  cond0: Value, it: Value, cond_in: Value, wanted: list[str]
                  ) -> tuple[Loop, dict]:
        """The Loop carrying `state` (params `prm`, next values `new`) and the presents;
        the final values of its `wanted` keys."""
        keys = list(state)
        params = [prm[k] for k in keys] + past_p
        results = [new[k] for k in keys] + list(presents_n)
        # a result that is its parameter or an outer value needs a node of its own
        for j, r in enumerate(results):
            if r is params[j] or r.producer is None or r.producer not in b.nodes:
                results[j] = b.node("Identity", [r], version=16, type=params[j].type)
        body = Graph(f"{self.prefix}_body", inputs=[it, cond_in, *params],
                     outputs=[cond_out, *results], nodes=b.nodes)
        init = [state[k] for k in keys] + list(presents)
        ports = [Carried(v, q, r) for v, q, r in zip(init, params, results)]
        final = {k: Value(f"{self.prefix}/{k}_final", prm[k].type) for k in wanted}
        loop = Loop(body, ports, [Last(results[keys.index(k)], final[k]) for k in wanted],
                    trip_count=trips, initial_condition=cond0, condition_result=cond_out,
                    condition_param=cond_in, iteration_param=it,
                    name=f"{self.prefix}/loop", negative_trip_count="zero")
        return loop, final

    # -- the prompt through the loop's step (`stepwise`) ------------------------------------
    def build_stepwise(self) -> list[Node]:
        """GreedySearch / Sampling as one Loop whose step also reads the prompt, a token a
        step (`LowerGeneration`'s ``stepwise``)."""
        p, f, o = self.p, self.p["feeds"], self.outer
        ids = self.cast(o, f["input_ids"], I32)
        mask64, pos, last = self.positions(o, ids, f["attention_mask"])
        if f["min_length"] is not None:
            self.min_length = self.scalar(o, f["min_length"], I64)
        self.max_length = self.checked_max_length(o, ids, beam=False)
        seqs = self.buffer(o, ids)
        cols = self.stepwise_columns(o, ids, mask64, pos, last)
        rows1 = o.unsqueeze(self.dim(o, ids, 0), 0)
        state = {"seqs": seqs, "done": o.node("Cast", [o.node("ConstantOfShape", [rows1],
                                                              version=9)], {"to": BOOL.onnx}),
                 "mask": self.empty_mask(o, rows1)}
        b, it, cond_in, prm, past_p = self.loop_params(state, GREEDY_TYPES)
        logits, presents, mask = self.stepwise_decoder(b, it, prm["seqs"], prm["mask"],
                                                       past_p, cols)
        length, gen, first = self.stepwise_phase(b, it, ids)

        def choose(c: Builder) -> dict:
            scores = self.process(c, logits, prm["seqs"], length, first=first)
            tok, done = self.pick(c, scores, prm["done"], lambda: self.step_index)
            return {"seqs": self.write(c, prm["seqs"], tok, length), "done": done}
        new = self.chosen_or_kept(b, gen, choose, {k: prm[k] for k in ("seqs", "done")},
                                  GREEDY_TYPES)
        new["mask"] = mask
        done = new["done"]
        trips = o.node("Sub", [self.max_length, o.i64(1, "one")], type=_t(I64, []))
        loop, final = self.make_loop(b, state, prm, new, self.empty_pasts(o, p, rows1),
                                     past_p, presents, self.going(b, done), trips,
                                     o.const(np.bool_(True), "true"), it, cond_in, ["seqs"])
        o.nodes.append(loop)
        seq = self.node.outputs[0]
        o.node("Identity", [final["seqs"]], version=16, out=seq)
        if seq.type is None:
            seq.type = _t(I32, [None, None])
        return o.nodes

    def chosen_or_kept(self, b: Builder, gen: Value, choose: Callable[[Builder], dict],
                       kept: dict, types: dict) -> dict:
        """``If(gen)``: the values `choose` builds (a step after the prompt chooses a
        token), else `kept` (a step on the prompt leaves the state as it is): a runtime that
        compiles the loop skips the choice on the prompt instead of computing it and
        throwing it away."""
        branches = []
        for tag, make in (("choose", choose), ("keep", lambda c: kept)):
            c = Builder(self.graph, f"{self.prefix}/{tag}")
            got = make(c)
            outs = [c.node("Identity", [got[k]], version=16, type=types[k])
                    if got[k].producer is None or got[k].producer not in c.nodes else got[k]
                    for k in kept]
            branches.append(Graph(f"{self.prefix}_{tag}", inputs=[], outputs=outs,
                                  nodes=c.nodes))
        res = [Value(b.fresh(k), types[k]) for k in kept]
        b.add("If", [gen], res, {"then_branch": branches[0], "else_branch": branches[1]},
              version=16)
        return dict(zip(kept, res))

    def empty_mask(self, o: Builder, rows1: Value) -> Value:
        """An int64 ``[R, 0]``: the attention mask before the first step."""
        shape = o.node("Concat", [rows1, o.i64([0], "z")], {"axis": 0})
        return o.node("ConstantOfShape", [shape], {"value": np.ones(1, np.int64)}, version=9,
                      type=_t(I64, [None, None]))

    def loop_params(self, state: dict, types: dict) -> tuple:
        """(body builder, iteration, condition, state parameters, past parameters)."""
        b = Builder(self.graph, f"{self.prefix}/loop")
        it = Value(f"{self.prefix}/iteration", _t(I64, []))
        cond_in = Value(f"{self.prefix}/cond_in", _t(BOOL, []))
        prm = {k: Value(f"{self.prefix}/{k}", types[k]) for k in state}
        past_p = [Value(f"{self.prefix}/past_{i}", _t(dt, [k, None, h, None, s]))
                  for i, (k, h, s, dt) in enumerate(self.p["pasts"])]
        return b, it, cond_in, prm, past_p

    def stepwise_columns(self, o: Builder, ids: Value, mask64: Value, pos: Value,
                         last: Value) -> tuple[Value, Value]:
        """The position ids and attention mask ([R, max_length] int64) of every column of
        the sequences: the prompt's (`pos`, `mask64`), then those the steps after the
        prompt give: positions ``last + 1, last + 2, ...``, mask 1."""
        one = o.i64(1, "one")
        rest = o.node("Sub", [self.max_length, self.dim(o, ids, 1)])
        ahead = o.node("Range", [one, o.node("Add", [rest, one]), one], version=11)
        pos_all = o.node("Concat", [pos, o.node("Add", [last, o.unsqueeze(ahead, 0)])],
                         {"axis": 1}, type=_t(I64, [None, None]))
        shape = o.node("Concat", [o.unsqueeze(self.dim(o, ids, 0), 0), o.unsqueeze(rest, 0)],
                       {"axis": 0})
        ones = o.node("ConstantOfShape", [shape], {"value": np.ones(1, np.int64)}, version=9)
        mask_all = o.node("Concat", [mask64, ones], {"axis": 1}, type=_t(I64, [None, None]))
        return pos_all, mask_all

    def stepwise_decoder(self, b: Builder, it: Value, seqs: Value, mask: Value,
                         past: list[Value], cols: tuple[Value, Value]) -> tuple:
        """The decoder on column `it` of the sequences `seqs` (a prompt token, or the token
        the last step chose), its position and mask read from `cols` (`stepwise_columns`),
        the mask so far `mask` grown by that column: (logits, presents, the mask)."""
        p = self.p
        at = b.unsqueeze(it, 0)
        tok = b.node("Gather", [seqs, at], {"axis": 1})
        pos = b.node("Gather", [cols[0], at], {"axis": 1})
        mask = b.node("Concat", [mask, b.node("Gather", [cols[1], at], {"axis": 1})],
                      {"axis": 1}, type=_t(I64, [None, None]))
        outs = self.inline(b, p["decoder"], [self.cast(b, tok, p["idt"], [None, 1]),
                                             self.cast(b, pos, p["pdt"], [None, 1]),
                                             self.cast(b, mask, p["mdt"], [None, None]),
                                             *past], "step")
        return outs[0], outs[1:], mask

    def stepwise_phase(self, b: Builder, it: Value, ids: Value) -> tuple[Value, ...]:
        """``(length, gen, first)`` of step `it`: the tokens known (`it` + 1), whether the
        step chooses a token (the prompt `ids` is read), whether it is the first that does;
        also ``self.step_index``, the index of the chosen token among the new ones."""
        o = self.outer
        length = b.node("Add", [it, o.i64(1, "one")], type=_t(I64, []))
        prompt = self.dim(b, ids, 1)
        gen = b.node("GreaterOrEqual", [length, prompt], version=12, type=_t(BOOL, []))
        first = b.node("Equal", [length, prompt], type=_t(BOOL, []))
        self.step_index = b.node("Max", [b.node("Sub", [length, prompt]), o.i64(0, "zero")],
                                 type=_t(I64, []))
        return length, gen, first


#: the types of the greedy loop's carried values
GREEDY_TYPES = {"token": _t(I32, [None, 1]), "position": _t(I64, [None, 1]),
                "mask": _t(I64, [None, None]), "seqs": _t(I32, [None, None]),
                "length": _t(I64, []), "done": _t(BOOL, [None])}


#: the types of the beam loop's carried values
STATE_TYPES = {"ntok": _t(I32, [None]), "nidx": _t(I64, [None]), "pos": _t(I64, [None, 1]),
               "mask": _t(I64, [None, None]), "seqs": _t(I32, [None, None]),
               "done": _t(BOOL, [None]), "beam_scores": _t(F32, [None]),
               "hyp_scores": _t(F32, [None, None]), "hyp_seqs": _t(I32, [None, None, None]),
               "hyp_count": _t(I64, [None]), "length": _t(I64, []),
               "steps": _t(F32, [None, None, None])}


class _BeamLowering(_Lowering):
    """The nodes that replace one BeamSearch node (`gen_beam`'s loop, batched over rows)."""

    def prepare(self, b: Builder, scores: Value) -> Value:
        return b.node("LogSoftmax", [scores], {"axis": 1}, type=_t(F32, [None, None]))

    def rows(self, b: Builder, v: Value) -> Value:
        """[B, ...] -> [B * K, ...], each row K times."""
        o = self.outer
        u = b.unsqueeze(v, 1)
        shape = b.node("Shape", [u])
        shape = b.node("Concat", [self.batch1, self.k1,
                                  b.node("Slice", [shape, o.i64([2], "s"),
                                                   o.i64([np.iinfo(np.int64).max], "e")])],
                       {"axis": 0})
        rep = b.node("Expand", [u, shape])
        flat = b.node("Concat", [o.i64([-1], "m1"),
                                 b.node("Slice", [shape, o.i64([2], "s"),
                                                  o.i64([np.iinfo(np.int64).max], "e")])],
                      {"axis": 0})
        return b.node("Reshape", [rep, flat])

    def len_pow(self, b: Builder, length: Value) -> Value:
        """``float32(length) ** length_penalty`` (a scalar)."""
        return b.node("Pow", [self.cast(b, length, F32, []), self.lp], type=_t(F32, []))

    def select(self, b: Builder, logits: Value, seqs: Value, length: Value, st: dict,
               first: bool) -> dict:
        """One beam step after the decoder (`gen_beam.beam_search`'s loop body) on the
        sequences `seqs` ([R, max_length], `length` tokens so far): the next tokens, source
        rows, beam scores, hypotheses, done flags and sequences."""
        o, p = self.outer, self.p
        K, K2 = self.k, self.k2
        scores = self.process(b, logits, seqs, length, first)               # [R, V]
        vocab = self.dim(b, scores, 1)
        s = b.node("Add", [scores, b.unsqueeze(st["beam_scores"], 1)])
        steps = self.step_scores(b, st, s, first)
        flat_shape = b.node("Concat", [self.batch1, o.i64([-1], "m1")], {"axis": 0})
        s = b.node("Reshape", [s, flat_shape])                               # [B, K*V]
        top_s, order = b.add("TopK", [s, self.k2_1], [Value(b.fresh("top")), Value(
            b.fresh("order"))], {"axis": 1, "largest": 1, "sorted": 1}, version=11).outputs
        tok = b.node("Mod", [order, vocab])                                  # [B, 2K] int64
        beam = b.node("Div", [order, vocab])
        src = b.node("Add", [beam, self.row0])                               # + b*K
        j = self.j2k                                                          # [2K]
        if p["eos"] >= 0:
            is_eos = b.node("Equal", [tok, o.i64(p["eos"], "eos")])
        else:
            is_eos = b.node("Less", [tok, o.i64(-1, "m1")])                   # all False
        non_eos = b.node("Not", [is_eos], version=1)
        upto = b.node("CumSum", [self.cast(b, non_eos, I64), o.i64(1, "axis")], version=11)
        chosen = b.node("And", [non_eos, b.node("LessOrEqual", [upto, K], version=16)],
                        version=7)
        key = b.node("Where", [chosen, j, b.node("Add", [j, K2])])
        _, at = b.add("TopK", [key, self.k_1], [Value(b.fresh("v")), Value(b.fresh("at"))],
                      {"axis": 1, "largest": 0, "sorted": 1}, version=11).outputs
        done = st["done"]
        done_bk = b.unsqueeze(done, 1)                                        # [B, 1]
        sel_s = b.node("Where", [done_bk, o.const(np.float32(0), "zero"),
                                 b.node("GatherElements", [top_s, at], {"axis": 1})])
        sel_t = b.node("Where", [done_bk, o.i64(p["pad"], "pad"),
                                 b.node("GatherElements", [tok, at], {"axis": 1})])
        sel_r = b.node("Where", [done_bk, o.i64(0, "zero"),
                                 b.node("GatherElements", [src, at], {"axis": 1})])
        flat = o.i64([-1], "m1")
        beam_scores = b.node("Reshape", [sel_s, flat], type=_t(F32, [None]))
        ntok = self.cast(b, b.node("Reshape", [sel_t, flat]), I32, [None])
        nidx = b.node("Reshape", [sel_r, flat], type=_t(I64, [None]))
        # hypotheses: eos among the first K candidates of a batch not done, in order j
        in_k = b.node("Less", [j, K])
        add = b.node("And", [b.node("And", [is_eos, in_k], version=7),
                             b.node("Not", [done_bk], version=1)], version=7)   # [B, 2K]
        first_k = b.node("Slice", [add, o.i64([0], "z"), b.unsqueeze(K, 0), o.i64([1], "a")])
        new_s = b.node("Div", [b.node("Slice", [top_s, o.i64([0], "z"), b.unsqueeze(K, 0),
                                                o.i64([1], "a")]), self.len_pow(b, length)])
        new_r = b.node("Slice", [src, o.i64([0], "z"), b.unsqueeze(K, 0), o.i64([1], "a")])
        new_seq = b.node("Gather", [seqs, new_r], {"axis": 0})  # [B, K, max_length]
        hyp = self.add_hypotheses(b, st, first_k, new_s, new_seq)
        # done: K hypotheses and (early stopping or none of the candidates can beat the worst)
        flat_top = b.node("Reshape", [top_s, flat])
        best_at = b.node("Add", [b.unsqueeze(self.row0_b, 1), b.unsqueeze(j, 0)])  # b*K + j
        best = b.node("ReduceMax", [b.node("Gather", [flat_top, best_at], {"axis": 0}),
                                    o.i64([1], "a1")], {"keepdims": 0}, version=18)
        full = b.node("Equal", [hyp["count"], K])
        if p["early"]:
            finished = full
        else:
            worst = b.node("ReduceMin", [hyp["scores"], self.outer.i64([1], "a1")], {"keepdims": 0},
                           version=18)
            cur = b.node("Div", [best, self.len_pow(b, length)])
            finished = b.node("And", [full, b.node("GreaterOrEqual", [worst, cur], version=12)],
                              version=7)
        done_n = b.node("Or", [done, finished], version=7, type=_t(BOOL, [None]))
        seqs_n = self.write(b, b.node("Gather", [seqs, nidx], {"axis": 0}),
                            b.unsqueeze(ntok, 1), length)
        return {"beam_scores": beam_scores, "ntok": ntok, "nidx": nidx, "seqs": seqs_n,
                "done": done_n, **{f"hyp_{k}": v for k, v in hyp.items()},
                **({"steps": steps} if steps is not None else {})}

    def step_scores(self, b: Builder, st: dict, s: Value, first: bool) -> Value | None:
        """The ``scores`` output's buffer ``[max_length - S, R, V]`` (zeros where no step
        ran) with this step's `s` [R, V] written at its index, when the node asks for it."""
        if not self.want_scores:
            return None
        o = self.outer
        if first:
            shape = b.node("Concat", [b.unsqueeze(self.trips1, 0), b.node("Shape", [s])],
                           {"axis": 0})
            buf = b.node("ConstantOfShape", [shape], {"value": np.zeros(1, np.float32)},
                         version=9)
            self.step_at = b.node("Range", [o.i64(0, "zero"), self.trips1, o.i64(1, "one")],
                                  version=11)
        else:
            buf = st["steps"]
        here = b.node("Equal", [self.step_at, st["step"]])
        here = b.node("Reshape", [here, o.i64([-1, 1, 1], "col3")])
        return b.node("Where", [here, b.unsqueeze(s, 0), buf], type=_t(F32, [None, None, None]))

    def add_hypotheses(self, b: Builder, st: dict, valid: Value, new_s: Value,
                       new_seq: Value) -> dict:
        """The best K of a batch's hypotheses and the `valid` new ones ([B, n] scores
        `new_s`, sequences `new_seq` [B, n, max_length]), added in order; ties keep the
        later one."""
        o = self.outer
        n = self.dim(b, new_s, 1)
        back = b.node("Range", [b.node("Sub", [n, o.i64(1, "one")]), o.i64(-1, "m1"),
                                o.i64(-1, "m1")], version=11)                # n-1 .. 0
        ninf = o.const(np.float32(-np.inf), "ninf")
        sc = b.node("Gather", [b.node("Where", [valid, new_s, ninf]), back], {"axis": 1})
        sq = b.node("Gather", [new_seq, back], {"axis": 1})
        all_s = b.node("Concat", [sc, st["hyp_scores"]], {"axis": 1})
        all_q = b.node("Concat", [sq, st["hyp_seqs"]], {"axis": 1})
        top, at = b.add("TopK", [all_s, self.k_1], [Value(b.fresh("hs")), Value(
            b.fresh("ha"))], {"axis": 1, "largest": 1, "sorted": 1}, version=11).outputs
        at3 = b.node("Expand", [b.unsqueeze(at, 2), b.node("Shape", [st["hyp_seqs"]])])
        seqs = b.node("GatherElements", [all_q, at3], {"axis": 1},
                      type=_t(I32, [None, None, None]))
        added = b.node("ReduceSum", [self.cast(b, valid, I64), o.i64([1], "a")],
                       {"keepdims": 0})
        count = b.node("Min", [b.node("Add", [st["hyp_count"], added]), self.k])
        top.type = _t(F32, [None, None])
        count.type = _t(I64, [None])
        return {"scores": top, "seqs": seqs, "count": count}

    def build(self) -> list[Node]:
        p, f, o = self.p, self.p["feeds"], self.outer
        self.eos = o.const(np.int32(p["eos"]), "eos")
        self.pad = o.const(np.int32(p["pad"]), "pad")

        def scalar_or(name, default, dt):
            v = f[name]
            return self.scalar(o, v, dt) if v is not None else o.const(
                np.asarray(default, dt.numpy), name)
        self.k = scalar_or("num_beams", 1, I64)
        self.lp = scalar_or("length_penalty", 1.0, F32)
        outs = self.node.outputs
        self.want_scores = len(outs) > 2 and outs[2] is not None
        self.max_length = self.checked_max_length(o, f["input_ids"], beam=True)
        # the same check before the loop too: a compiler that needs num_return_sequences
        # known (TopK's k) learns it there, before tracing the loop
        self.max_length = o.node("Add", [self.max_length, self.positive(
            o, scalar_or("num_return_sequences", 1, I64))], type=_t(I64, []))
        if f["min_length"] is not None:
            self.min_length = self.scalar(o, f["min_length"], I64)
        self.k1 = o.unsqueeze(self.k, 0)
        self.k2 = o.node("Mul", [self.k, o.i64(2, "two")])
        self.k_1, self.k2_1 = self.k1, o.unsqueeze(self.k2, 0)
        self.j2k = o.node("Range", [o.i64(0, "z"), self.k2, o.i64(1, "one")], version=11)
        ids0 = self.cast(o, f["input_ids"], I32, [None, None])
        batch = self.dim(o, ids0, 0)
        self.batch1 = o.unsqueeze(batch, 0)
        self.row0_b = o.node("Mul", [o.node("Range", [o.i64(0, "z"), batch, o.i64(1, "one")],
                                            version=11), self.k])            # b*K, [B]
        self.row0 = o.unsqueeze(self.row0_b, 1)
        # prompt (`gen_greedy.prompt`), each row K times
        mask0, pos0, pos_last = self.positions(o, ids0, f["attention_mask"])
        ids = self.rows(o, ids0)
        mask64, pos_last = self.rows(o, mask0), self.rows(o, pos_last)
        rows = self.dim(o, ids, 0)
        rows1 = o.unsqueeze(rows, 0)
        # [0, -1e9, ...] per batch; no hypotheses yet
        first_beam = o.node("Equal", [o.node("Range", [o.i64(0, "z"), self.k, o.i64(1, "one")],
                                                 version=11), o.i64(0, "zero")])
        bs = o.node("Where", [first_beam, o.const(np.float32(0), "zero"),
                              o.const(np.float32(-1e9), "minus")])
        bs = o.node("Reshape", [o.node("Expand", [o.unsqueeze(bs, 0), o.node(
            "Concat", [self.batch1, self.k1], {"axis": 0})]), o.i64([-1], "m1")])
        bk = o.node("Concat", [self.batch1, self.k1], {"axis": 0})
        hyp_shape = o.node("Concat", [bk, o.unsqueeze(self.max_length, 0)], {"axis": 0})
        st = {"beam_scores": bs,
              "done": o.node("Cast", [o.node("ConstantOfShape", [self.batch1], version=9)],
                             {"to": BOOL.onnx}),
              "hyp_scores": o.node("ConstantOfShape", [bk], {"value": np.full(
                  1, -np.inf, np.float32)}, version=9),
              "hyp_seqs": o.node("ConstantOfShape", [hyp_shape], {"value": np.array(
                  [p["pad"]], np.int32)}, version=9),
              "hyp_count": o.node("ConstantOfShape", [self.batch1], {"value": np.zeros(
                  1, np.int64)}, version=9)}
        if p["stepwise"]:
            final = self.stepwise_loop(st, ids, self.rows(o, pos0), pos_last, mask64, rows1)
        else:
            final = self.first_and_loop(st, ids0, pos0, mask0, ids, mask64, pos_last, rows)
        self.finish(final, bk, scalar_or)
        return o.nodes

    def positive(self, o: Builder, n: Value) -> Value:
        """An int64 scalar 0 that fails to compute where the int64 scalar `n` is below 1 (a
        ``ConstantOfShape`` of dimension n - 1)."""
        below = o.node("ConstantOfShape", [o.unsqueeze(o.node("Sub", [n, o.i64(1, "one")]), 0)],
                       {"value": np.zeros(1, np.int64)}, version=9)
        return o.node("Mul", [o.node("ReduceSum", [o.node("Shape", [below])], {"keepdims": 0}),
                              o.i64(0, "zero")], type=_t(I64, []))

    def first_and_loop(self, st: dict, ids0: Value, pos0: Value, mask0: Value, ids: Value,
                       mask64: Value, pos_last: Value, rows: Value) -> dict:
        """The first step on the prompt (`ids0`, `pos0`, `mask0`: [B, S]), then the Loop
        over the further tokens; the Loop's final values."""
        o = self.outer
        rows1 = o.unsqueeze(rows, 0)
        outs = self.first_step(o, ids0, pos0, mask0, rows)
        length = self.dim(o, ids, 1)
        self.trips1 = o.node("Sub", [self.max_length, length])  # steps: max_length - S
        st["step"] = o.i64(0, "zero")
        new = self.select(o, outs[0], self.buffer(o, ids), length, st, first=True)
        ones = o.node("ConstantOfShape", [o.node("Concat", [rows1, o.i64([1], "one")],
                                                 {"axis": 0})],
                      {"value": np.ones(1, np.int64)}, version=9, type=_t(I64, [None, 1]))
        trips = o.node("Sub", [o.node("Sub", [self.max_length, length]), o.i64(1, "one")],
                       type=_t(I64, []))
        state = {"ntok": new["ntok"], "nidx": new["nidx"], "pos": pos_last, "mask": mask64,
                 "seqs": new["seqs"], "done": new["done"], "beam_scores": new["beam_scores"],
                 "hyp_scores": new["hyp_scores"], "hyp_seqs": new["hyp_seqs"],
                 "hyp_count": new["hyp_count"],
                 "length": o.node("Add", [length, o.i64(1, "one")], type=_t(I64, [])),
                 **({"steps": new["steps"]} if self.want_scores else {})}
        loop, final = self.beam_loop(state, outs[1:], ones, trips, self.going(o, new["done"]))
        o.nodes.append(loop)
        return final

    def finish(self, final: dict, bk: Value, scalar_or: Callable) -> None:
        """After the Loop (its `final` values): the node's outputs."""
        o = self.outer
        # open beams of batches not done join the hypotheses, in beam order
        seqs, bsc, length = final["seqs"], final["beam_scores"], final["length"]
        shape3 = o.node("Concat", [bk, o.i64([-1], "m1")], {"axis": 0})
        valid = o.node("Expand", [o.node("Not", [o.unsqueeze(final["done"], 1)], version=1),
                                  bk])
        new_s = o.node("Div", [o.node("Reshape", [bsc, bk]), self.len_pow(o, length)])
        hyp = self.add_hypotheses(o, final, valid, new_s, o.node("Reshape", [seqs, shape3]))
        # num_return_sequences in [1, num_beams], else an error as the kernel's: TopK fails
        # above num_beams, a ConstantOfShape of a negative dimension below 1. Read from the
        # input after the loop: a runtime that compiles what follows the loop on its own
        # (JAX) then sees it as the input, a value it may specialise on
        num_return = scalar_or("num_return_sequences", 1, I64)
        nr = o.unsqueeze(o.node("Add", [num_return, self.positive(o, num_return)]), 0)
        top, at = o.add("TopK", [hyp["scores"], nr], [Value(o.fresh("rs")), Value(
            o.fresh("ra"))], {"axis": 1, "largest": 1, "sorted": 1}, version=11).outputs
        out_shape = o.node("Concat", [self.batch1, nr, o.unsqueeze(self.max_length, 0)],
                           {"axis": 0})
        at3 = o.node("Expand", [o.unsqueeze(at, 2), out_shape])
        o.node("GatherElements", [hyp["seqs"], at3], {"axis": 1}, out=self.node.outputs[0])
        if len(self.node.outputs) > 1 and self.node.outputs[1] is not None:
            o.node("Identity", [top], version=16, out=self.node.outputs[1])
        if self.want_scores:  # [steps, R, V] -> [steps, B, K, V]
            shape = o.node("Concat", [o.i64([-1], "m1"), bk, o.unsqueeze(self.dim(
                o, final["steps"], 2), 0)], {"axis": 0})
            o.node("Reshape", [final["steps"], shape], out=self.node.outputs[2])

    def stepwise_loop(self, st: dict, ids: Value, pos: Value, last: Value, mask64: Value,
                      rows1: Value) -> dict:
        """One Loop over every column of the sequences but the last (`build_stepwise`'s,
        the beams' rows [R, ...]: `ids` the prompt, `pos` / `last` / `mask64` as
        `positions` gives them): a step on the prompt only reads it; the Loop's final
        values."""
        o = self.outer
        cols = self.stepwise_columns(o, ids, mask64, pos, last)
        rows = o.node("Range", [o.i64(0, "z"), self.dim(o, ids, 0), o.i64(1, "one")],
                      version=11, type=_t(I64, [None]))
        st = {**st, "seqs": self.buffer(o, ids), "nidx": rows, "mask": self.empty_mask(o, rows1),
              "length": self.dim(o, ids, 1)}
        b, it, cond_in, prm, past_p = self.loop_params(st, STATE_TYPES)
        past = [b.node("Gather", [v, prm["nidx"]], {"axis": 1}) for v in past_p]
        logits, presents, mask = self.stepwise_decoder(b, it, prm["seqs"], prm["mask"], past,
                                                       cols)
        length, gen, first = self.stepwise_phase(b, it, ids)
        keys = ("beam_scores", "nidx", "seqs", "done", "hyp_scores", "hyp_seqs", "hyp_count")
        # a step on the prompt leaves the beams as they are
        new = self.chosen_or_kept(
            b, gen, lambda c: self.select(c, logits, prm["seqs"], length, prm, first=first),
            {k: rows if k == "nidx" else prm[k] for k in keys}, STATE_TYPES)
        new.update(mask=mask, length=b.node("Add", [length, o.i64(1, "one")], type=_t(I64, [])))
        trips = o.node("Sub", [self.max_length, o.i64(1, "one")], type=_t(I64, []))
        loop, final = self.make_loop(b, st, prm, new, self.empty_pasts(o, self.p, rows1),
                                     past_p, presents, self.going(b, new["done"]), trips,
                                     o.const(np.bool_(True), "true"), it, cond_in,
                                     ["seqs", "beam_scores", "done", "hyp_scores", "hyp_seqs",
                                      "hyp_count", "length"])
        o.nodes.append(loop)
        return final

    def first_step(self, o: Builder, ids: Value, pos: Value, mask: Value, rows: Value
                   ) -> list[Value]:
        """The first decoder's outputs on the prompt (`ids`, `pos`, `mask`: [B, S]), each
        row repeated for its beams (logits on axis 0, presents on axis 1): the beams of a
        batch start from the same prompt, so the decoder runs once per batch row, not once
        per beam."""
        p = self.p
        first = p["init"] if p["init"] is not None else p["decoder"]
        two = [None, None]
        outs = self.inline(o, first, [self.cast(o, ids, p["idt"], two),
                                      self.cast(o, pos, p["pdt"], two),
                                      self.cast(o, mask, p["mdt"], two),
                                      *self.empty_pasts(o, p, self.batch1)], "first")
        rep = o.node("Div", [o.node("Range", [o.i64(0, "z"), rows, o.i64(1, "one")],
                                    version=11), self.k])                # row r <- r // K
        return [o.node("Gather", [v, rep], {"axis": 0 if i == 0 else 1}, type=v.type)
                for i, v in enumerate(outs)]

    def beam_loop(self, st: dict, presents: list[Value], ones: Value, trips: Value,
                  cond0: Value) -> tuple[Loop, dict]:
        """The Loop over the further steps and its final state."""
        p = self.p
        b = Builder(self.graph, f"{self.prefix}/loop")
        it = Value(f"{self.prefix}/iteration", _t(I64, []))
        cond_in = Value(f"{self.prefix}/cond_in", _t(BOOL, []))
        params = {k: Value(f"{self.prefix}/{k}", STATE_TYPES[k]) for k in st}
        past_p = [Value(f"{self.prefix}/past_{i}", _t(dt, [k, None, h, None, s]))
                  for i, (k, h, s, dt) in enumerate(p["pasts"])]
        nidx = params["nidx"]
        past = [b.node("Gather", [v, nidx], {"axis": 1}) for v in past_p]
        pos = b.node("Add", [b.node("Gather", [params["pos"], nidx], {"axis": 0}),
                             self.outer.i64(1, "one")], type=_t(I64, [None, 1]))
        mask = b.node("Concat", [b.node("Gather", [params["mask"], nidx], {"axis": 0}), ones],
                      {"axis": 1}, type=_t(I64, [None, None]))
        tok = b.unsqueeze(params["ntok"], 1)
        outs = self.inline(b, p["decoder"], [self.cast(b, tok, p["idt"], [None, 1]),
                                             self.cast(b, pos, p["pdt"], [None, 1]),
                                             self.cast(b, mask, p["mdt"], [None, None]),
                                             *past], "step")
        new = self.select(b, outs[0], params["seqs"], params["length"],
                          {**params, "step": b.node("Add", [it, self.outer.i64(1, "one")])},
                          first=False)
        new.update(pos=pos, mask=mask, length=b.node(
            "Add", [params["length"], self.outer.i64(1, "one")], type=_t(I64, [])))
        return self.make_loop(b, st, params, new, presents, past_p, outs[1:],
                              self.going(b, new["done"]), trips, cond0, it, cond_in,
                              ["seqs", "beam_scores", "done", "hyp_scores", "hyp_seqs",
                               "hyp_count", "length", *(["steps"] if self.want_scores else [])])
