"""CumSum (opset 11, 14) on NumPy: the running sum of ``x`` along ``axis`` (an int32/int64
input, a scalar or one-element tensor, negative counting from the back)::

    y[..., j, ...] = sum(x[..., i, ...] for i <= j)        # default
    exclusive=1: i < j (the first element is 0); reverse=1: i >= j (i > j when exclusive)

The sum keeps ``x``'s element type (integers wrap around as in ONNX Runtime); float16 and
bfloat16 are summed in float32 and rounded once at the end.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir.attributes import attr_or_default
from ...common.precision import work_dtype
from . import kernel


def _axis(node, axis, rank: int) -> int:
    if axis.size != 1:
        raise ExecutionError(f"{where(node)}: axis must be a single integer, got shape "
                             f"{list(axis.shape)}")
    a = int(axis.reshape(-1)[0])
    if not -rank <= a < rank:
        raise ExecutionError(f"{where(node)}: axis {a} out of range for rank {rank}")
    return a % rank


@kernel("CumSum", since=11)
def _cumsum(node, ctx):
    exclusive = bool(attr_or_default(node, "exclusive"))
    reverse = bool(attr_or_default(node, "reverse"))

    def fn(x, axis):
        a = _axis(node, axis, x.ndim)
        wd = work_dtype(x.dtype)
        if reverse:
            x = np.flip(x, axis=a)
        if exclusive:
            y = np.zeros(x.shape, wd)
            lead = (slice(None),) * a
            np.cumsum(x[lead + (slice(0, -1),)], axis=a, dtype=wd, out=y[lead + (slice(1, None),)])
        else:
            y = np.cumsum(x, axis=a, dtype=wd)
        if reverse:
            y = np.flip(y, axis=a)
        return y.astype(x.dtype, copy=False)

    return fn
