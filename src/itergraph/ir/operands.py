"""Which inputs of a standard op are shapes, axes, counts or sizes, in one table.

Such an input decides the shape of the op's output rather than its values: the loop analyses
follow a shape that changes per iteration through it (`analysis.loop_features`), the JAX
backend needs it known when compiling (`backends.jax.loops.padded_reads`), and the ONNX writer
gives the 1-D ones as vectors (`frontends.onnx.node_export`). The positions are those of the
IR's one form of each op (`ir.canonical`: operands that older opsets took as attributes are
inputs).
"""

from __future__ import annotations

from .traits import Trait, ops_with

#: op -> the indices of its inputs that decide its output's shape
SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    **{op: (1,) for op in sorted(ops_with(Trait.REDUCTION))},  # axes
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "TopK": (1,), "OneHot": (1,),
    "Slice": (1, 2, 3, 4), "Pad": (1, 3), "Range": (0, 1, 2), "Resize": (2, 3),
    "CenterCropPad": (1,),
}

#: the shape operands ONNX declares as scalars (the others are 1-D tensors)
SCALAR_OPERANDS: dict[str, tuple[int, ...]] = {"Range": (0, 1, 2), "OneHot": (1,)}


def vector_operands(op_type: str) -> tuple[int, ...]:
    """The shape operands of `op_type` that ONNX declares as 1-D tensors."""
    return () if op_type in SCALAR_OPERANDS else SHAPE_OPERANDS.get(op_type, ())
