"""Convolution, pooling and normalization: Conv, MaxPool, AveragePool, GlobalAveragePool,
GlobalMaxPool, BatchNormalization (inference), InstanceNormalization, RMSNormalization.

``auto_pad`` (NOTSET, VALID, SAME_UPPER, SAME_LOWER), strides, dilations and groups follow
the ONNX specification. Pooling with ``ceil_mode`` and MaxPool's indices output are left to
NumPy, as is training-mode BatchNormalization.

Convolutions compute channels last and hand back their channel-first result with its
channels-last form recorded (`channels_last`); pooling, global pooling and batch
normalization compute on that form where their input has one.
"""

from __future__ import annotations

import numpy as np

from ...common.window import check_instance_rank, check_window_attributes, window_counts
from ..channels_last import form, from_last, to_last
from ..table import lowering, refused
from ._util import astype, attr_ints, attr_or_default, attr_str, norm_axis, precision


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


def geometry(cx, x, kernel=None):
    """``(kernel, strides, dilations, pads)`` of a convolution or pooling node over `x`
    (``[N, C, *spatial]``), its window attributes checked; `pads` per axis (before, after)."""
    n = x.ndim - 2
    check_window_attributes(cx.node, n)
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
    kernel = attr_ints(cx.node, "kernel_shape") or list(w.shape[2:])
    _, strides, dilations, pads = geometry(cx, x, kernel)
    n = x.ndim - 2
    group = int(attr_or_default(cx.node, "group"))
    if n < 1 or n > 3:
        cx.fail(f"Conv with {n} spatial axes is not lowered")
    # a window larger than the padded input is an error, as on NumPy (XLA would give an
    # empty result)
    window_counts(cx.node, x.shape[2:], [(k - 1) * d + 1 for k, d in zip(kernel, dilations)],
                  strides, [a for a, _ in pads], [c for _, c in pads])
    unit = [i for i in range(n) if x.shape[2 + i] == 1 and kernel[i] == 1 and pads[i] == (0, 0)]
    if unit and len(unit) < n and form(cx.tc, x) is None:
        return _without_unit_axes(cx, x, w, b, unit, (kernel, strides, dilations, pads, group))
    return _conv(cx, x, w, b, kernel, strides, dilations, pads, group)


def _without_unit_axes(cx, x, w, b, unit: list[int], geometry):
    """A convolution over spatial axes of length 1 that its kernel (of length 1, unpadded)
    only passes through, as the convolution over the other axes: a TensorFlow Conv1D comes
    to ONNX as a Conv over ``[N, C, L, 1]``, which XLA's CPU code runs about 2x slower than
    the one-dimensional convolution it is."""
    keep = [i for i in range(x.ndim - 2) if i not in unit]
    xp = cx.xp

    def squeezed(v):  # a weight embedded as a NumPy constant stays one
        shape = v.shape[:2] + tuple(v.shape[2 + i] for i in keep)
        return v.reshape(shape) if isinstance(v, np.ndarray) else xp.reshape(v, shape)

    y = _conv(cx, squeezed(x), squeezed(w), b,
              *([g[i] for i in keep] for g in geometry[:4]), geometry[4])
    return xp.reshape(y, y.shape[:2] + tuple(1 if i in unit else y.shape[2 + keep.index(i)]
                                             for i in range(x.ndim - 2)))


