"""Rules of the 2D deformable convolutions: ONNX ``DeformConv`` and ``DeformableConv2D`` of the
``org.openvinotoolkit`` domain, and OpenVINO's ``ISTFT`` (math in `backends.common.deform_conv`
and `backends.common.istft`; ISTFT's frame size, step and length must be known when tracing)."""

from __future__ import annotations

from ....ir.attributes import attr
from ...common.deform_conv import DOMAIN, deform_conv, node_params
from ...common.istft import istft, scalars
from ..table import lowering
from ._util import precision


@lowering("DeformConv", since=19)
def _deform_conv(cx, x, w, offset, b=None, mask=None):
    p = node_params(cx.node, x.shape, w.shape, onnx=True)
    return deform_conv(cx.xp, x, w, offset, b, mask, precision=precision(), **p)


@lowering("DeformableConv2D", domain=DOMAIN)
def _deformable_conv_2d(cx, x, offset, w, mask=None):
    p = node_params(cx.node, x.shape, w.shape, onnx=False)
    return deform_conv(cx.xp, x, w, offset, None, mask, precision=precision(), **p)


@lowering("ISTFT", domain=DOMAIN)
def _istft(cx, data, window, frame_size, frame_step, signal_length=None):
    n = cx.node
    fs = cx.const(frame_size, "frame_size (input 2)")
    step = cx.const(frame_step, "frame_step (input 3)")
    length = None if signal_length is None else cx.const(signal_length,
                                                         "signal_length (input 4)")
    fs, step, length = scalars(n, fs, step, length)
    return istft(cx.xp, data, window, fs, step, length, bool(attr(n, "center", 0)),
                 bool(attr(n, "normalized", 0)))
