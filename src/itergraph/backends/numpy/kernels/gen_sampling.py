"""NumPy kernel of ONNX Runtime's ``com.microsoft.Sampling`` for decoder-only models: the
greedy loop of `gen_greedy` where each token is drawn instead of taken by argmax::

    s = process_logits(logits[:, -1], ...)                   # see gen_logits
    s /= temperature;  s[0, 0] -= presence_penalty * sum(presence_mask)   # ORT's own quirk
    ascending sort of s; cumulative softmax c: the tokens whose c <= 1 - top_p are set to
    filter_value, except the last min_tokens_to_keep (ORT's cumulate_and_filter)
    token ~ softmax(s)       # semantics.generation.draw, with the step's uniform number

ONNX Runtime draws with its own generator (``std::default_random_engine`` and its
Multinomial kernel); itergraph draws with NumPy's, seeded by the ``seed`` input: one uniform
number per step and row (`semantics.generation.sampling_uniforms`, drawn before the first
step), the token the first whose cumulative probability exceeds it (NumPy's
``Generator.choice``). Tokens therefore equal ORT's exactly when one candidate is left at
each step (e.g. a tiny ``top_p``); otherwise they follow the same distribution but are
different draws. The JAX backend draws the same numbers (`passes.lower_sampling`).
"""

from __future__ import annotations

import numpy as np

from ....errors import UnsupportedError, where
from ....ir import Node
from ....semantics.generation import (
    check_inputs,
    check_seed,
    check_vocab,
    draw,
    sampling_uniforms,
)
from ..plan import CompileContext
from . import kernel
from .gen_greedy import DOMAIN, _attrs, _decoder, _scalar, generate, refuse_outputs, split_args
from .gen_logits import process_logits


def top_p_filter(s, top_p, filter_value, min_keep):
    """ORT's top-p filtering (``cumulate_and_filter``) of the scores `s` [rows, vocab]."""
    s = s.copy()
    V = s.shape[1]
    for r in range(s.shape[0]):
        order = np.argsort(s[r], kind="stable")
        srt = s[r, order].astype(np.float64)
        p = np.exp(srt - srt.max())
        c = np.cumsum(p / p.sum())
        for j in range(V - min_keep):
            if c[j] <= 1 - top_p:
                s[r, order[j]] = filter_value
    return s


@kernel("Sampling", domain=DOMAIN)
def sampling(node: Node, ctx: CompileContext):
    """``sequences`` [B, max_length] drawn (see the module docstring)."""
    plan, pasts, idt, mdt = _decoder(node, ctx)
    eos, pad = _attrs(node)
    ngram = int(node.attrs.get("no_repeat_ngram_size", 0))
    a = node.attrs
    if int(a.get("custom", 0)):
        raise UnsupportedError(f"{where(node)}: Sampling with custom=1 is not supported")
    temperature = float(a.get("temperature", 1.0))
    top_p = float(a.get("top_p", 0.0))
    filter_value = float(a.get("filter_value", -np.inf))
    min_keep = int(a.get("min_tokens_to_keep", 1))
    presence_penalty = float(a.get("presence_penalty", 0.0))
    n_out = len(node.outputs)
    refuse_outputs(node, ("sequences",))

    names = ("input_ids", "max_length", "min_length", "repetition_penalty", "vocab_mask",
             "prefix_vocab_mask", "attention_mask", "presence_mask", "seed")

    def run(*args):
        a, outer = split_args(node, args, names)
        check_inputs(node, a, beam=False)  # ONNX Runtime refuses these as for GreedySearch
        (input_ids, max_length, min_length, repetition_penalty, vocab_mask, prefix_vocab_mask,
         attention_mask, presence_mask, seed) = (a[n] for n in names)
        check_seed(where(node), seed)
        ml = int(_scalar(max_length, 0))
        ids = np.asarray(input_ids)
        uniforms = iter(sampling_uniforms(seed, ml - ids.shape[1], ids.shape[0]))
        mn, rp = int(_scalar(min_length, 0)), float(_scalar(repetition_penalty, 1.0))

        def process(scores, seqs, step):
            if step == 1:
                check_vocab(node, a, scores.shape[1])
            s = process_logits(scores, seqs, step, repetition_penalty=rp,
                               vocab_mask=vocab_mask, prefix_vocab_mask=prefix_vocab_mask,
                               min_length=mn, eos=eos, no_repeat_ngram_size=ngram)
            if temperature != 1.0:
                with np.errstate(over="ignore"):  # masked scores (float32's lowest) -> -inf
                    s = s / np.float32(temperature)
            if presence_mask is not None and presence_penalty != 0.0:
                # as ORT's PresencePenaltyLogitsProcessor does (its pointer never advances):
                # the whole penalty lands on the first score of the first row
                pm = np.asarray(presence_mask, np.float32).reshape(-1)[:s.size]
                s = s.copy()
                s.flat[0] -= np.float32((pm * np.float32(presence_penalty)).sum())
            if 0.0 < top_p < 1.0:
                s = top_p_filter(s, top_p, filter_value, min_keep)
            return s.astype(np.float32)

        seqs = generate(node, plan.bind(outer), pasts, idt, mdt, input_ids, ml,
                        lambda s: draw(s, next(uniforms)), pad=pad, eos=eos,
                        mask=attention_mask, process=process)
        return seqs if n_out == 1 else (seqs, *[None] * (n_out - 1))

    return run


@kernel("SamplingUniforms", domain="itergraph")
def sampling_uniforms_kernel(node: Node, ctx: CompileContext):
    """``SamplingUniforms(input_ids, max_length, seed)`` of `passes.lower_sampling`: the
    ``[max_length - S, B]`` uniform numbers `semantics.generation.sampling_uniforms` draws
    (a negative seed refused, naming the node ``of``: the Sampling node lowered)."""

    of = str(node.attrs.get("of", where(node)))

    def run(input_ids, max_length, seed=None):
        check_seed(of, seed)
        b, s = np.shape(input_ids)
        return sampling_uniforms(seed, int(_scalar(max_length, 0)) - s, b)

    return run


@kernel("TopPFilter", domain="itergraph")
def top_p_filter_kernel(node: Node, ctx: CompileContext):
    """``TopPFilter(scores)`` of `passes.lower_sampling`: `top_p_filter` with the node's
    ``top_p``, ``filter_value`` and ``min_tokens_to_keep``."""
    a = node.attrs
    top_p, fill = float(a["top_p"]), float(a.get("filter_value", -np.inf))
    keep = int(a.get("min_tokens_to_keep", 1))
    return lambda s: top_p_filter(np.asarray(s, np.float32), top_p, fill, keep)