def _conv(cx, x, w, b, kernel, strides, dilations, pads, group):
    n = x.ndim - 2
    pointwise = group == 1 and all(k == 1 for k in kernel)
    depthwise = group > 1 and group == x.shape[1] and w.shape[1] == 1 and len(kernel) == n
    narrow = (not pointwise and group == 1 and len(kernel) == n
              and _few_columns(x.shape, kernel, strides, dilations, pads))
    if (pointwise or depthwise or narrow) and x.dtype.itemsize < 4 and x.dtype.kind == "f":
        # sum in float32 as the general convolution does (float16 terms would round each)
        xw = astype(cx, x, np.float32), astype(cx, w, np.float32)
    else:
        xw = x, w
    # computed channels last (`channels_last`): XLA's CPU code pads, broadcasts per-channel
    # vectors and shifts windows several times faster so
    held = form(cx.tc, x) is not None
    if pointwise:
        y = _pointwise(cx, channels_last(cx, xw[0]), xw[1], strides, pads)
    elif depthwise:
        y = _depthwise(cx, channels_last(cx, xw[0]), xw[1], kernel, strides, dilations, pads)
    elif narrow:
        y = _columns_product(cx, channels_last(cx, xw[0]), xw[1], kernel, strides, dilations,
                             pads)
    elif held or n > 1:
        y = _general(cx, x, w, strides, dilations, pads, group, held)
    else:  # a 1-D signal not held channels last stays channels first (a channels-last
        # output measured slower on the silero VAD's convolutions over its input)
        y = _general(cx, x, w, strides, dilations, pads, group, False, False)
        if b is not None:
            y = y + cx.xp.reshape(b, (1, -1) + (1,) * n)
        return astype(cx, y, x.dtype)
    if b is not None:
        y = y + b
    return channels_first(cx, astype(cx, y, x.dtype))


def _general(cx, x, w, strides, dilations, pads, group, last_in: bool, last_out: bool = True):
    """XLA's convolution, channels last or first in and out."""
    from jax import lax

    n = x.ndim - 2
    space = "DHW"[-n:]
    spec = [("N" + space + "C") if last_in else ("NC" + space), "OI" + space,
            ("N" + space + "C") if last_out else ("NC" + space)]
    # XLA's CPU convolution reads its weights spatial axes first (HWIO): weights passed
    # as arguments (large constants) are laid out so once, on the host, not transposed
    # in every call. Embedded ones are left to XLA, which lays them out at compile time
    # (the HWIO spec measured 1.5x slower on the silero VAD's small convolutions).
    laid = None if isinstance(w, np.ndarray) else \
        cx.prepared(w, ("spatial-first",), _spatial_first)
    if laid is not None:
        w, spec[1] = laid, space + "IO"
    return lax.conv_general_dilated(channels_last(cx, x) if last_in else x, w, tuple(strides),
                                    pads, rhs_dilation=tuple(dilations),
                                    dimension_numbers=tuple(spec), feature_group_count=group,
                                    precision=precision())


def _spatial_first(w: np.ndarray) -> np.ndarray:
    """Conv weights ``[O, I, *k]`` as ``[*k, I, O]``."""
    return np.ascontiguousarray(np.moveaxis(w, (0, 1), (-1, -2)))


def channels_last(cx, x):
    """``[N, C, *spatial]`` as ``[N, *spatial, C]`` (`channels_last.to_last`)."""
    return cx.xp.moveaxis(x, 1, -1) if cx.folding else to_last(cx.tc, x)


def channels_first(cx, y):
    """``[N, *spatial, C]`` as ``[N, C, *spatial]``, `y` kept as its channels-last form."""
    return cx.xp.moveaxis(y, -1, 1) if cx.folding else from_last(cx.tc, y)


def _padded(cx, x, pads, value=0):
    """Channels-last `x` with its spatial axes padded with `value` (zeros)."""
    if not any(p for pair in pads for p in pair):
        return x
    return cx.xp.pad(x, [(0, 0), *[(max(a, 0), max(c, 0)) for a, c in pads], (0, 0)],
                     constant_values=value)


def _window(x, start: list[int], size: list[int], strides: list[int]):
    """``x[:, s0::st0][:size0] ...`` on the spatial axes of a channels-last `x`: `size`
    strided positions from `start` per axis."""
    idx = (slice(None),) + tuple(
        slice(s, s + (o - 1) * st + 1, st) for s, o, st in zip(start, size, strides))
    return x[idx]


def _out_size(size, k, s, d, pad):
    return (size + pad[0] + pad[1] - (k - 1) * d - 1) // s + 1


def _pointwise(cx, x, w, strides, pads):
    """A 1x1 convolution of channels-last `x`: one product over the channels."""
    if any(a < 0 or c < 0 for a, c in pads):
        cx.fail("negative pads")
    xp = _padded(cx, x, pads)
    out = [_out_size(i, 1, s, 1, p) for i, s, p in zip(x.shape[1:-1], strides, pads)]
    xs = _window(xp, [0] * len(out), out, strides)
    kw = {} if cx.folding else {"precision": precision()}
    return cx.xp.einsum("n...c,oc->n...o", xs, w.reshape(w.shape[0], w.shape[1]), **kw)


