"""Op traits: what kind of computation each operator is, in one table.

Passes and backends ask these questions here and nowhere else ("may this node move out of a
loop?", "is it element-wise?"). An op of the standard ONNX domain has the traits of its row;
an op that has no row (or another domain) has none, which every consumer must read as "make no
assumption". Adding an op means adding its name to the one row that describes it.

Traits:

- ``PURE``: a deterministic function of its inputs and captures: same inputs, same outputs, no
  state, no randomness. Only pure nodes may be moved, duplicated or removed by passes.
- ``UNARY``: element-wise on one tensor ``X`` (output shape = ``X``'s shape); further inputs,
  if any, are scalars (``Clip``'s bounds).
- ``BROADCAST``: element-wise over its inputs after multidirectional (NumPy) broadcasting;
  ``PRelu``'s slope broadcasts unidirectionally to ``X``.
- ``REDUCTION``: ``Reduce*``: folds the ``axes`` of one input.
- ``MATMUL``: a contraction (matrix product, convolution) whose cost dominates a loop body;
  worth batching over a loop's iterations.
- ``CELL``: a recurrent-cell op (``LSTM``, ``GRU``, ``RNN``): a loop of its own over time.
- ``SAME_SHAPE``: its (first) output has the shape of its first input whatever the values
  (every ``UNARY`` op; normalisations, ``CumSum``, ``ReverseSequence``, ``Trilu`` ...).
- ``RESHAPE``: its output holds the elements of its first input in the same order, in another
  shape (or the same: ``Identity``).
- ``SHAPE_ONLY``: reads only the shapes of its inputs, never their values.
- ``RANDOM``: draws random numbers; never pure.
- ``TOTAL``: never raises on inputs of its declared types (a total function: element-wise math
  that yields inf or NaN where it is undefined, shape queries). A pass may make such a node
  run where the original would not (`passes.hoist_invariants` moves it out of a loop that
  may run zero times) without adding an error.
- ``CONTROL_FLOW``: holds subgraphs (``If``, ``Loop``, ``Scan``, ``SequenceMap``); whether it
  is pure depends on its bodies, which a pass must inspect itself.
"""

from __future__ import annotations

import enum


class Trait(enum.Flag):
    NONE = 0
    PURE = enum.auto()
    UNARY = enum.auto()
    BROADCAST = enum.auto()
    REDUCTION = enum.auto()
    MATMUL = enum.auto()
    CELL = enum.auto()
    SHAPE_ONLY = enum.auto()
    RANDOM = enum.auto()
    CONTROL_FLOW = enum.auto()
    TOTAL = enum.auto()
    SAME_SHAPE = enum.auto()
    RESHAPE = enum.auto()


ELEMENTWISE = Trait.UNARY | Trait.BROADCAST

_P = Trait.PURE
_T = Trait.PURE | Trait.TOTAL
_U = Trait.UNARY | Trait.SAME_SHAPE

# One row per kind of op; every op name appears in exactly one row.
_ROWS: dict[Trait, str] = {
    _T | _U: """
        Abs Acos Acosh Asin Asinh Atan Atanh BitwiseNot Ceil Celu Cos Cosh Elu Erf Exp Floor
        Gelu HardSigmoid HardSwish IsInf IsNaN LeakyRelu Log Mish Neg Not Reciprocal
        Relu Round Selu Shrink Sigmoid Sign Sin Sinh Softplus Softsign Sqrt Tan Tanh
        ThresholdedRelu""",
    _T | _U | Trait.RESHAPE: "Identity",
    _P | Trait.RESHAPE: "Flatten Reshape Squeeze Unsqueeze",
    # Cast raises on strings that are not numbers, Clip on bounds that are not scalars
    _P | _U: "Cast Clip",
    _P | Trait.BROADCAST: """
        Add And BitShift BitwiseAnd BitwiseOr BitwiseXor Div Equal Greater GreaterOrEqual Less
        LessOrEqual Max Mean Min Mod Mul Or Pow PRelu Sub Sum Where Xor""",
    _P | Trait.REDUCTION: """
        ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd
        ReduceSum ReduceSumSquare""",
    _P | Trait.MATMUL: "Conv ConvTranspose Einsum Gemm MatMul MatMulInteger",
    _P | Trait.CELL: "GRU LSTM RNN",
    _T | Trait.SHAPE_ONLY: "Shape Size",
    _P | Trait.SAME_SHAPE: """
        BatchNormalization CastLike CumSum GroupNormalization Hardmax InstanceNormalization LRN
        LayerNormalization LogSoftmax ReverseSequence Softmax Trilu""",
    _P: """
        ArgMax ArgMin AveragePool Concat Constant ConstantOfShape DepthToSpace Expand EyeLike
        Gather GatherElements GatherND GlobalAveragePool GlobalMaxPool MaxPool NonZero OneHot
        Pad Range SequenceEmpty Slice SpaceToDepth Split Tile TopK Transpose""",
    Trait.RANDOM | Trait.SAME_SHAPE: "Bernoulli Dropout RandomNormalLike RandomUniformLike",
    Trait.RANDOM: "Multinomial RandomNormal RandomUniform",
    Trait.CONTROL_FLOW: "If Loop Scan SequenceMap",
}

TRAITS: dict[str, Trait] = {op: t for t, ops in _ROWS.items() for op in ops.split()}

# the domain of OpenVINO's ops with no ONNX counterpart, as OpenVINO's ONNX frontend reads them
OPENVINO_DOMAIN = "org.openvinotoolkit"


def traits(op_type: str, domain: str = "") -> Trait:
    """The traits of a standard op (``Trait.NONE`` for unknown ops and other domains)."""
    if domain != "":  # the IR spells the standard domain "" (`ir.graph.Node`)
        return Trait.NONE
    return TRAITS.get(op_type, Trait.NONE)


def has(node, trait: Trait) -> bool:
    """Whether `node` has every trait in `trait` (``has(n, Trait.PURE | Trait.UNARY)``)."""
    return trait in traits(node.op_type, node.domain)


def ops_with(trait: Trait) -> frozenset[str]:
    """Names of the standard ops having every trait in `trait`."""
    return frozenset(op for op, t in TRAITS.items() if trait in t)


def transpose_perm(node, rank: int) -> list[int]:
    """The input axis each output axis of a ``Transpose`` node reads, for an input of `rank`:
    its ``perm`` (an entry below 0 counted from the back), or the axes reversed when absent."""
    perm = node.attrs.get("perm")
    if perm is None:
        return list(range(rank))[::-1]
    return [int(a) % rank if rank else int(a) for a in perm]


def normalized_axes(node, rank: int) -> list[int]:
    """The axes a ``Softmax``, ``LogSoftmax`` or ``Hardmax`` node normalizes over, for an
    input of `rank`: its ``axis`` (the opset 13 form; older nodes, which normalize every axis
    from ``axis`` on, are rewritten into it when read: `ir.legacy_forms`)."""
    return [int(node.attrs.get("axis", -1)) % rank]
