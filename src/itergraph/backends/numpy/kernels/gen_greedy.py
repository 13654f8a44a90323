"""NumPy kernels of ONNX Runtime's ``com.microsoft.GreedySearch`` (and ``Sampling`` where it is
deterministic) for decoder-only models (``model_type`` 0, GPT contract).

The decoder subgraph has inputs ``input_ids, position_ids, attention_mask, past_0..`` and
outputs ``logits, present_0..``; an ``init_decoder`` of the same contract, when present, runs
the first step. Subgraphs may read outer values. As a plain Python loop::

    mask = attention_mask or (input_ids != pad)
    pos = cumsum(input_ids != pad) - 1, 0 at pad (the ids, not the mask: ORT's positions)
    past = empty [2, B, heads, 0, head]
    ids, done = input_ids, [False] * B
    while ids.shape[1] < max_length:
        logits, *past = decoder(step_ids, pos, mask, *past)    # step_ids: prompt, then last
        scores = process_logits(logits[:, -1], ids, step, ...)  # see gen_logits
        tok = argmax(scores)  (Sampling: softmax(scores / T) within top_p, drawn)
        tok[done | tok == eos] = pad; done |= tok_was_eos
        ids = concat(ids, tok); if all(done): break
        pos = (first: count(input_ids != pad), then last pos + 1); mask = concat(mask, 1)
    sequences = ids padded with pad to [B, max_length]
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, UnsupportedError, where
from ....ir import Node
from ....ir.graph import MICROSOFT_DOMAIN as DOMAIN
from ....semantics.generation import _scalar, check_inputs, check_vocab, required_inputs
from ....semantics.generation import required_token_ids as _attrs
from ..plan import CompileContext
from . import kernel
from .gen_logits import process_logits


class Subgraph:
    """A compiled subgraph attribute of a generation node; the outer values it reads
    (``convert_generation`` moves the subgraphs' initializers to the main graph) come after
    the node's inputs in the kernel's arguments and are bound per call."""

    def __init__(self, node: Node, ctx: CompileContext, g):
        self.plan = ctx.compile(g)
        pos = {v.uid: i for i, v in enumerate(node.captured())}
        self.idx = [pos[v.uid] for v in self.plan.captures]

    def bind(self, outer):
        caps = [outer[i] for i in self.idx]
        fn = self.plan.fn
        return lambda *feeds: fn(*feeds, *caps)


class Decoders:
    """The ``decoder`` and, when the file has one, the ``init_decoder`` that ONNX Runtime runs
    for the first step only (the prompt; ``convert_generation`` writes one for GPT-2 whose
    logits are the last position's). ``bind(outer)(*feeds)`` runs the decoder, its
    ``.first(*feeds)`` the init decoder (or the decoder)."""

    def __init__(self, node: Node, ctx: CompileContext, g, init=None):
        self.dec = Subgraph(node, ctx, g)
        self.init = None if init is None else Subgraph(node, ctx, init)

    def bind(self, outer):
        fn = self.dec.bind(outer)
        fn.first = fn if self.init is None else self.init.bind(outer)
        return fn


def split_args(node: Node, args, names):
    """The kernel's arguments as ``(dict of the named node inputs, outer values)``; an
    absent optional input is None."""
    n = len(node.inputs)
    ins = list(args[:n]) + [None] * max(0, len(names) - n)
    return dict(zip(names, ins)), args[n:]


def check_attrs(node: Node) -> None:
    for attr in ("logits_processor",):
        if int(node.attrs.get(attr, 0)):
            raise UnsupportedError(f"{where(node)}: attribute '{attr}' is not supported")


def _decoder(node: Node, ctx: CompileContext):
    """The compiled decoder subgraph and the shapes of its empty pasts."""
    model_type = int(node.attrs.get("model_type", 0))
    if model_type != 0:
        raise UnsupportedError(
            f"{where(node)}: {node.op_type} with model_type {model_type} is not supported "
            + ("(ONNX Runtime's CPU GreedySearch and Sampling take only 0, GPT)"
               if node.op_type != "BeamSearch" else "(only 0, GPT, 1, T5, and 2, Whisper)"))
    check_attrs(node)
    if "encoder" in node.attrs:
        raise UnsupportedError(f"{where(node)}: attribute 'encoder' with model_type 0")
    g = node.attrs.get("decoder")
    if g is None:
        raise UnsupportedError(f"{where(node)}: no 'decoder' attribute")
    names = [v.name for v in g.inputs]
    if names[:3] != ["input_ids", "position_ids", "attention_mask"] or len(g.inputs) < 4:
        raise UnsupportedError(f"{where(node)}: decoder inputs {names} do not follow the GPT "
                               f"contract (input_ids, position_ids, attention_mask, past_*)")
    if len(g.outputs) != len(g.inputs) - 2:
        raise UnsupportedError(f"{where(node)}: decoder has {len(g.outputs)} outputs, the GPT "
                               f"contract wants logits and one present per past")
    pasts = []
    for v in g.inputs[3:]:
        shape = getattr(v.type, "shape", None)
        if shape is None or len(shape) != 5 or not isinstance(shape[2], int) \
                or not isinstance(shape[4], int):
            raise UnsupportedError(f"{where(node)}: decoder input '{v.name}' needs a static "
                                   f"shape [2, batch, heads, past, head_size], got {shape}")
        pasts.append((shape[0] if isinstance(shape[0], int) else 2, shape[2], shape[4],
                      v.type.dtype.numpy if v.type.dtype else np.float32))
    init = node.attrs.get("init_decoder")
    if init is not None and ([v.name for v in init.inputs] != names or
                             [v.name for v in init.outputs] != [v.name for v in g.outputs]):
        raise UnsupportedError(f"{where(node)}: init_decoder inputs / outputs differ from the "
                               f"decoder's")
    plan = Decoders(node, ctx, g, init)
    idt = g.inputs[0].type.dtype.numpy if g.inputs[0].type.dtype else np.int32
    mdt = g.inputs[2].type.dtype.numpy if g.inputs[2].type.dtype else np.int32
    return plan, pasts, idt, mdt


def prompt(node, ids, max_length: int, pad: int, mask=None):
    """``(ids, mask, positions, last)`` of a decoder-only prompt as ONNX Runtime's
    ``CreateGptInputs`` makes them: int32 ids ``[B, S]`` (S must be below `max_length`), the
    attention mask (the given one as it is, else ``ids != pad``), each token's position
    among the tokens that are not `pad` (0 for a pad token) -- counted from the ids even
    when an attention mask is given, as ORT does -- and ``last`` [B, 1], the count of
    non-pad tokens less one: the next step's position is ``last + 1`` (ORT's
    ``sequence_lengths``), whatever the mask or the last token."""
    ids = np.asarray(ids).astype(np.int32)
    if ids.shape[1] >= max_length:
        raise ExecutionError(f"{where(node)}: input_ids length {ids.shape[1]} must be below "
                             f"max_length {max_length}")
    real = ids != pad
    mask = real.astype(np.int64) if mask is None else np.asarray(mask).astype(np.int64)
    pos = np.where(real, np.cumsum(real, axis=1) - 1, 0)
    return ids, mask, pos, real.sum(axis=1, keepdims=True) - 1


def generate(node, fn, pasts, idt, mdt, ids, max_length, pick, *, pad, eos, mask=None,
             process=lambda scores, seqs, step: scores):
    """Decoder-only generation with one row per sequence; ``pick(scores) -> tokens``."""
    ids, mask, pos, last = prompt(node, ids, max_length, pad, mask)
    B, S = ids.shape
    past = [np.zeros((k, B, h, 0, d), dt) for k, h, d, dt in pasts]
    done = np.zeros(B, bool)
    step_ids, m = ids, mask.astype(np.int64)
    step = 1
    while True:
        call = fn.first if step == 1 else fn
        outs = call(step_ids.astype(idt), pos.astype(idt), m.astype(mdt), *past)
        logits, past = np.asarray(outs[0]), list(outs[1:])
        if logits.ndim != 3 or logits.shape[0] != B:
            raise ExecutionError(f"{where(node)}: decoder logits have shape {logits.shape}, "
                                 f"expected [batch, sequence, vocab]")
        scores = process(logits[:, -1, :].astype(np.float32), ids, step)
        tok = pick(scores).astype(np.int32)
        hit = done | (tok == eos)
        tok = np.where(hit, pad, tok).astype(np.int32)
        done = hit
        ids = np.concatenate([ids, tok[:, None]], axis=1)
        if done.all() or ids.shape[1] >= max_length:
            break
        step_ids = tok[:, None]
        pos = (last if step == 1 else pos[:, -1:]) + 1
        m = np.concatenate([m, np.ones((B, 1), m.dtype)], axis=1)
        step += 1
    out = np.full((B, max_length), pad, np.int32)
    out[:, :ids.shape[1]] = ids
    return out


@kernel("GreedySearch", domain=DOMAIN)
def greedy_search(node: Node, ctx: CompileContext):
    """``sequences`` [B, max_length]: argmax of the processed logits at every step."""
    plan, pasts, idt, mdt = _decoder(node, ctx)
    eos, pad = _attrs(node)
    ngram = int(node.attrs.get("no_repeat_ngram_size", 0))

    names = ("input_ids", "max_length", "min_length", "repetition_penalty", "vocab_mask",
             "prefix_vocab_mask", "attention_mask")
    required_inputs(node, names)

    def run(*args):
        a, outer = split_args(node, args, names)
        check_inputs(node, a, beam=False)
        ml, mn = int(_scalar(a["max_length"], 0)), int(_scalar(a["min_length"], 0))
        rp = float(_scalar(a["repetition_penalty"], 1.0))

        def process(scores, seqs, step):
            if step == 1:
                check_vocab(node, a, scores.shape[1])
            return process_logits(scores, seqs, step, repetition_penalty=rp,
                                  vocab_mask=a["vocab_mask"],
                                  prefix_vocab_mask=a["prefix_vocab_mask"],
                                  min_length=mn, eos=eos, no_repeat_ngram_size=ngram)
        return generate(node, plan.bind(outer), pasts, idt, mdt, a["input_ids"], ml,
                        lambda s: np.argmax(s, axis=1), pad=pad, eos=eos,
                        mask=a["attention_mask"], process=process)

    return run


def refuse_outputs(node: Node, computed: tuple[str, ...]) -> None:
    """An `UnsupportedError` when the file asks for an optional output beyond `computed`
    (``scores``, ``filtered_logits``): it would come back empty, not as ONNX Runtime's."""
    asked = [v.name for v in node.outputs[len(computed):] if v is not None and v.name]
    if asked:
        raise UnsupportedError(f"{where(node)}: output '{asked[0]}' (beyond "
                               f"{', '.join(computed)}) is not computed")
