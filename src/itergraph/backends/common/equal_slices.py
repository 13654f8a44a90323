"""The rule of `Loop.equal_slices` (ONNX Scan), shared by both backends: the sliced inputs
are one sequence, of one length.

Both backends know every sliced input's piece count before the loop starts (NumPy from the
values, JAX from the traced shapes), so the rule is plain Python on those counts.
"""

from __future__ import annotations

import warnings

from ...errors import ExecutionError, LeniencyWarning, where
from ...ir import Loop, Sliced


def check_equal_slices(loop: Loop, counts: list[tuple[int, Sliced, int]]) -> None:
    """For a loop with ``equal_slices``, given ``(port index, port, piece count)`` of each
    sliced input in port order: an `ExecutionError` naming the first input whose count differs
    from the first input's, and a `LeniencyWarning` when the common count is zero (the loop
    runs no iteration; ONNX Runtime refuses an empty scan input). Nothing for other loops."""
    if not loop.equal_slices or not counts:
        return
    j0, p0, n0 = counts[0]
    for j, p, n in counts[1:]:
        if n != n0:
            raise ExecutionError(
                f"{where(loop)}: sliced inputs of different sequence lengths: "
                f"{_input(j0, p0)} has {n0} entries on axis {p0.axis}, {_input(j, p)} has {n} "
                f"on axis {p.axis} (they are one sequence and must have the same length)")
    if n0 == 0:
        warnings.warn(
            f"{where(loop)}: sequence length zero ({_input(j0, p0)} has no entry on axis "
            f"{p0.axis}): the loop runs zero iterations, its carried values pass through "
            "unchanged and its concatenated outputs are empty (ONNX Runtime refuses an empty "
            "scan input)", LeniencyWarning, stacklevel=2)


def _input(j: int, p: Sliced) -> str:
    name = p.value.name if p.value is not None else ""
    return f"sliced input {j}" + (f" ('{name}')" if name else "")
