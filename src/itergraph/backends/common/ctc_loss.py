"""OpenVINO ``CTCLoss`` (domain ``org.openvinotoolkit``, from ``CTCLoss-4``): the negative
log-likelihood of each batch entry's label sequence under the per-step class scores.

Inputs: ``logits [N, T, C]`` (unnormalised; a log-softmax over C is taken per step),
``logit_length [N]``, ``labels [N, T]``, ``label_length [N]``, optional scalar
``blank_index`` (the last class, C - 1, by default). The first ``label_length[b]`` labels
are first reduced: with ``unique`` to their first occurrences in order, else with
``preprocess_collapse_repeated`` runs of equal labels to one. Alignments over the first
``logit_length[b]`` steps count:
- ``ctc_merge_repeated`` (standard CTC): a label may span several steps, blanks anywhere,
  and a blank must separate two equal consecutive labels;
- otherwise every label takes exactly one step and every other step is a blank.
The loss is ``-log`` of the summed probability of the alignments (``inf`` where none).

Written for any array module `xp` (NumPy, ``jax.numpy``): the recursion runs over the T
steps in Python, vectorised over the batch and the label positions.
"""

from __future__ import annotations

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def _reduce_labels(xp, labels, lengths, collapse: bool, unique: bool):
    """(labels moved to the front, new lengths) after `unique` / `collapse`."""
    t = labels.shape[1]
    steps = xp.arange(t)
    inside = steps[None, :] < lengths[:, None]
    if unique:
        same = labels[:, :, None] == labels[:, None, :]  # [N, t, s]
        earlier = steps[None, :] < steps[:, None]  # s < t
        keep = inside & ~xp.any(same & earlier[None], axis=2)
    elif collapse:
        prev = xp.concatenate([labels[:, :1] - 1, labels[:, :-1]], axis=1)
        keep = inside & (labels != prev)
    else:
        return labels, lengths
    count = xp.cumsum(keep.astype(xp.int64), axis=1)  # kept so far
    # the source of slot s: the number of steps whose running count is at most s
    src = xp.sum(count[:, None, :] <= steps[None, :, None], axis=2)
    src = xp.minimum(src, t - 1)
    return xp.take_along_axis(labels, src, axis=1), count[:, -1]


def ctc_loss(xp, logits, logit_len, labels, label_len, blank, collapse: bool, merge: bool,
             unique: bool):
    n, t_max, c = logits.shape
    dt = logits.dtype
    x = logits.astype(xp.float32)
    logp = x - xp.log(xp.sum(xp.exp(x), axis=2, keepdims=True))
    labels = labels.astype(xp.int64)
    logit_len = logit_len.reshape(-1).astype(xp.int64)
    label_len = label_len.reshape(-1).astype(xp.int64)
    blank = xp.asarray(c - 1 if blank is None else blank, xp.int64).reshape(())
    labels, label_len = _reduce_labels(xp, labels, label_len, collapse, unique)
    neg = xp.float32(-xp.inf)
    if merge:
        s_len = 2 * t_max + 1
        pos = xp.arange(s_len)
        ext = xp.where(pos % 2 == 1, xp.take(labels, xp.minimum(pos // 2, t_max - 1), axis=1),
                       blank)  # blank, label 0, blank, label 1, ...
        ext_prev = xp.concatenate([xp.full((n, 2), -1, xp.int64), ext[:, :-2]], axis=1)
        skip = (pos % 2 == 1)[None, :] & (ext != ext_prev)  # may jump over a blank
        lp = xp.take_along_axis(logp, xp.broadcast_to(ext[:, None, :], (n, t_max, s_len)),
                                axis=2)  # [N, T, S]
        alpha = xp.where(pos[None, :] < 2, lp[:, 0, :], neg)
        for t in range(1, t_max):
            a1 = xp.concatenate([xp.full((n, 1), neg), alpha[:, :-1]], axis=1)
            a2 = xp.concatenate([xp.full((n, 2), neg), alpha[:, :-2]], axis=1)
            a2 = xp.where(skip, a2, neg)
            new = xp.logaddexp(xp.logaddexp(alpha, a1), a2) + lp[:, t, :]
            alpha = xp.where((t < logit_len)[:, None], new, alpha)
        last = 2 * label_len
        end = xp.take_along_axis(alpha, last[:, None], axis=1)[:, 0]
        before = xp.take_along_axis(alpha, xp.maximum(last - 1, 0)[:, None], axis=1)[:, 0]
        total = xp.where(label_len > 0, xp.logaddexp(end, before), end)
    else:
        s_len = t_max + 1
        pos = xp.arange(s_len)
        lab = xp.take_along_axis(logp, xp.broadcast_to(labels[:, None, :], (n, t_max, t_max)),
                                 axis=2)  # [N, T, label slot]
        blank_lp = xp.take(logp, blank, axis=2)  # [N, T]
        beta = xp.where(pos[None, :] == 0, xp.float32(0), neg)
        for t in range(t_max):
            emit = xp.concatenate([xp.full((n, 1), neg), beta[:, :-1] + lab[:, t, :]], axis=1)
            new = xp.logaddexp(beta + blank_lp[:, t:t + 1], emit)
            beta = xp.where((t < logit_len)[:, None], new, beta)
        total = xp.take_along_axis(beta, label_len[:, None], axis=1)[:, 0]
    return (-total).astype(dt)
