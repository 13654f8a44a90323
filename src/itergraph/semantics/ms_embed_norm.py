"""ONNX Runtime's ``EmbedLayerNormalization`` (domain ``com.microsoft``), the embedding layer
its transformer optimizer fuses in BERT-like graphs; written once over an array module ``xp``.

Inputs ``(input_ids, segment_ids?, word_embedding, position_embedding, segment_embedding?,
gamma, beta, mask?, position_ids?)``: ids ``(B, S)`` (int32), embeddings ``(V, H)``,
``gamma`` / ``beta`` ``(H,)``, ``position_ids`` ``(B, S)`` or ``(1, S)`` (default ``0 ..
S - 1`` in every row). Outputs:

- ``output`` ``(B, S, H)``: ``e = word[ids] + position[position_ids] (+ segment[segment_ids])``
  normalized over its last axis, ``(e - mean) / sqrt(mean((e - mean)^2) + epsilon) * gamma +
  beta`` (``epsilon`` default 1e-12);
- ``mask_index`` ``(B)`` int32: per row, how many entries of ``mask`` equal 1 (ONNX Runtime's
  CPU kernel counts exactly the ones), zeros without a mask;
- ``embedding_sum`` (optional): ``e``.

Half-precision embeddings are summed and normalized in float32 and cast back. Ids outside
their table raise `ModelError` naming the node on NumPy (ONNX Runtime refuses them too);
under JAX, where the values are not known when the program is built, they are clamped.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ModelError, where
from ..ir.attributes import attr
from .ms_transformer import SKIP_NORM_EPSILON, normalize, work_dtype


def _check_ids(node, xp, ids, table, what: str) -> None:
    if xp is np and ids.size and (ids.min() < 0 or ids.max() >= table.shape[0]):
        raise ModelError(f"{where(node)}: {what} holds {int(ids.min())}..{int(ids.max())}, "
                         f"outside the {table.shape[0]} rows of its embedding")


def _rows(node, xp, table, ids, what: str):
    _check_ids(node, xp, ids, table, what)
    return xp.take(table, ids.astype(np.int64), axis=0)


def embed_layer_norm(node, xp, ids, segment_ids, word, position, segment, gamma, beta,
                     mask=None, position_ids=None) -> tuple:
    """``(output, mask_index, embedding_sum)``, cut to the node's output count."""
    if ids.ndim != 2:
        raise ModelError(f"{where(node)}: input_ids must be 2-D (batch, sequence), got "
                         f"shape {tuple(ids.shape)}")
    batch, seq = ids.shape
    for other, what in ((segment_ids, "segment_ids (input 1)"), (mask, "mask (input 7)")):
        if other is not None and tuple(other.shape) != tuple(ids.shape):  # as ONNX Runtime
            raise ExecutionError(f"{where(node)}: {what} has shape {tuple(other.shape)}; "
                                 f"input_ids has {tuple(ids.shape)}, and they must be one")
    wd = work_dtype(word.dtype)
    if position_ids is None:
        position_ids = xp.arange(seq, dtype=np.int64).reshape(1, seq)
    e = _rows(node, xp, word, ids, "input_ids").astype(wd)
    e = e + _rows(node, xp, position, position_ids, "position_ids").astype(wd)
    if segment_ids is not None and segment is not None:
        e = e + _rows(node, xp, segment, segment_ids, "segment_ids").astype(wd)
    eps = float(attr(node, "epsilon", SKIP_NORM_EPSILON))
    _, _, y = normalize(xp, e, (2,), eps, False, wd)
    y = y * gamma.astype(wd) + beta.astype(wd)
    if mask is None:
        index = xp.zeros((batch,), np.int32)
    else:
        index = xp.sum((mask == 1).astype(np.int32), axis=1).astype(np.int32)
    outs = (y.astype(word.dtype), index, e.astype(word.dtype))
    return outs[:max(1, len(node.outputs))]
