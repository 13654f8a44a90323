"""Sliding-window geometry of ONNX ``Conv``, ``MaxPool`` and ``AveragePool``, shared by their
kernels: the padding of each spatial axis and the number of window positions.

Per spatial axis with input size ``i``, window ``k``, dilation ``d``, stride ``s`` and pads
``b`` (begin) / ``e`` (end), the window spans ``w = (k - 1) d + 1`` elements and::

    o = floor_or_ceil((i + b + e - w) / s) + 1
    # ceil_mode: a last window that would start in the end padding is dropped

``auto_pad`` ``SAME_UPPER``/``SAME_LOWER`` pad ``(ceil(i / s) - 1) s + w - i`` in all (never
negative), split in half with the odd element at the end (``SAME_UPPER``) or at the beginning
(``SAME_LOWER``), so that ``o = ceil(i / s)``; ``VALID`` pads nothing; ``NOTSET`` (the
default) takes ``pads`` (``[b1, b2, ..., e1, e2, ...]``, zeros when absent).
"""

from __future__ import annotations

from ...errors import ExecutionError, where
from ...ir.attributes import attr, attr_str
from ...semantics.window import window_attribute_error


def check_window_attributes(node, n: int) -> None:
    """An `ExecutionError` naming the node when a window attribute it has is not of the
    length `n` spatial axes need (`semantics.window`)."""
    why = window_attribute_error(node.attrs, n)
    if why is not None:
        raise ExecutionError(f"{where(node)}: {why}")


def check_instance_rank(node, rank: int) -> None:
    """InstanceNormalization normalizes each (N, C) entry over the spatial axes: an input of
    rank below 3 has none (ONNX Runtime: "number of dimensions is less than 3")."""
    if rank < 3:
        raise ExecutionError(f"{where(node)}: input 0 has rank {rank}; instance normalization "
                             "needs (N, C, D1, ...), rank 3 or more")


def window_pads(node, size, kernel_shape, strides, dil) -> tuple[list[int], list[int]]:
    """(pads_begin, pads_end) of the spatial axes of `size` under the node's ``auto_pad`` /
    ``pads`` attributes."""
    n = len(kernel_shape)
    check_window_attributes(node, len(size))
    mode = attr_str(node, "auto_pad", "NOTSET") or "NOTSET"
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i, k, s, d in zip(size, kernel_shape, strides, dil):
            total = max(0, (-(-i // s) - 1) * s + (k - 1) * d + 1 - i)
            small, big = total // 2, total - total // 2
            begin.append(small if mode == "SAME_UPPER" else big)
            end.append(big if mode == "SAME_UPPER" else small)
        return begin, end
    if mode == "VALID":
        return [0] * n, [0] * n
    pads = [int(p) for p in attr(node, "pads", [0] * (2 * n))]
    return pads[:n], pads[n:]


def window_counts(node, size, span, strides, begin, end, ceil: bool = False) -> list[int]:
    """The number of window positions along each spatial axis (`span`: the dilated window
    extents); raises `ExecutionError` when a window does not fit in the padded input."""
    outs = []
    for i, w, s, b, e in zip(size, span, strides, begin, end):
        room = i + b + e - w
        if room < 0:
            raise ExecutionError(f"{where(node)}: the window ({w}) is larger than the "
                                 f"padded input ({i + b + e})")
        o = (-(-room // s) if ceil else room // s) + 1
        if ceil and (o - 1) * s >= i + b:
            o -= 1
        outs.append(o)
    return outs


def placement(size, begin, need) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
    """Where the input goes in a buffer of spatial extent `need` whose element ``b`` (the
    begin pad) is input element 0: (slices of the buffer, slices of the input), one per
    spatial axis. Input elements past the end of the buffer (no window reaches them) are left
    out."""
    dst, src = [], []
    for i, b, q in zip(size, begin, need):
        m = max(0, min(i, q - b))
        dst.append(slice(b, b + m))
        src.append(slice(0, m))
    return tuple(dst), tuple(src)