#: the most taps, and column-matrix elements, for which a convolution is written as one
#: product over gathered windows: XLA's CPU convolution costs 2-4x more on few input
#: channels (an image's first layer, 3 -> 8 over 48x192) and on short 1-D signals
#: (128 -> 64 channels, kernel 3, 64 steps), and less than the column matrix's copy
#: beyond these sizes (16 -> 32 over 24x96, measured with one thread)
_COLUMN_TAPS = 27
_COLUMN_ELEMENTS = 1 << 17
#: on at most this many input channels (an image's first layer) the product over the column
#: matrix stays faster up to `_FEW_CHANNEL_ELEMENTS` (3 -> 16, 3x3 stride 2 over 224x224
#: and 320x320: 1.2-1.4x faster than XLA's convolution, with one thread; a layout model's
#: 800x608 input, 3.3M elements, no faster)
_FEW_CHANNELS = 4
_FEW_CHANNEL_ELEMENTS = 1 << 20


def _few_columns(shape, kernel, strides, dilations, pads) -> bool:
    taps = int(np.prod(kernel))
    out = [_out_size(i, k, s, d, p) for i, k, s, d, p in
           zip(shape[2:], kernel, strides, dilations, pads)]
    if taps > _COLUMN_TAPS or any(o <= 0 for o in out) or any(a < 0 or c < 0 for a, c in pads):
        return False
    elements = shape[0] * shape[1] * taps * int(np.prod(out))
    return elements <= (_FEW_CHANNEL_ELEMENTS if shape[1] <= _FEW_CHANNELS else _COLUMN_ELEMENTS)


def _columns_product(cx, x, w, kernel, strides, dilations, pads):
    """A convolution of channels-last `x` as one product: the stacked windows
    (`stacked_windows`) times the weights laid out ``[o, taps * c]`` (im2col)."""
    columns, out = stacked_windows(cx, x, kernel, strides, dilations, pads)
    n, o = x.shape[0], w.shape[0]
    kw = {} if cx.folding else {"precision": precision()}
    laid = cx.prepared(w, ("taps-channels",), taps_channels)  # once, for an argument
    y = cx.xp.einsum("npk,ok->npo", columns,
                     taps_channels(w, cx.xp) if laid is None else laid, **kw)
    return cx.xp.reshape(y, (n, *out, o))


def stacked_windows(cx, x, kernel, strides, dilations, pads, pad_value=0):
    """The column matrix of a convolution of channels-last `x`: every kernel offset's strided
    window of the input padded with `pad_value`, stacked into ``[n, positions, taps * c]``
    (channels fastest, as `taps_channels` lays out the weights); and the output's spatial
    sizes."""
    import itertools

    xp = _padded(cx, x, pads, pad_value)
    out = [_out_size(i, k, s, d, p) for i, k, s, d, p in
           zip(x.shape[1:-1], kernel, strides, dilations, pads)]
    windows = [_window(xp, [o * d for o, d in zip(off, dilations)], out, strides)
               for off in itertools.product(*(range(k) for k in kernel))]
    n, c = x.shape[0], x.shape[-1]
    return cx.xp.reshape(cx.xp.stack(windows, axis=-2), (n, -1, len(windows) * c)), out


def taps_channels(w, xp=np):
    """Conv weights ``[O, C, *k]`` as ``[O, taps * C]``, channels fastest."""
    return xp.reshape(xp.moveaxis(w, 1, -1), (w.shape[0], -1))


