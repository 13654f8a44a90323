"""Whether a GPT-contract decoder is provably *causal and position-wise*: its logits and
presents for a call on ``q`` tokens equal, in exact arithmetic, those of ``q`` calls on one
token each, every call's presents the next one's pasts.

That holds when every value computed from the tokens keeps the sequence axis (axis 1 of
``input_ids`` / ``position_ids``) and each of its positions reads only the same position of
its operands, except ONNX Runtime's ``Attention`` with ``unidirectional=1``, whose query at
position i reads the keys and values up to i (the past's included) and the raw attention
mask over them, and writes its present as the past followed by this call's keys and values.
`causal_decoder` proves this from a small table of ops (the fused ops `convert_generation`
writes, element-wise math, products with constant weights, embedding lookups); a decoder
holding anything else is not proven, and its prompt must then run as one call.
"""

from __future__ import annotations

from ..ir.graph import MICROSOFT_DOMAIN as MS
from ..ir.graph import Graph, Node
from ..ir.static_values import const_value
from ..ir.traits import ELEMENTWISE, traits

#: contrib ops that work on the last axis alone: every input a position-wise value of the
#: same rank or a constant of rank 1 (scale, bias)
_LAST_AXIS = {(MS, "SkipLayerNormalization"), (MS, "SkipSimplifiedLayerNormalization"),
              (MS, "SimplifiedLayerNormalization"), (MS, "FastGelu"), (MS, "Gelu"),
              (MS, "BiasGelu"), ("", "LayerNormalization")}


def causal_decoder(dec: Graph) -> bool:
    """Whether `dec` (inputs ``input_ids, position_ids, attention_mask, past_*``; outputs
    ``logits, present_*``) is causal and position-wise (module docstring)."""
    ins = dec.inputs
    rank: dict[int, int] = {ins[0].uid: 2, ins[1].uid: 2}   # position-wise values -> rank
    mask, pasts = ins[2].uid, {v.uid for v in ins[3:]}
    presents: set[int] = set()
    for node in dec.nodes:
        reads = [v for v in node.inputs if v is not None]
        if any(v.uid in presents for v in reads) or node.subgraphs():
            return False  # a present is read by the decoder's outputs alone
        if not any(v.uid in rank or v.uid == mask or v.uid in pasts for v in reads):
            continue  # computed from constants
        out = _rank_after(node, rank, mask, pasts)
        if out is None:
            return False
        if (node.domain, node.op_type) == (MS, "Attention"):
            rank[node.outputs[0].uid] = out
            presents.update(v.uid for v in node.outputs[1:2] if v is not None)
            continue
        # every output keeps the sequence axis (LayerNormalization's statistics, the sum
        # SkipLayerNormalization passes on)
        rank.update((v.uid, out) for v in node.outputs if v is not None)
    logits, outs = dec.outputs[0], dec.outputs[1:]
    return logits.uid in rank and all(v.uid in presents for v in outs)


def _rank_after(node: Node, rank: dict[int, int], mask: int, pasts: set[int]) -> int | None:
    """The rank of `node`'s first output when it is position-wise on its position-wise
    inputs (`rank`), else None."""
    ins = list(node.inputs)
    key = (node.domain, node.op_type)
    if node.domain == "" and traits(node.op_type) & ELEMENTWISE:
        return _elementwise(ins, rank)
    if key == ("", "Gather"):
        table, idx = ins[0], ins[1]
        t = const_value(table)
        ok = int(node.attrs.get("axis", 0)) == 0 and t is not None and idx.uid in rank
        return rank[idx.uid] + t.ndim - 1 if ok else None
    if key == ("", "MatMul"):
        w = const_value(ins[1])
        return rank.get(ins[0].uid) if w is not None and w.ndim == 2 else None
    if key in _LAST_AXIS:
        if key == ("", "LayerNormalization") and int(node.attrs.get("axis", -1)) != -1:
            return None
        return _elementwise(ins, rank, last_axis=True)
    if key == (MS, "Attention"):
        return _attention(node, ins, rank, mask, pasts)
    return None


def _elementwise(ins: list, rank: dict[int, int], last_axis: bool = False) -> int | None:
    """The common rank of the position-wise operands when the others are constants that do
    not reach the sequence axis (at most rank - 2 dimensions, or a 1 there)."""
    ranks = {rank[v.uid] for v in ins if v is not None and v.uid in rank}
    if len(ranks) != 1:
        return None
    r = ranks.pop()
    for v in ins:
        if v is None or v.uid in rank:
            continue
        c = const_value(v)
        if c is None or (last_axis and c.ndim > 1):
            return None
        if c.ndim >= r - 1 and (c.ndim > r or c.shape[c.ndim - (r - 1)] != 1):
            return None
    return r


def _attention(node: Node, ins: list, rank: dict[int, int], mask: int,
               pasts: set[int]) -> int | None:
    """ONNX Runtime's Attention: causal (``unidirectional=1``), weights and bias constants,
    the decoder's raw attention mask, a past of the decoder's inputs, no further inputs."""
    if int(node.attrs.get("unidirectional", 0)) != 1 or len(ins) != 5:
        return None
    x, w, bias, m, past = ins
    if x is None or rank.get(x.uid) != 3 or const_value(w) is None:
        return None
    if bias is not None and const_value(bias) is None:
        return None
    if m is None or m.uid != mask or past is None or past.uid not in pasts:
        return None
    return 3
