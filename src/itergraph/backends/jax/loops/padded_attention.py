"""ONNX Runtime's ``com.microsoft`` ``Attention`` reading a K/V cache held as a fixed-capacity
buffer (`padded.Padded`), made exact: the rule `padded_reads` applies to that op.

The cache is the node's ``past`` ``(2, B, N, P, H)``, padded on axis 3 (the past length) and
carried by the loop from the node's ``present``: so ``present`` is carried as a buffer too.
The rule computes the node as `semantics.ms_transformer.attention_node` does, except that the
new keys and values are written into the past buffer at its valid length (instead of a
Concat after the past) and every key from the valid length on weighs exactly 0 (its score
``-inf``, its value read as 0: `ms_transformer.attend`); the causal part counts the past
from the valid length. ``present`` is that buffer, padded as the past grown by the query
length. A raw ``mask_index`` ``(B, T)`` must be padded the same way (the loop's attention
mask grown by Concat, read at the same valid length); its positions beyond are ignored.

Which inputs are taken padded, on which axis, and which output grows are the op's facts in
`ir.padded_axes.PADDED_INPUTS`; this module emits the node.

Refused (`Refused`: the loop is then not rewritten): a past padded on another axis, a
padded weight, bias or attention_bias, a mask padded otherwise than the present or not padded
while the past is, a write beyond the per-iteration growth.
"""

from __future__ import annotations

import numpy as np

from ....errors import where
from ....ir.padded_axes import MICROSOFT, PADDED_INPUTS
from ....semantics import ms_transformer as mt
from ..ops._util import precision
from .padded import Padded, Refused, appended_rows, gather_rows

_PAST, _MASK = PADDED_INPUTS[(MICROSOFT, "Attention")]  # past (grown into present), mask
PAST, MASK = _PAST.index, _MASK.index
PAST_AXIS, PAST_RANK = _PAST.axis, _PAST.rank


def is_attention(node) -> bool:
    return (node.domain, node.op_type) == (MICROSOFT, "Attention")


def grows_present(c) -> bool:
    """Whether carried value `c` is a cache this rule grows: its next value is the
    ``present`` of an Attention whose ``past`` is `c` (read through Identity, or a Gather
    reordering rows)."""
    p, v = c.result.producer, c.result
    while p is not None and p.op_type == "Identity":
        v = p.inputs[0]
        p = v.producer
    if p is None or not is_attention(p) or len(p.outputs) <= _PAST.grows or \
            p.outputs[_PAST.grows] is not v:
        return False
    u = p.inputs[PAST] if len(p.inputs) > PAST else None
    while u is not None and u is not c.param and u.producer is not None and \
            u.producer.op_type in ("Identity", "Gather"):
        u = u.producer.inputs[0]
    return u is c.param


def attention(cx, rule, inputs):
    """The rule: (output, present as `Padded`)."""
    import jax
    import jax.numpy as jnp

    node = cx.node
    past = inputs[PAST] if len(inputs) > PAST else None
    mask = inputs[MASK] if len(inputs) > MASK else None
    if not isinstance(past, Padded) or past.axis != PAST_AXIS or past.ndim != PAST_RANK:
        raise Refused(f"{where(node)}: reads a grown buffer other than as its past (padded "
                      "on the past length)")
    if past.src is not None and past.rows == PAST_AXIS:
        past = past.materialized()
    if any(isinstance(x, Padded) for i, x in enumerate(inputs) if i not in (PAST, MASK)):
        raise Refused(f"{where(node)}: a padded input other than past and mask_index")
    l0, d, extra = past.key
    grown: list = []

    def append(xp, buf, k, v):
        s = k.shape[2]
        if extra + s > d:
            raise Refused(f"{where(node)}: grows its past by more than its per-iteration "
                          "length")
        new = jnp.stack([k, v]).astype(buf.dtype)
        start = [jnp.zeros((), np.int64)] * PAST_RANK
        start[PAST_AXIS] = jnp.asarray(past.length, np.int64)
        out = jax.lax.dynamic_update_slice(buf, new, start)
        if past.src is None:
            grown.append(Padded(out, PAST_AXIS, (l0, d, extra + s), past.length + s))
            return out[0], out[1], past.length + s
        # rows reordered lazily: the new keys and values of row r written in row r, the
        # attention reading the rows gathered
        src = appended_rows(past.src, past.length, s)
        grown.append(Padded(out, PAST_AXIS, (l0, d, extra + s), past.length + s, src,
                            past.rows))
        # keys and values gathered apart, each where it is read (XLA fuses the gather there)
        kv = [gather_rows(out[i], src, past.rows - 1, PAST_AXIS - 1) for i in (0, 1)]
        return kv[0], kv[1], past.length + s

    if mask is not None and not isinstance(mask, Padded):
        raise Refused(f"{where(node)}: a mask_index that is not padded with its past")
    outs = mt.attention_node(node, jnp, *[x.buf if isinstance(x, Padded) else x
                                          for x in inputs],
                             matmul=lambda p, q: jnp.matmul(p, q, precision=precision()),
                             append=append)
    present = grown[0]
    if mask is not None and (mask.ndim != _MASK.rank or mask.axis != _MASK.axis
                             or mask.key != present.key
                             or mask.buf.shape[_MASK.axis] != present.buf.shape[PAST_AXIS]):
        raise Refused(f"{where(node)}: a mask_index padded otherwise than its present")
    if len(outs) < 2:
        return [outs[0]]
    return [outs[0], present]
