"""ONNX ``ConvTranspose`` geometry, shared by both backends: the begin/end cropping and the
extra output of each spatial axis.

The full (uncropped) output of a transposed convolution along one axis has
``stride * (in - 1) + (kernel - 1) * dilation + 1`` elements; ONNX then removes ``pads`` and
appends ``output_padding``. With ``output_shape`` (or ``auto_pad`` ``SAME_*``, whose output is
``in * stride``) the total padding is ``full + output_padding - output``, split in half with the
odd element at the end for ``SAME_UPPER`` and at the beginning otherwise (the specification's
rule); an output larger than the full one gets zeros at the end.
"""

from __future__ import annotations

from ...ir.attributes import attr, attr_str


def transpose_geometry(node, in_spatial, kernel) -> tuple[list[int], list[int], list[int],
                                                          list[int], list[int]]:
    """(strides, dilations, pads_begin, pads_end, output_padding) of a ConvTranspose node for
    spatial input dims `in_spatial` and window `kernel`."""
    n = len(kernel)
    strides = list(attr(node, "strides", [1] * n))
    dilations = list(attr(node, "dilations", [1] * n))
    out_pad = list(attr(node, "output_padding", [0] * n))
    auto = attr_str(node, "auto_pad", "NOTSET")
    target = attr(node, "output_shape")
    if target is None and auto in ("SAME_UPPER", "SAME_LOWER"):
        target = [i * s for i, s in zip(in_spatial, strides)]
    if target is not None:
        target = list(target)[-n:]
        begin, end, extra = [], [], []
        for i, k, s, d, p, o in zip(in_spatial, kernel, strides, dilations, out_pad, target):
            total = s * (i - 1) + (k - 1) * d + 1 + p - o
            extra.append(p + max(-total, 0))  # a larger output gets zeros at the end
            total = max(total, 0)
            half = total // 2
            b = half if auto == "SAME_UPPER" else total - half
            begin.append(b)
            end.append(total - b)
        return strides, dilations, begin, end, extra
    if auto == "VALID":
        return strides, dilations, [0] * n, [0] * n, out_pad
    pads = list(attr(node, "pads", [0] * (2 * n)))
    return strides, dilations, pads[:n], pads[n:], out_pad
