"""Convolution, pooling and normalization: Conv, MaxPool, AveragePool, GlobalAveragePool,
GlobalMaxPool, BatchNormalization (inference), InstanceNormalization, RMSNormalization.

``auto_pad`` (NOTSET, VALID, SAME_UPPER, SAME_LOWER), strides, dilations and groups follow
the ONNX specification. Pooling with ``ceil_mode`` and MaxPool's indices output are left to
NumPy, as is training-mode BatchNormalization.
"""

from __future__ import annotations

import numpy as np

from ...common.window import window_counts
from ..table import lowering, refused
from ._util import astype, attr, attr_ints, attr_str, norm_axis, precision


def _pads(cx, spatial, kernel, strides, dilations):
    """Per spatial axis (before, after) padding from ``auto_pad``/``pads``."""
    auto = attr_str(cx.node, "auto_pad", "NOTSET")
    n = len(spatial)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            target = -(-size // s)
            total = max((target - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            out.append((small, big) if auto == "SAME_UPPER" else (big, small))
        return out
    if auto == "VALID":
        return [(0, 0)] * n
    pads = attr_ints(cx.node, "pads") or [0] * (2 * n)
    return list(zip(pads[:n], pads[n:]))


def _geometry(cx, x, kernel=None):
    n = x.ndim - 2
    kernel = kernel or attr_ints(cx.node, "kernel_shape")
    strides = attr_ints(cx.node, "strides") or [1] * n
    dilations = attr_ints(cx.node, "dilations") or [1] * n
    return kernel, strides, dilations, _pads(cx, x.shape[2:], kernel, strides, dilations)


@lowering("Conv", since=1)
def lower_conv(cx, x, w, b=None):
    """ONNX Conv. Three common kinds are written as the products they are, which XLA's CPU
    code runs several times faster than its general convolution on NCHW data (a PP-OCR
    mobile classifier: 41 pointwise and 11 depthwise convolutions, and a first layer over
    3 channels): a 1x1 convolution is one matrix product over the channels; a depthwise one
    (one filter per input channel) is a sum over the kernel offsets of shifted windows times
    per-channel weights; one whose column matrix is small (`_few_columns`) is one product
    over the stacked windows."""
    from jax import lax

    kernel = attr_ints(cx.node, "kernel_shape") or list(w.shape[2:])
    _, strides, dilations, pads = _geometry(cx, x, kernel)
    n = x.ndim - 2
    group = int(attr(cx.node, "group", 1))
    if n < 1 or n > 3:
        cx.fail(f"Conv with {n} spatial axes is not lowered")
    # a window larger than the padded input is an error, as on NumPy (XLA would give an
    # empty result)
    window_counts(cx.node, x.shape[2:], [(k - 1) * d + 1 for k, d in zip(kernel, dilations)],
                  strides, [a for a, _ in pads], [c for _, c in pads])
    pointwise = group == 1 and all(k == 1 for k in kernel)
    depthwise = group > 1 and group == x.shape[1] and w.shape[1] == 1 and len(kernel) == n
    narrow = (not pointwise and group == 1 and len(kernel) == n
              and _few_columns(x.shape, kernel, strides, dilations, pads))
    if (pointwise or depthwise or narrow) and x.dtype.itemsize < 4 and x.dtype.kind == "f":
        # sum in float32 as the general convolution does (float16 terms would round each)
        xw = astype(cx, x, np.float32), astype(cx, w, np.float32)
    else:
        xw = x, w
    if pointwise:
        y = _pointwise(cx, *xw, strides, pads)
    elif depthwise:
        y = _depthwise(cx, *xw, kernel, strides, dilations, pads)
    elif narrow:
        y = _columns_product(cx, *xw, kernel, strides, dilations, pads)
    else:
        spec = ("NC" + "DHW"[-n:], "OI" + "DHW"[-n:], "NC" + "DHW"[-n:])
        # XLA's CPU convolution reads its weights spatial axes first (HWIO): weights passed
        # as arguments (large constants) are laid out so once, on the host, not transposed
        # in every call. Embedded ones are left to XLA, which lays them out at compile time
        # (the HWIO spec measured 1.5x slower on the silero VAD's small convolutions).
        laid = None if cx.folding or isinstance(w, np.ndarray) else \
            cx.prepared(w, ("spatial-first",), _spatial_first)
        if laid is not None:
            w, spec = laid, (spec[0], "DHW"[-n:] + "IO", spec[2])
        y = lax.conv_general_dilated(x, w, tuple(strides), pads,
                                     rhs_dilation=tuple(dilations), dimension_numbers=spec,
                                     feature_group_count=group, precision=precision())
    if b is not None:
        y = y + cx.xp.reshape(b, (1, -1) + (1,) * n)
    return astype(cx, y, x.dtype)


def _spatial_first(w: np.ndarray) -> np.ndarray:
    """Conv weights ``[O, I, *k]`` as ``[*k, I, O]``."""
    return np.ascontiguousarray(np.moveaxis(w, (0, 1), (-1, -2)))


def _padded(cx, x, pads):
    if not any(p for pair in pads for p in pair):
        return x
    return cx.xp.pad(x, [(0, 0), (0, 0), *[(max(a, 0), max(c, 0)) for a, c in pads]])


def _window(x, start: list[int], size: list[int], strides: list[int]):
    """``x[:, :, s0::st0][:size0] ...``: `size` strided positions from `start` per axis."""
    idx = (slice(None), slice(None)) + tuple(
        slice(s, s + (o - 1) * st + 1, st) for s, o, st in zip(start, size, strides))
    return x[idx]


def _out_size(size, k, s, d, pad):
    return (size + pad[0] + pad[1] - (k - 1) * d - 1) // s + 1


def _pointwise(cx, x, w, strides, pads):
    if any(a < 0 or c < 0 for a, c in pads):
        cx.fail("negative pads")
    xp = _padded(cx, x, pads)
    out = [_out_size(i, 1, s, 1, p) for i, s, p in zip(x.shape[2:], strides, pads)]
    xs = _window(xp, [0] * len(out), out, strides)
    kw = {} if cx.folding else {"precision": precision()}
    return cx.xp.einsum("nc...,oc->no...", xs, w.reshape(w.shape[0], w.shape[1]), **kw)


#: the most taps, and column-matrix elements, for which a convolution is written as one
#: product over gathered windows: XLA's CPU convolution costs 2-4x more on few input
#: channels (an image's first layer, 3 -> 8 over 48x192) and on short 1-D signals
#: (128 -> 64 channels, kernel 3, 64 steps), and less than the column matrix's copy
#: beyond these sizes (16 -> 32 over 24x96, measured with one thread)
_COLUMN_TAPS = 27
_COLUMN_ELEMENTS = 1 << 17


def _few_columns(shape, kernel, strides, dilations, pads) -> bool:
    taps = int(np.prod(kernel))
    out = [_out_size(i, k, s, d, p) for i, k, s, d, p in
           zip(shape[2:], kernel, strides, dilations, pads)]
    if taps > _COLUMN_TAPS or any(o <= 0 for o in out) or any(a < 0 or c < 0 for a, c in pads):
        return False
    return shape[0] * shape[1] * taps * int(np.prod(out)) <= _COLUMN_ELEMENTS


def _columns_product(cx, x, w, kernel, strides, dilations, pads):
    """A convolution as one product: every kernel offset's strided window of the padded
    input stacked into columns ``[n, c * taps, positions]``, times the weights
    ``[o, c * taps]`` (im2col)."""
    import itertools

    xp = _padded(cx, x, pads)
    out = [_out_size(i, k, s, d, p) for i, k, s, d, p in
           zip(x.shape[2:], kernel, strides, dilations, pads)]
    windows = [_window(xp, [o * d for o, d in zip(off, dilations)], out, strides)
               for off in itertools.product(*(range(k) for k in kernel))]
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    columns = cx.xp.reshape(cx.xp.stack(windows, axis=2), (n, c * len(windows), -1))
    kw = {} if cx.folding else {"precision": precision()}
    y = cx.xp.einsum("nkp,ok->nop", columns, cx.xp.reshape(w, (o, -1)), **kw)
    return cx.xp.reshape(y, (n, o, *out))


def _depthwise(cx, x, w, kernel, strides, dilations, pads):
    import itertools

    if any(a < 0 or c < 0 for a, c in pads):
        cx.fail("negative pads")
    mult = w.shape[0] // x.shape[1]
    xp = _padded(cx, x, pads)
    if mult > 1:  # output channel o reads input channel o // mult
        xp = cx.xp.repeat(xp, mult, axis=1)
    out = [_out_size(i, k, s, d, p) for i, k, s, d, p in
           zip(x.shape[2:], kernel, strides, dilations, pads)]
    if any(o <= 0 for o in out):
        cx.fail("an empty output")
    n = len(kernel)
    y = None
    for off in itertools.product(*(range(k) for k in kernel)):
        term = _window(xp, [o * d for o, d in zip(off, dilations)], out, strides) * \
            cx.xp.reshape(w[(slice(None), 0, *off)], (1, -1) + (1,) * n)
        y = term if y is None else y + term
    return y


def _pool_refusal(node) -> str | None:
    """Why a pooling node stays on NumPy (None: it lowers)."""
    if node.op_type == "MaxPool" and len(node.outputs) > 1:
        return "MaxPool's indices output is not lowered"
    if attr(node, "ceil_mode", 0):
        return "pooling with ceil_mode=1 is not lowered"
    return None


def _pool_window(cx, x):
    refused(cx, _pool_refusal)
    kernel, strides, dilations, pads = _geometry(cx, x)
    return ((1, 1, *kernel), (1, 1, *strides), (1, 1, *dilations),
            [(0, 0), (0, 0), *pads])


@lowering("MaxPool", since=1, refuses=_pool_refusal)
def _max_pool(cx, x):
    from jax import lax

    win, st, dil, pads = _pool_window(cx, x)
    init = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return lax.reduce_window(x, np.array(init, x.dtype), lax.max, win, st, pads,
                             window_dilation=dil)


@lowering("AveragePool", since=1, refuses=_pool_refusal)
def lower_avg_pool(cx, x):
    from jax import lax

    win, st, dil, pads = _pool_window(cx, x)
    zero = np.array(0, x.dtype)
    s = lax.reduce_window(x, zero, lax.add, win, st, pads, window_dilation=dil)
    if attr(cx.node, "count_include_pad", 0):
        count = float(np.prod(win))
        return astype(cx, s / count, x.dtype)
    ones = cx.xp.ones(x.shape[2:], x.dtype)[None, None]
    cnt = lax.reduce_window(ones, zero, lax.add, win, st, pads, window_dilation=dil)
    return astype(cx, s / cnt, x.dtype)


@lowering("GlobalAveragePool", since=1)
def _gap(cx, x):
    return cx.xp.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True).astype(x.dtype)


@lowering("GlobalMaxPool", since=1)
def _gmp(cx, x):
    return cx.xp.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@lowering("BatchNormalization", since=1)
def _batch_norm(cx, x, scale, b, mean, var, *rest):
    if attr(cx.node, "training_mode", 0) or len(cx.node.outputs) > 1:
        cx.fail("training-mode BatchNormalization is not lowered")
    if not attr(cx.node, "spatial", 1):  # opset < 9 per-activation form, kept as read
        cx.fail("BatchNormalization with spatial=0 is not lowered")
    xp = cx.xp
    eps = float(attr(cx.node, "epsilon", 1e-5))
    shape = (1, -1) + (1,) * (x.ndim - 2)

    def r(v):
        return xp.reshape(v, shape)

    y = (x - r(mean)) / xp.sqrt(r(var) + eps) * r(scale) + r(b)
    return astype(cx, y, x.dtype)


@lowering("InstanceNormalization", since=1)
def _instance_norm(cx, x, scale, b):
    xp = cx.xp
    eps = float(attr(cx.node, "epsilon", 1e-5))
    axes = tuple(range(2, x.ndim))
    mean = xp.mean(x, axis=axes, keepdims=True)
    var = xp.mean((x - mean) ** 2, axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean) / xp.sqrt(var + eps) * xp.reshape(scale, shape) + xp.reshape(b, shape)
    return astype(cx, y, x.dtype)


@lowering("RMSNormalization", since=23)
def _rms_norm(cx, x, scale):
    xp = cx.xp
    a = norm_axis(cx, int(attr(cx.node, "axis", -1)), x.ndim)
    eps = float(attr(cx.node, "epsilon", 1e-5))
    stash = np.float32 if int(attr(cx.node, "stash_type", 1)) == 1 else x.dtype
    xs = astype(cx, x, np.promote_types(x.dtype, stash))
    ms = xp.mean(xs * xs, axis=tuple(range(a, x.ndim)), keepdims=True)
    y = astype(cx, xs / xp.sqrt(ms + eps), x.dtype) * scale
    return astype(cx, y, x.dtype)
