"""The stack of a loop's concatenated output after zero iterations, for both backends.

The entries are stacked on a new axis 0 (the backends then move or merge that axis, see
``Concat`` in `ir.loop`). With no entry, the stack has length 0 and the element shape the
body declares (inferred, `shapes.infer_shapes.complete_step_types`), unknown dimensions as
0, as ONNX Runtime. An element of unknown rank is taken as a scalar when the port stacks on a
new axis (ONNX Runtime's ``(0,)`` for a Loop scan output it cannot infer) and as a vector
when it joins on an existing axis (OpenVINO's ``Loop-5``, which the IR writer gives an
unsqueezed element): either way the output is ``(0,)``. `stacked_output` moves or merges a
stack's axis as the port says (for every stack: both backends' loops end with it), and
`zero_iteration_output` is the empty stack's: the loop's output after no iteration.
"""

from __future__ import annotations

import numpy as np

from ..errors import where
from ..ir.loop import Concat
from ..ir.types import DataType, TensorType


def empty_stack(port: Concat) -> np.ndarray:
    """The zero-iteration stack of `port` (before its axis is moved or merged)."""
    t = port.result.type
    known = isinstance(t, TensorType) and t.dtype is not None
    dtype = DataType(t.dtype).numpy if known else np.float32
    if isinstance(t, TensorType) and t.shape is not None:
        shape = tuple(d if isinstance(d, int) else 0 for d in t.shape)
    else:
        shape = () if port.new_axis else (0,)
    return np.zeros((0, *shape), dtype)


def zero_iteration_output(port: Concat) -> np.ndarray | None:
    """The output of `port` after no iteration (None where that is not an empty array: the
    port pads to a length, or an empty join is an error)."""
    if port.length is not None or port.empty_error:
        return None
    return stacked_output(np, empty_stack(port), port)


def stacked_output(xp, stacked, port: Concat):
    """The per-iteration values `stacked` on axis 0 as `port`'s output: that axis moved to
    ``port.axis`` (`new_axis`), else merged into the element axis ``port.axis``; None where
    the axis is out of range for the element's rank (`xp`: NumPy or ``jax.numpy``)."""
    rank = stacked.ndim - 1
    if port.new_axis:
        axis = port.axis + rank + 1 if port.axis < 0 else port.axis
        if not 0 <= axis <= rank:
            return None
        return xp.moveaxis(stacked, 0, axis) if axis else stacked
    axis = port.axis + rank if port.axis < 0 else port.axis
    if not 0 <= axis < rank:
        return None
    shape = list(stacked.shape[1:])
    shape[axis] *= stacked.shape[0]
    return xp.reshape(xp.moveaxis(stacked, 0, axis), tuple(shape))


def axis_out_of_range(loop, index: int, port: Concat, rank: int) -> str:
    """The error of a port whose axis does not fit its element's `rank`."""
    rank += 1 if port.new_axis else 0
    return f"{where(loop)}: output {index}: axis {port.axis} out of range for rank {rank}"
