"""How each op treats an axis whose tail is padding, in one table.

A value is *padded* along an axis when the positions from some valid length on may hold any
values: inputs padded to one length (`analysis.batch_axis.padded_prefix`), or a buffer grown
inside a compiled loop (the JAX backend's `loops.padded_reads` and `loops.padded_attention`).
Those users ask here what kind of op a node is and what makes it exact on such an axis; each
keeps only how it follows the axis or emits the node.

Kinds (`Along`):

- ``ELEMENTWISE``: output position i reads position i of every operand (after broadcasting), so
  padding stays in the padding: the ops with trait ``UNARY`` or ``BROADCAST``, and
  ``CastLike`` (element-wise on its first input; its second gives only the element type).
- ``REDUCE``: folds its ``axes`` (trait ``REDUCTION``). Along other axes it keeps the padding
  apart; along the padded axis it is exact once the padding holds `NEUTRAL` (no such value
  for ``ReduceMean``).
- ``NORMALIZE``: ``Softmax``, ``LogSoftmax``, ``Hardmax`` over `traits.normalized_axes`: along
  other axes they keep the padding apart; along the padded axis a soft-max is exact once the
  padding holds ``-inf`` (`MASKED`), its results there exactly 0 (``-inf`` for the log).
- ``CONTRACT``: ``MatMul``: the padded axis as a free dimension stays padded; contracting it is
  exact once both operands hold 0 there (NaN and inf of the padding included).
- ``MOVE``: moves, cuts or joins axes (``Transpose``, ``Unsqueeze``, ``Squeeze``, ``Gather``,
  ``Slice``, ``Concat``, ``Split``, ``Flatten``, ``Reshape``, ``Pad``): where the padded axis
  goes is each user's rule.
- ``LENGTH``: ``Shape``: reads the extent of the axis (for a padded value: its valid length).

Ops of other domains: `PADDED_INPUTS` lists the inputs a contrib op takes padded (ONNX
Runtime's ``Attention``: its ``past`` K/V cache and raw ``mask_index``), and which output is an
input grown (``present``: the ``past`` with the new keys and values written at its length).
Any other op has no kind: a user must make no assumption about it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .graph import MICROSOFT_DOMAIN as MICROSOFT
from .traits import Trait, traits


class Along(enum.Enum):
    ELEMENTWISE = "elementwise"
    REDUCE = "reduce"
    NORMALIZE = "normalize"
    CONTRACT = "contract"
    MOVE = "move"
    LENGTH = "length"


_KINDS: dict[str, Along] = {
    "CastLike": Along.ELEMENTWISE,
    **{op: Along.NORMALIZE for op in ("Softmax", "LogSoftmax", "Hardmax")},
    "MatMul": Along.CONTRACT,
    **{op: Along.MOVE for op in ("Transpose", "Unsqueeze", "Squeeze", "Gather", "Slice",
                                 "Concat", "Split", "Flatten", "Reshape", "Pad")},
    "Shape": Along.LENGTH,
}

#: reductions exact along the padded axis once the padding holds this value
NEUTRAL: dict[str, float] = {
    "ReduceSum": 0, "ReduceSumSquare": 0, "ReduceL1": 0, "ReduceL2": 0, "ReduceLogSum": 0,
    "ReduceLogSumExp": -float("inf"), "ReduceMax": -float("inf"), "ReduceMin": float("inf"),
    "ReduceProd": 1}

#: normalizations exact along the padded axis once the padding holds -inf
MASKED = frozenset({"Softmax", "LogSoftmax"})


def along(node) -> Along | None:
    """The kind of `node` for a padded axis (None: another domain, or no kind)."""
    if node.domain != "":
        return None
    kind = _KINDS.get(node.op_type)
    if kind is not None:
        return kind
    t = traits(node.op_type)
    if Trait.UNARY in t or Trait.BROADCAST in t:
        return Along.ELEMENTWISE
    if Trait.REDUCTION in t:
        return Along.REDUCE
    return None




@dataclass(frozen=True)
class PaddedInput:
    """Input `index` of a contrib op, taken padded on `axis` when it has `rank`; `grows`: the
    output that is this input grown (None: the padding ends in the op)."""
    index: int
    axis: int
    rank: int
    grows: int | None = None


PADDED_INPUTS: dict[tuple[str, str], tuple[PaddedInput, ...]] = {
    # Attention's past (2, B, N, P, H), padded on P, grown into present; mask_index (B, T)
    (MICROSOFT, "Attention"): (PaddedInput(4, 3, 5, grows=1), PaddedInput(3, 1, 2)),
}


def padded_inputs(node) -> dict[int, PaddedInput]:
    """The inputs `node` (a contrib op of `PADDED_INPUTS`) takes padded, by index."""
    return {p.index: p for p in PADDED_INPUTS.get((node.domain, node.op_type), ())}
