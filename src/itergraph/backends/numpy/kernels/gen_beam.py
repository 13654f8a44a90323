"""NumPy kernel of ONNX Runtime's ``com.microsoft.BeamSearch`` for decoder-only models
(``model_type`` 0, GPT contract; see `gen_greedy`), following ORT's CPU implementation
(``beam_search_impl_gpt.h``, ``beam_search_scorer.cc``). As a plain Python loop::

    rows = batch * num_beams (each prompt repeated); beam_scores = [0, -1e9, ...] per batch
    while len < max_length:
        logits, *past = decoder(...)
        s = process_logits(log_softmax(logits[:, -1]), seqs, step) + beam_scores[:, None]
        top 2*num_beams of s.reshape(batch, num_beams * vocab) (ties: lower index first)
        per batch not done, in that order: an eos among the first num_beams candidates adds
            the sequence so far to the batch's hypotheses (score / len ** length_penalty);
            other tokens fill the next beams until num_beams are chosen;
            done when num_beams hypotheses and (early_stopping or none can beat the worst)
        seqs = seqs[indices] + tokens; past reordered by indices
        if all done: break
    open beams join the hypotheses; the best num_return_sequences are returned, with
    their scores, into [batch, num_return_sequences, max_length] filled with pad
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir import Node
from ..plan import CompileContext
from . import kernel
from .gen_greedy import DOMAIN, _attrs, _decoder, _scalar, refuse_outputs
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


def beam_search(node, plan, pasts, idt, mdt, ids, *, max_length, num_beams, num_return,
                length_penalty, early_stopping, pad, eos, mask=None, process=None):
    ids = np.asarray(ids).astype(np.int32)
    B, S = ids.shape
    K = num_beams
    if S >= max_length:
        raise ExecutionError(f"{where(node)}: input_ids length {S} must be below max_length "
                             f"{max_length}")
    if not 1 <= num_return <= K:
        raise ExecutionError(f"{where(node)}: num_return_sequences {num_return} must be in "
                             f"[1, num_beams={K}]")
    mask = (ids != pad) if mask is None else (np.asarray(mask) != 0)
    pos = np.where(mask, np.cumsum(mask, axis=1) - 1, 0)
    seqs = np.repeat(ids, K, axis=0)
    pos, m = np.repeat(pos, K, axis=0), np.repeat(mask.astype(np.int64), K, axis=0)
    R = B * K
    past = [np.zeros((k, R, h, 0, d), dt) for k, h, d, dt in pasts]
    beam_scores = np.tile(np.array([0.0] + [-1e9] * (K - 1), np.float32), B)
    hyps = [Hypotheses(K, length_penalty, early_stopping) for _ in range(B)]
    done = np.zeros(B, bool)
    step_ids, step = seqs, 1
    while True:
        outs = plan.fn(step_ids.astype(idt), pos.astype(idt), m.astype(mdt), *past)
        logits, past = np.asarray(outs[0]), list(outs[1:])
        if logits.ndim != 3 or logits.shape[0] != R:
            raise ExecutionError(f"{where(node)}: decoder logits have shape {logits.shape}, "
                                 f"expected [batch * num_beams, sequence, vocab]")
        V = logits.shape[2]
        s = process(_log_softmax(logits[:, -1, :]), seqs, step)
        s = (s + beam_scores[:, None]).astype(np.float32).reshape(B, K * V)
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
        past = [p[:, nidx] for p in past]
        step_ids = ntok[:, None]
        pos = pos[nidx][:, -1:] + 1
        m = np.concatenate([m[nidx], np.ones((R, 1), m.dtype)], axis=1)
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
    return out, scores


@kernel("BeamSearch", domain=DOMAIN)
def beam_search_kernel(node: Node, ctx: CompileContext):
    """``sequences`` [B, num_return_sequences, max_length], ``sequences_scores``."""
    plan, pasts, idt, mdt = _decoder(node, ctx)
    eos, pad = _attrs(node)
    early = bool(node.attrs.get("early_stopping", 0))
    n_out = len(node.outputs)
    refuse_outputs(node, ("sequences", "sequences_scores"))

    def run(input_ids, max_length=None, min_length=None, num_beams=None,
            num_return_sequences=None, length_penalty=None, repetition_penalty=None,
            vocab_mask=None, prefix_vocab_mask=None, attention_mask=None, *rest):
        K = int(_scalar(num_beams, 1))
        mn = int(_scalar(min_length, 0))
        rp = float(_scalar(repetition_penalty, 1.0))

        def process(scores, seqs, step):
            return process_logits(scores, seqs, step, repetition_penalty=rp,
                                  vocab_mask=vocab_mask, prefix_vocab_mask=prefix_vocab_mask,
                                  min_length=mn, eos=eos, rows_per_batch=K)
        seqs, scores = beam_search(
            node, plan, pasts, idt, mdt, input_ids, max_length=int(_scalar(max_length, 0)),
            num_beams=K, num_return=int(_scalar(num_return_sequences, 1)),
            length_penalty=float(_scalar(length_penalty, 1.0)), early_stopping=early,
            pad=pad, eos=eos, mask=attention_mask, process=process)
        res = (seqs, scores, None)[:n_out]
        return res[0] if n_out == 1 else res

    return run
