"""ONNX Runtime's logits processing for its generation ops (``logits_processor.cc``).

For one step, with ``scores`` [rows, vocab] the last position's logits and ``seqs`` [rows, L]
the tokens so far (prompt included), in this order::

    if repetition_penalty != 1:  for each distinct token t of seqs[r]:
        scores[r, t] = scores[r, t] * p if scores[r, t] < 0 else scores[r, t] / p
    if 0 < no_repeat_ngram_size <= L:  # n = no_repeat_ngram_size
        scores[r, t] = lowest for each t that ends an n-gram of seqs[r] whose first n - 1
        tokens are the last n - 1 of seqs[r]
    scores[:, vocab_mask == 0] = lowest                       # every step
    if first step: scores[prefix_vocab_mask[batch(r)] == 0] = lowest
    if L < min_length: scores[:, eos] = lowest
"""

from __future__ import annotations

import numpy as np

LOWEST = np.finfo(np.float32).min


def process_logits(scores, seqs, step, *, repetition_penalty=1.0, vocab_mask=None,
                   prefix_vocab_mask=None, min_length=0, eos=-1, rows_per_batch=1,
                   no_repeat_ngram_size=0):
    """`scores` processed as described in the module docstring (a new array)."""
    scores = np.array(scores, dtype=np.float32)
    if repetition_penalty != 1.0:
        for r in range(scores.shape[0]):
            toks = np.unique(seqs[r])
            s = scores[r, toks]
            scores[r, toks] = np.where(s < 0, s * repetition_penalty, s / repetition_penalty)
    n = int(no_repeat_ngram_size)
    if 0 < n <= seqs.shape[1]:
        for r in range(scores.shape[0]):
            seq = [int(t) for t in seqs[r]]
            prefix = seq[len(seq) - (n - 1):] if n > 1 else []
            banned = {seq[j + n - 1] for j in range(len(seq) - n + 1)
                      if seq[j:j + n - 1] == prefix}
            scores[r, sorted(banned)] = LOWEST
    if vocab_mask is not None:
        scores[:, np.asarray(vocab_mask).reshape(-1) == 0] = LOWEST
    if prefix_vocab_mask is not None and step == 1:
        pm = np.repeat(np.asarray(prefix_vocab_mask), rows_per_batch, axis=0)
        scores[pm == 0] = LOWEST
    if seqs.shape[1] < min_length and 0 <= eos < scores.shape[1]:
        scores[:, eos] = LOWEST
    return scores
