"""Inputs that ONNX requires to be 1-D, which OpenVINO also accepts as scalars.

OpenVINO's reductions, ``Squeeze``, ``Unsqueeze``, ``Tile``, ``Pad``, ``TopK`` and the like
take a scalar wherever a single axis, repeat count or ``k`` is meant; the IR keeps such nodes
as they were read. ONNX declares these inputs as vectors and ONNX Runtime refuses scalars there
("An axes tensor must be a vector tensor"), so the writer gives them as vectors: a scalar, or a
value whose rank the IR does not know (OpenVINO's scalar ports often read so), is reshaped to
``[-1]``; a constant is written as a vector constant.
"""

from __future__ import annotations

REDUCTIONS = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
              "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare")

#: op -> indices of its inputs that are 1-D tensors in every ONNX version that has them as
#: inputs (not attributes).
VECTOR_INPUTS: dict[str, tuple[int, ...]] = {
    **{op: (1,) for op in REDUCTIONS},
    "Squeeze": (1,), "Unsqueeze": (1,), "Tile": (1,), "Expand": (1,), "Reshape": (1,),
    "Slice": (1, 2, 3, 4), "Pad": (1, 3), "TopK": (1,), "Split": (1,),
    "ConstantOfShape": (0,),
}


def vector_positions(op_type: str, domain: str) -> tuple[int, ...]:
    """Indices of the inputs of `op_type` that must be given as 1-D tensors."""
    return VECTOR_INPUTS.get(op_type, ()) if domain in ("", "ai.onnx") else ()