def _depthwise(cx, x, w, kernel, strides, dilations, pads):
    """A convolution with one filter per input channel (channels-last `x`): the sum over
    the kernel offsets of each shifted window times its per-channel weights."""
    import itertools

    if any(a < 0 or c < 0 for a, c in pads):
        cx.fail("negative pads")
    mult = w.shape[0] // x.shape[-1]
    xp = _padded(cx, x, pads)
    if mult > 1:  # output channel o reads input channel o // mult
        xp = cx.xp.repeat(xp, mult, axis=-1)
    out = [_out_size(i, k, s, d, p) for i, k, s, d, p in
           zip(x.shape[1:-1], kernel, strides, dilations, pads)]
    if any(o <= 0 for o in out):
        cx.fail("an empty output")
    y = None
    for off in itertools.product(*(range(k) for k in kernel)):
        term = _window(xp, [o * d for o, d in zip(off, dilations)], out, strides) * \
            w[(slice(None), 0, *off)]
        y = term if y is None else y + term
    return y


def pool_refusal(node) -> str | None:
    """Why a pooling node stays on NumPy (None: it lowers)."""
    if node.op_type == "MaxPool" and len(node.outputs) > 1:
        return "MaxPool's indices output is not lowered"
    if attr_or_default(node, "ceil_mode"):
        return "pooling with ceil_mode=1 is not lowered"
    return None


def _pool_window(cx, x):
    refused(cx, pool_refusal)
    kernel, strides, dilations, pads = geometry(cx, x)
    return ((1, 1, *kernel), (1, 1, *strides), (1, 1, *dilations),
            [(0, 0), (0, 0), *pads])


def _pooled(cx, x, fn):
    """``fn(x, window, strides, dilations, pads)`` over the spatial axes, on `x`'s
    channels-last form where it has one (the window parameters permuted alike)."""
    geometry = _pool_window(cx, x)
    if form(cx.tc, x) is None:
        return fn(x, *geometry)

    def last(p):
        return (*p[:1], *p[2:], p[1])

    return channels_first(cx, fn(channels_last(cx, x), *map(last, geometry)))


@lowering("MaxPool", since=1, refuses=pool_refusal)
def _max_pool(cx, x):
    from jax import lax

    init = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min

    def pool(x, win, st, dil, pads):
        return _separable(x, np.array(init, x.dtype), lax.max, win, st, dil, pads)

    return _pooled(cx, x, pool)


def _separable(x, init, op, win, st, dil, pads):
    """``lax.reduce_window`` one axis at a time: the same maximum (and the same sum, up to
    the order of its terms) as over the whole window, where XLA's CPU code visits every
    element of every window (a 13x13 max over 26x26x256: 23 ms at once, 0.4 ms by axes)."""
    from jax import lax

    rank = x.ndim
    x, win, st = _tiled(x, op, win, st, dil, pads)
    for a in range(rank):
        if win[a] == 1 and st[a] == 1 and tuple(pads[a]) == (0, 0):
            continue

        def only(v, a=a):
            return tuple(v if i == a else 1 for i in range(rank))

        x = lax.reduce_window(x, init, op, only(win[a]), only(st[a]),
                              [tuple(pads[a]) if i == a else (0, 0) for i in range(rank)],
                              window_dilation=only(dil[a]))
    return x


def _tiles(win, st, dil, pads) -> list[int]:
    """The axes whose windows tile the input: as long as their stride, undilated, unpadded,
    longer than 1."""
    return [a for a in range(len(win))
            if win[a] == st[a] > 1 and dil[a] == 1 and tuple(pads[a]) == (0, 0)]


