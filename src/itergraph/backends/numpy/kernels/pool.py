"""MaxPool (opset 1-22) on NumPy: ``onnx.reference``'s MaxPool gives wrong shapes and values
when only the end of an axis is padded (``pads=[0, 0, 1, 1]``, TensorFlow's SAME padding).

The input is padded with the lowest value explicitly (``auto_pad`` resolved as ONNX defines
it), every window is a strided view (``sliding_window_view``), and its maximum the output.
Per spatial axis with input size ``i``, window ``k``, dilation ``d``, stride ``s`` and pads
``b``/``e``::

    o = floor_or_ceil((i + b + e - ((k - 1) d + 1)) / s) + 1
    # ceil_mode: a last window that would start in the end padding is dropped

The indices output is the flat position of the maximum in the unpadded input (batch and
channel included; ``storage_order=1``: the spatial axes counted column-major), the first one
in window order where several are equal.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ...common.attributes import attr, attr_str
from . import kernel


def _pads(node, size, kernel_shape, strides, dil) -> tuple[list[int], list[int]]:
    n = len(kernel_shape)
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
    pads = list(attr(node, "pads", [0] * (2 * n)))
    return pads[:n], pads[n:]


@kernel("MaxPool", since=1)
def _max_pool(node, ctx):
    def fn(x):
        n = x.ndim - 2
        kernel_shape = [int(k) for k in attr(node, "kernel_shape")]
        strides = [int(s) for s in attr(node, "strides", [1] * n)]
        dil = [int(d) for d in attr(node, "dilations", [1] * n)]
        ceil = bool(attr(node, "ceil_mode", 0))
        size = x.shape[2:]
        begin, end = _pads(node, size, kernel_shape, strides, dil)
        span = [(k - 1) * d + 1 for k, d in zip(kernel_shape, dil)]
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
        # pad to exactly the extent the windows cover (more at the end under ceil_mode)
        need = [(o - 1) * s + w for o, s, w in zip(outs, strides, span)]
        low = (np.array(-np.inf, x.dtype) if x.dtype.kind == "f"
               else np.array(np.iinfo(x.dtype).min, x.dtype))
        widths = [(0, 0), (0, 0)] + [(b, max(0, q - i - b)) for b, q, i in zip(begin, need, size)]
        padded = np.pad(x, widths, constant_values=low)
        padded = padded[(slice(None), slice(None)) + tuple(slice(0, q) for q in need)]
        axes = tuple(range(2, 2 + n))
        win = np.lib.stride_tricks.sliding_window_view(padded, span, axis=axes)
        win = win[(slice(None), slice(None))
                  + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(outs, strides))
                  + tuple(slice(None, None, d) for d in dil)]
        flat = win.reshape(*win.shape[:2 + n], -1)
        y = flat.max(axis=-1)
        if len(node.outputs) < 2:
            return y
        arg = flat.argmax(axis=-1)
        offsets = np.unravel_index(arg, kernel_shape)  # within the window
        pos = [np.arange(o).reshape((-1,) + (1,) * (n - 1 - a)) * s + off * d - b
               for a, (o, s, off, d, b) in enumerate(zip(outs, strides, offsets, dil, begin))]
        if int(attr(node, "storage_order", 0)):
            spatial = np.zeros_like(arg)
            for a in reversed(range(n)):
                spatial = spatial * size[a] + pos[a]
        else:
            spatial = np.zeros_like(arg)
            for a in range(n):
                spatial = spatial * size[a] + pos[a]
        bc = (np.arange(x.shape[0])[:, None] * x.shape[1] + np.arange(x.shape[1])[None, :])
        idx = bc.reshape(bc.shape + (1,) * n) * int(np.prod(size)) + spatial
        return y, idx.astype(np.int64)

    return fn
