"""2D deformable convolution: ONNX ``DeformConv`` (opset 19) and ``DeformableConv2D`` of the
``org.openvinotoolkit`` domain (OpenVINO's ``DeformableConvolution-1/8``).

For output position ``(i, j)``, kernel tap ``(a, b)`` and input channel ``c`` the input is
sampled at ``y = i * stride_y - pad_top + a * dilation_y + dy`` and
``x = j * stride_x - pad_left + b * dilation_x + dx``, where ``(dy, dx)`` are offset channels
``2 * (g * K + k)`` and ``2 * (g * K + k) + 1`` (``K = kH * kW``, ``k = a * kW + b``, ``g`` the
offset group of ``c``: ``c // (C / offset_group)``). The sample is scaled by mask channel
``g * K + k`` (1 without a mask) and the samples are contracted with the weights as in a
grouped convolution; ``B`` (ONNX only) is added per output channel.

Bilinear sampling, two ways:
- ``zero_pad`` (ONNX ``DeformConv``, OpenVINO ``bilinear_interpolation_pad=true``): the input is
  surrounded by zeros; each of the four neighbours outside the input counts as 0;
- otherwise (OpenVINO ``DeformableConvolution-1`` and ``-8`` with
  ``bilinear_interpolation_pad=false``): a sample outside ``[0, H) x [0, W)`` is 0, one inside
  interpolates with its lower neighbours ``floor(y)``/``floor(x)`` and upper neighbours clamped
  to the last row/column.

Computed in at least float32 and returned in `x`'s type.
"""

from __future__ import annotations

from ...errors import ExecutionError, ModelError, where
from ...ir.attributes import attr, attr_ints, attr_str
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def out_size(size: int, k: int, stride: int, dilation: int, begin: int, end: int) -> int:
    return (size + begin + end - ((k - 1) * dilation + 1)) // stride + 1


def _gather(xp, planes, yi, xi, width):
    """`planes` [N, G, Cg, H*W] at rows `yi` and columns `xi` [N, G, S] -> [N, G, Cg, S]."""
    idx = (yi * width + xi)[:, :, None, :]
    idx = xp.broadcast_to(idx, planes.shape[:3] + idx.shape[-1:])
    return xp.take_along_axis(planes, idx, axis=3)


def _sample(xp, planes, sy, sx, height: int, width: int, zero_pad: bool):
    """Bilinear samples of `planes` [N, G, Cg, H*W] at `sy`/`sx` [N, G, S] -> [N, G, Cg, S]."""
    y0, x0 = xp.floor(sy), xp.floor(sx)
    ly, lx = sy - y0, sx - x0
    y0i, x0i = y0.astype(xp.int32), x0.astype(xp.int32)
    if zero_pad:
        rows = [(y0i, 1 - ly), (y0i + 1, ly)]
        cols = [(x0i, 1 - lx), (x0i + 1, lx)]
        inside = None
    else:
        inside = (sy >= 0) & (sy < height) & (sx >= 0) & (sx < width)
        rows = [(y0i, 1 - ly), (xp.minimum(y0i + 1, height - 1), ly)]
        cols = [(x0i, 1 - lx), (xp.minimum(x0i + 1, width - 1), lx)]
    total = 0
    for yi, wy in rows:
        for xi, wx in cols:
            weight = wy * wx
            ok = (yi >= 0) & (yi < height) & (xi >= 0) & (xi < width)
            if inside is not None:
                ok = ok & inside
            weight = xp.where(ok, weight, 0)
            v = _gather(xp, planes, xp.clip(yi, 0, height - 1), xp.clip(xi, 0, width - 1),
                        width)
            total = total + v * weight[:, :, None, :]
    return total