def _tiled(x, op, win, st, dil, pads):
    """`x` reduced with `op` over its tiling windows (`_tiles`), and the window and
    strides left to reduce (1 on those axes): the trailing elements no window covers
    dropped, each tiled axis split into (windows, window) and the window axes reduced. A
    2x2 stride-2 max pool so is one reduction, which XLA's CPU code runs 2x faster than two
    window reductions (and keeps out of a library reduction after it, where the window
    reductions ran 5x slower)."""
    from jax import lax

    axes = _tiles(win, st, dil, pads)
    if not axes:
        return x, win, st
    x = x[tuple(slice(0, x.shape[a] // win[a] * win[a]) if a in axes else slice(None)
                for a in range(x.ndim))]
    shape, reduced = [], []
    for a, n in enumerate(x.shape):
        if a in axes:
            shape += [n // win[a], win[a]]
            reduced.append(len(shape) - 1)
        else:
            shape.append(n)
    x = lax.reshape(x, tuple(shape))
    x = lax.reduce_max(x, reduced) if op is lax.max else lax.reduce_sum(x, reduced)
    ones = [1 if a in axes else w for a, w in enumerate(win)]
    return x, ones, [1 if a in axes else s for a, s in enumerate(st)]


def lower_pool_sum(cx, x):
    """The sum over each pooling window of `x` (the node's window; padding counts as zeros),
    as AveragePool's numerator."""
    from jax import lax

    zero = np.array(0, x.dtype)
    return _pooled(cx, x, lambda v, *g: _separable(v, zero, lax.add, *g))


@lowering("AveragePool", since=1, refuses=pool_refusal)
def lower_avg_pool(cx, x):
    from jax import lax

    zero = np.array(0, x.dtype)

    def pool(x, win, st, dil, pads):
        s = _separable(x, zero, lax.add, win, st, dil, pads)
        if attr_or_default(cx.node, "count_include_pad"):
            return astype(cx, s / float(np.prod(win)), x.dtype)
        ones = cx.xp.ones([1 if w == 1 and p == (0, 0) else n
                           for n, w, p in zip(x.shape, win, pads)], x.dtype)
        cnt = _separable(ones, zero, lax.add, win, st, dil, pads)
        return astype(cx, s / cnt, x.dtype)

    return _pooled(cx, x, pool)


def _global(cx, x, reduce):
    """`reduce` over the spatial axes, read channels last (as the convolutions before it
    leave their results: a channel-first read here makes XLA lay the convolution's output
    out channels first and transpose it inside the fused loops)."""
    y = reduce(channels_last(cx, x), axis=tuple(range(1, x.ndim - 1)))
    return cx.xp.reshape(y, y.shape + (1,) * (x.ndim - 2))


@lowering("GlobalAveragePool", since=1)
def _gap(cx, x):
    return astype(cx, _global(cx, x, cx.xp.mean), x.dtype)


@lowering("GlobalMaxPool", since=1)
def _gmp(cx, x):
    return _global(cx, x, cx.xp.max)


@lowering("BatchNormalization", since=1)
def _batch_norm(cx, x, scale, b, mean, var, *rest):
    if attr_or_default(cx.node, "training_mode") or len(cx.node.outputs) > 1:
        cx.fail("training-mode BatchNormalization is not lowered")
    xp = cx.xp
    eps = float(attr_or_default(cx.node, "epsilon"))
    last = not cx.folding and x.ndim > 2 and form(cx.tc, x) is not None
    shape = (-1,) if last else (1, -1) + (1,) * (x.ndim - 2)

    def r(v):
        return xp.reshape(v, shape)

    z = channels_last(cx, x) if last else x
    y = astype(cx, (z - r(mean)) / xp.sqrt(r(var) + eps) * r(scale) + r(b), x.dtype)
    return channels_first(cx, y) if last else y


@lowering("InstanceNormalization", since=1)
def _instance_norm(cx, x, scale, b):
    check_instance_rank(cx.node, x.ndim)
    xp = cx.xp
    eps = float(attr_or_default(cx.node, "epsilon"))
    axes = tuple(range(2, x.ndim))
    mean = xp.mean(x, axis=axes, keepdims=True)
    var = xp.mean((x - mean) ** 2, axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean) / xp.sqrt(var + eps) * xp.reshape(scale, shape) + xp.reshape(b, shape)
    return astype(cx, y, x.dtype)


@lowering("RMSNormalization", since=23)
def _rms_norm(cx, x, scale):
    xp = cx.xp
    a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), x.ndim)
    eps = float(attr_or_default(cx.node, "epsilon"))
    stash = np.float32 if int(attr_or_default(cx.node, "stash_type")) == 1 else x.dtype
    xs = astype(cx, x, np.promote_types(x.dtype, stash))
    ms = xp.mean(xs * xs, axis=tuple(range(a, x.ndim)), keepdims=True)
    y = astype(cx, xs / xp.sqrt(ms + eps), x.dtype) * scale
    return astype(cx, y, x.dtype)
