"""Turning an ONNX Loop scan output into a canonical ``Concat`` output, after the loop.

The ONNX scan output is ``[n, *elem]``. It is reversed on the iteration axis (``reverse``),
moved to ``axis`` (``Transpose``), merged into an existing axis (``Reshape``, when
``new_axis`` is false; with ``allowzero`` from opset 14, so that an empty value's dims of 0
stay 0: before it, ONNX reads a 0 in the shape as the input's dim, and a zero-iteration
output whose body value has a dim of 0 gets another shape) and padded to ``length`` with
zeros: a ``Concat`` with the output of a ``ConstantOfShape``, which fails at run time when
the length is below the iteration count (the error the canonical semantics ask for). When
the element type is unknown a ``Pad`` is used instead and that check is lost (a negative pad
crops).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from ...errors import UnsupportedError, where
from ...ir.loop import Concat, Loop
from ...ir.types import DataType
from .emit import INT64_MAX, Emitter
from .export_common import dtype_of, norm_axis, rank_of
from .types import dtype_to_onnx, tensor_to_onnx

I64 = 7


def post_concat(w, loop: Loop, env, E: Emitter, o: Concat, raw: str) -> None:
    """Turn ONNX scan output `raw` (``[n, *elem]``) into the canonical concat output."""
    i = loop.output_ports.index(o)
    er = rank_of(o.result)
    if er is None and o.output.type is not None and rank_of(o.output) is not None:
        er = rank_of(o.output) - (1 if o.new_axis else 0)
    cur = raw
    if o.reverse:
        cur = E.reverse(cur, 0)
    if o.new_axis:
        axis = norm_axis(loop, o.axis, None if er is None else er + 1, f"output {i}")
        if axis != 0:
            if er is None:
                raise UnsupportedError(f"{where(loop)}: output {i} concatenates on axis {axis} "
                                       "but the rank of its body value is unknown")
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, er + 1))
            cur = E.op("Transpose", [cur], "concat_t", perm=perm)
    else:
        if er is None:
            raise UnsupportedError(f"{where(loop)}: output {i} concatenates on an existing axis "
                                   "but the rank of its body value is unknown")
        axis = norm_axis(loop, o.axis, er, f"output {i}")
        if axis != 0:
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, er + 1))
            cur = E.op("Transpose", [cur], "concat_t", perm=perm)
        # a 0 in the computed shape (no iteration) is a length, not "copy the input's"
        zero = {"allowzero": 1} if E.opset >= 14 else {}
        cur = E.op("Reshape", [cur, _merged_shape(E, cur, axis, er)], "concat", **zero)
    if o.length is not None:
        cur = _pad(w, loop, env, E, o, cur, axis, er if o.new_axis is False else
                   (None if er is None else er + 1), i)
    last = E.nodes[-1]
    if last.output and last.output[0] == cur:
        name = w.define(env, o.output)
        last.output[0] = name
    else:  # pragma: no cover - every path above ends with a node making `cur`
        E.op("Identity", [cur], out=w.define(env, o.output))


def _merged_shape(E: Emitter, cur: str, axis: int, er: int) -> str:
    """The shape of `cur` (``[.., n, k, ..]``) with axes `axis` and ``axis + 1`` merged.
    Rank-1 pieces give the constant ``[-1]`` (n * k, also when n is 0): ONNX Runtime's
    contiguous-Reshape fusion mistakes a computed shape made by a Reshape for the data
    of the Reshape it feeds, and refuses the graph when the element types differ."""
    if er == 1:
        return E.const([-1], "flat")
    shape = E.shape(cur)
    merged = E.mul(E.dim(cur, axis), E.dim(cur, axis + 1))
    parts = []
    if axis > 0:
        parts.append(E.slice(shape, [0], [axis], [0]))
    parts.append(E.vec1(merged))
    if axis + 2 <= er:
        parts.append(E.slice(shape, [axis + 2], [INT64_MAX], [0]))
    return parts[0] if len(parts) == 1 else E.op("Concat", parts, "shape", axis=0)


def _pad(w, loop, env, E: Emitter, o: Concat, cur: str, axis: int, rank: int | None,
         i: int) -> str:
    length = w.name(env, o.length, where(loop))
    if dtype_of(o.length) != DataType.INT64:
        length = E.op("Cast", [length], "length", to=I64)
    amount = E.sub(length, E.dim(cur, axis))
    dt = dtype_of(o.result)
    if dt is not None and dt != DataType.STRING:
        shape = E.shape(cur)
        parts = []
        if axis > 0:
            parts.append(E.slice(shape, [0], [axis], [0]))
        parts.append(E.vec1(amount))
        if rank is None or axis + 1 < rank:
            parts.append(E.slice(shape, [axis + 1], [INT64_MAX], [0]))
        block_shape = parts[0] if len(parts) == 1 else E.op("Concat", parts, "pad_shape", axis=0)
        zero = tensor_to_onnx(np.zeros((1,), dtype=helper.tensor_dtype_to_np_dtype(
            dtype_to_onnx(dt))))
        zeros = E.op("ConstantOfShape", [block_shape], "pad_zeros", value=zero)
        return E.op("Concat", [cur, zeros], "padded", axis=axis)
    if rank is None:
        raise UnsupportedError(f"{where(loop)}: output {i} is padded to a length but neither its "
                               "element type nor its rank is known")
    pads = E.vec([0] * (rank + axis) + [amount] + [0] * (rank - axis - 1))
    return E.op("Pad", [cur, pads], "padded")