def deform_conv(xp, x, w, offset, bias=None, mask=None, strides=(1, 1), pads=(0, 0, 0, 0),
                dilations=(1, 1), group: int = 1, offset_group: int = 1,
                zero_pad: bool = True, precision=None):
    """`x` [N, C, H, W], `w` [O, C/group, kH, kW], `offset` [N, 2*G*K, oH, oW], `bias` [O] or
    None, `mask` [N, G*K, oH, oW] or None (G = offset_group) -> [N, O, oH, oW]."""
    n, c, height, width = (int(d) for d in x.shape)
    o, _, kh, kw = (int(d) for d in w.shape)
    oh = out_size(height, kh, strides[0], dilations[0], pads[0], pads[2])
    ow = out_size(width, kw, strides[1], dilations[1], pads[1], pads[3])
    dt = x.dtype
    ct = xp.float32 if dt.itemsize < 4 else dt
    k, p = kh * kw, oh * ow
    planes = x.astype(ct).reshape(n, offset_group, c // offset_group, height * width)
    off = offset.astype(ct).reshape(n, offset_group, k, 2, oh, ow)
    ys = (xp.arange(oh) * strides[0] - pads[0])[None, :] + (xp.arange(kh) * dilations[0])[:, None]
    xs = (xp.arange(ow) * strides[1] - pads[1])[None, :] + (xp.arange(kw) * dilations[1])[:, None]
    # base sampling grid [K, oH, oW], tap k = a * kW + b
    base_y = xp.broadcast_to(ys[:, None, :, None], (kh, kw, oh, ow)).reshape(k, oh, ow)
    base_x = xp.broadcast_to(xs[None, :, None, :], (kh, kw, oh, ow)).reshape(k, oh, ow)
    sy = (off[:, :, :, 0] + base_y.astype(ct)).reshape(n, offset_group, k * p)
    sx = (off[:, :, :, 1] + base_x.astype(ct)).reshape(n, offset_group, k * p)
    cols = _sample(xp, planes, sy, sx, height, width, zero_pad)  # [N, G, C/G, K*P]
    if mask is not None:
        cols = cols * mask.astype(ct).reshape(n, offset_group, 1, k * p)
    cols = cols.reshape(n, group, (c // group) * k, p)
    wg = w.astype(ct).reshape(group, o // group, (c // group) * k)
    y = xp.einsum("goc,ngcp->ngop", wg, cols, precision=precision) if precision else \
        xp.einsum("goc,ngcp->ngop", wg, cols)
    y = y.reshape(n, o, oh, ow)
    if bias is not None:
        y = y + bias.astype(ct).reshape(1, o, 1, 1)
    return y.astype(dt)


def _same(mode: str, size: int, k: int, s: int, d: int) -> tuple[int, int]:
    total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
    small, big = total // 2, total - total // 2
    return (small, big) if mode == "SAME_UPPER" else (big, small)


def node_params(node, x_shape, w_shape, onnx: bool) -> dict:
    """The keyword arguments of `deform_conv` from the attributes of a ``DeformConv``
    (`onnx`) or ``DeformableConv2D`` node; ``auto_pad`` (``DeformableConv2D``: ``SAME_UPPER``,
    ``SAME_LOWER``, ``VALID``) is resolved against the input shape `x_shape`."""
    kernel = [int(d) for d in w_shape[2:]]
    strides = attr_ints(node, "strides") or [1, 1]
    dilations = attr_ints(node, "dilations") or [1, 1]
    pads = attr_ints(node, "pads") or [0, 0, 0, 0]
    mode = attr_str(node, "auto_pad", "NOTSET") or "NOTSET"
    if mode == "VALID":
        pads = [0, 0, 0, 0]
    elif mode in ("SAME_UPPER", "SAME_LOWER"):
        both = [_same(mode, int(i), k, s, d)
                for i, k, s, d in zip(x_shape[2:], kernel, strides, dilations)]
        pads = [both[0][0], both[1][0], both[0][1], both[1][1]]
    elif mode != "NOTSET":
        raise ModelError(f"{where(node)}: auto_pad '{mode}' is not NOTSET, VALID, SAME_UPPER "
                         "or SAME_LOWER")
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ExecutionError(f"{where(node)}: only 2D deformable convolutions (rank-4 data "
                             f"and weights) run, got ranks {len(x_shape)} and {len(w_shape)}")
    groups = "offset_group" if onnx else "deformable_groups"
    return {"strides": strides, "pads": pads, "dilations": dilations,
            "group": int(attr(node, "group", 1)),
            "offset_group": int(attr(node, groups, 1)),
            "zero_pad": onnx}
