"""NumPy kernel of ONNX Runtime's ``com.microsoft.BeamSearch``, following ORT's CPU
implementation (``beam_search_impl_*.h``, ``beam_search_scorer.cc``). The beam loop is shared;
the model's steps come from `gpt_steps` (``model_type`` 0, GPT contract, see `gen_greedy`),
`gen_t5` (1, T5 encoder-decoder) or `gen_whisper` (2). As a plain Python loop::

    rows = batch * num_beams (each prompt repeated); beam_scores = [0, -1e9, ...] per batch
    while len < max_length:
        logits = first step (GPT: the init_decoder or decoder on the prompt; T5 / Whisper:
                 the encoder's logits or a decoder call on the start token), then a decoder
                 step on the last tokens
        s = process_logits(log_softmax(logits[:, -1]), seqs, step) + beam_scores[:, None]
        top 2*num_beams of s.reshape(batch, num_beams * vocab) (ties: lower index first)
        per batch not done, in that order: an eos among the first num_beams candidates adds
            the sequence so far to the batch's hypotheses (score / len ** length_penalty);
            other tokens fill the next beams until num_beams are chosen;
            done when num_beams hypotheses and (early_stopping or none can beat the worst)
        seqs = seqs[indices] + tokens; past reordered by indices
        if all done: break
    open beams join the hypotheses; the best num_return_sequences are returned, with
    their scores, into [batch, num_return_sequences, max_length] filled with pad; the
    optional ``scores`` output stacks every step's s
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir import Node
from ..plan import CompileContext
from . import kernel
from .gen_greedy import (
    DOMAIN,
    _attrs,
    _decoder,
    _scalar,
    check_inputs,
    check_vocab,
    prompt,
    refuse_outputs,
    required_inputs,
    split_args,
)
from .gen_logits import process_logits


class Hypotheses:
    """One batch entry's finished sequences, the best `num_beams` kept (ORT's BeamHypotheses)."""

    def __init__(self, num_beams: int, length_penalty: float, early_stopping: bool):
        self.n, self.lp, self.early = num_beams, np.float32(length_penalty), early_stopping
        self.items: list[tuple[np.float32, np.ndarray]] = []
        self.worst = np.float32(1e9)

    def add(self, seq: np.ndarray, sum_logprobs) -> None:
        score = np.float32(np.float32(sum_logprobs) / np.float32(len(seq)) ** self.lp)
        if len(self.items) < self.n or score > self.worst:
            self.items.append((score, seq.copy()))
            self.items.sort(key=lambda t: t[0])
            if len(self.items) > self.n:
                self.items.pop(0)
            self.worst = self.items[0][0]

    def is_done(self, best_sum_logprobs, length: int) -> bool:
        if len(self.items) < self.n:
            return False
        if self.early:
            return True
        cur = np.float32(np.float32(best_sum_logprobs) / np.float32(length) ** self.lp)
        return bool(self.worst >= cur)


def _log_softmax(x):
    x = x.astype(np.float32)
    m = x.max(axis=1, keepdims=True)
    return (x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))).astype(np.float32)


def beam_search(node, first, advance, seqs, B, *, max_length, num_beams, num_return,
                length_penalty, early_stopping, pad, eos, process, step_scores=False):
    """The beam loop over ``B * num_beams`` rows whose tokens so far are `seqs`: ``first()``
    gives the first step's logits, ``advance(tokens, indices, seqs)`` the next step's after
    the rows were reordered by `indices` and `tokens` appended (see the module docstring)."""
    K = num_beams
    if not 1 <= num_return <= K:
        raise ExecutionError(f"{where(node)}: num_return_sequences {num_return} must be in "
                             f"[1, num_beams={K}]")
    R = B * K
    beam_scores = np.tile(np.array([0.0] + [-1e9] * (K - 1), np.float32), B)
    hyps = [Hypotheses(K, length_penalty, early_stopping) for _ in range(B)]
    done = np.zeros(B, bool)
    L0, per_step = seqs.shape[1], []
    logits, step = first(), 1
    while True:
        logits = np.asarray(logits)
        if logits.ndim != 3 or logits.shape[0] != R:
            raise ExecutionError(f"{where(node)}: decoder logits have shape {logits.shape}, "
                                 f"expected [batch * num_beams, sequence, vocab]")
        V = logits.shape[2]
        s = process(_log_softmax(logits[:, -1, :]), seqs, step)
        s = (s + beam_scores[:, None]).astype(np.float32).reshape(B, K * V)
        if step_scores:
            per_step.append(s.reshape(B, K, V))
        order = np.argsort(-s, axis=1, kind="stable")[:, :2 * K]
        top_s = np.take_along_axis(s, order, axis=1)
        L = seqs.shape[1]
        nscores, ntok, nidx = (np.zeros(R, np.float32), np.full(R, pad, np.int32),
                               np.zeros(R, np.int64))
        flat_top = top_s.reshape(-1)
        for b in range(B):
            if done[b]:
                continue
            j_beam = 0
            for j in range(2 * K):
                tok, src = int(order[b, j] % V), b * K + int(order[b, j] // V)
                if eos >= 0 and tok == eos:
                    if j >= K:
                        continue
                    hyps[b].add(seqs[src], top_s[b, j])
                else:
                    r = b * K + j_beam
                    nscores[r], ntok[r], nidx[r] = top_s[b, j], tok, src
                    j_beam += 1
                if j_beam == K:
                    break
            # ORT reads the best candidate score at offset batch * num_beams
            best = flat_top[b * K: b * K + 2 * K].max()
            if hyps[b].is_done(best, L):
                done[b] = True
        beam_scores = nscores
        seqs = np.concatenate([seqs[nidx], ntok[:, None]], axis=1)
        if done.all() or seqs.shape[1] >= max_length:
            break
        logits = advance(ntok, nidx, seqs)
        step += 1
    out = np.full((B, num_return, max_length), pad, np.int32)
    scores = np.zeros((B, num_return), np.float32)
    for b in range(B):
        if not done[b]:
            for k in range(K):
                hyps[b].add(seqs[b * K + k], beam_scores[b * K + k])
        best = hyps[b].items[::-1][:num_return]
        for i, (sc, sq) in enumerate(best):
            out[b, i, :len(sq)] = sq
            scores[b, i] = sc
    if not step_scores:
        return out, scores, None
    # ORT's scores output: every step's processed scores plus the beam scores; the steps
    # after an early stop are zeros here (ORT leaves them unwritten)
    steps = np.zeros((max_length - L0, B, K, per_step[0].shape[2]), np.float32)
    steps[:len(per_step)] = per_step
    return out, scores, steps


def gpt_steps(node, fn, pasts, idt, mdt, ids, K, *, max_length, pad, mask=None):
    """``(first, advance, seqs)`` of `beam_search` for a GPT decoder (``model_type`` 0)."""
    ids, mask, pos, last = prompt(node, ids, max_length, pad, mask)
    B, S = ids.shape
    seqs = np.repeat(ids, K, axis=0)
    R = B * K
    st = {"pos": np.repeat(pos, K, axis=0), "last": np.repeat(last, K, axis=0),
          "m": np.repeat(mask.astype(np.int64), K, axis=0),
          "past": [np.zeros((k, R, h, 0, d), dt) for k, h, d, dt in pasts]}

    def call(step_ids, run=fn):
        outs = run(step_ids.astype(idt), st["pos"].astype(idt), st["m"].astype(mdt), *st["past"])
        st["past"] = list(outs[1:])
        return outs[0]

    def advance(ntok, nidx, seqs):
        st["past"] = [p[:, nidx] for p in st["past"]]
        st["pos"] = st.pop("last", st["pos"][:, -1:])[nidx] + 1
        st["m"] = np.concatenate([st["m"][nidx], np.ones((R, 1), st["m"].dtype)], axis=1)
        return call(ntok[:, None])

    return (lambda: call(seqs, fn.first)), advance, seqs, B


@kernel("BeamSearch", domain=DOMAIN)
def beam_search_kernel(node: Node, ctx: CompileContext):
    """``sequences`` [B, num_return_sequences, max_length], ``sequences_scores``."""
    model_type = int(node.attrs.get("model_type", 0))
    if model_type == 1:
        from .gen_t5 import t5_steps_factory
        t5 = t5_steps_factory(node, ctx)

        def steps_factory(outer, a, K, max_length, pad):
            return t5(outer, a["input_ids"], K, max_length, pad, a["attention_mask"])
    elif model_type == 2:
        from .gen_whisper import whisper_steps_factory
        steps_factory = whisper_steps_factory(node, ctx)
    else:
        plan, pasts, idt, mdt = _decoder(node, ctx)

        def steps_factory(outer, a, K, max_length, pad):
            return gpt_steps(node, plan.bind(outer), pasts, idt, mdt, a["input_ids"], K,
                             max_length=max_length, pad=pad, mask=a["attention_mask"])
    eos, pad = _attrs(node)
    ngram = int(node.attrs.get("no_repeat_ngram_size", 0))
    early = bool(node.attrs.get("early_stopping", 0))
    n_out = len(node.outputs)
    refuse_outputs(node, ("sequences", "sequences_scores", "scores"))
    want_scores = n_out > 2 and node.outputs[2] is not None
    names = ("input_ids", "max_length", "min_length", "num_beams", "num_return_sequences",
             "length_penalty", "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
             "attention_mask", "decoder_input_ids", "logits_processor", "cross_qk_layer_head",
             "extra_decoding_ids", "temperature")
    if model_type == 0:
        required_inputs(node, names)

    def run(*args):
        a, outer = split_args(node, args, names)
        if model_type == 0:
            check_inputs(node, a, beam=True)
        K = int(_scalar(a["num_beams"], 1))
        mn = int(_scalar(a["min_length"], 0))
        rp = float(_scalar(a["repetition_penalty"], 1.0))
        ml = int(_scalar(a["max_length"], 0))

        def process(scores, seqs, step):
            if step == 1 and model_type == 0:
                check_vocab(node, a, scores.shape[1])
            return process_logits(scores, seqs, step, repetition_penalty=rp,
                                  vocab_mask=a["vocab_mask"],
                                  prefix_vocab_mask=a["prefix_vocab_mask"],
                                  min_length=mn, eos=eos, rows_per_batch=K,
                                  no_repeat_ngram_size=ngram)
        first, advance, seqs0, B = steps_factory(outer, a, K, ml, pad)
        seqs, scores, steps = beam_search(
            node, first, advance, seqs0, B, max_length=ml, num_beams=K,
            num_return=int(_scalar(a["num_return_sequences"], 1)),
            length_penalty=float(_scalar(a["length_penalty"], 1.0)), early_stopping=early,
            pad=pad, eos=eos, process=process, step_scores=want_scores)
        res = (seqs, scores, steps)[:n_out]
        return res[0] if n_out == 1 else res

    return run
