"""OpenVINO ``GatherTree`` (domain ``org.openvinotoolkit``): the beams of a beam search read
back from their parents, for NumPy (the loop runs over time steps, vectorised over batch and
beam)::

    for each batch b and beam w, with L = max_seq_len[b]:
        parent = w
        for t = L - 1 down to 0:
            out[t, b, w] = step_ids[t, b, parent];  parent = parent_idx[t, b, parent]
        out[t >= L, b, w] = end_token
        the steps after the first end_token become end_token too

Parents are read as integers whatever the input type.
"""

from __future__ import annotations

import numpy as np


def gather_tree(step_ids, parent_idx, max_seq_len, end_token):
    t_max, batch, width = step_ids.shape
    end = np.asarray(end_token).reshape(()).astype(step_ids.dtype)
    out = np.full(step_ids.shape, end, dtype=step_ids.dtype)
    lens = np.minimum(np.asarray(max_seq_len).reshape(-1).astype(np.int64), t_max)
    parent = np.broadcast_to(np.arange(width), (batch, width)).copy()
    rows = np.arange(batch)[:, None]
    for t in range(t_max - 1, -1, -1):
        live = (t < lens)[:, None]  # [B, 1]
        p = np.clip(parent, 0, width - 1)
        ids = step_ids[t][rows, p]
        out[t] = np.where(live, ids, end)
        parent = np.where(live, parent_idx[t][rows, p].astype(np.int64), parent)
    finished = np.cumsum(out == end, axis=0) > 0
    after = np.concatenate([np.zeros((1, batch, width), bool), finished[:-1]], axis=0)
    return np.where(after, end, out)
