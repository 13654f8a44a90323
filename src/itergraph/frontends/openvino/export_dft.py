"""ONNX ``DFT`` (opsets 17, 20) -> OpenVINO Fourier transforms over its one axis, with
``dft_length`` as ``signal_size``: a complex input (trailing axis 2) is ``DFT-7``/``IDFT-7``;
a real one (trailing axis 1) is ``RDFT-9`` when ``onesided``, else made complex with a zero
imaginary part first. The axis (and length) must be constants."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, where
from ...ir.graph import Node
from .export_ops import V1, const_value
from .export_table import exporter
from .net_writer import NetWriter


def _axis(node: Node, rank: int) -> int:
    if node.version is not None and node.version < 20:
        a = int(node.attrs.get("axis", 1))
    else:
        c = const_value(node, 2)
        if c is None and len(node.inputs) > 2 and node.inputs[2] is not None:
            raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs a constant axis")
        a = -2 if c is None else int(np.asarray(c).reshape(-1)[0])
    return a + rank if a < 0 else a


@exporter("DFT", since=17)
def _dft(w: NetWriter, node: Node, ins):
    x = ins[0]
    if x.shape is None or not isinstance(x.shape[-1], int):
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs the size of the last "
                               "(complex) axis")
    rank = len(x.shape)
    axis = _axis(node, rank)
    inverse, onesided = bool(node.attrs.get("inverse", 0)), bool(node.attrs.get("onesided", 0))
    ins_ = [None, w.i64([axis])]
    length = const_value(node, 1)
    if len(node.inputs) > 1 and node.inputs[1] is not None and length is None:
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs a constant dft_length")
    sizes = [w.i64([int(np.asarray(length).reshape(-1)[0])])] if length is not None else []
    dt = x.dtype
    if x.shape[-1] == 1:
        real = w.one("Squeeze", V1, [x, w.i64([rank - 1])], dtype=dt)
        if onesided and not inverse:
            return w.one("RDFT", "opset9", [real, ins_[1], *sizes], dtype=dt)
        zero = w.one("Multiply", V1, [x, w.const(np.zeros((), np.float32).astype(
            np.dtype(str(dt)) if dt is not None else np.float32))],
            {"auto_broadcast": "numpy"}, dtype=dt)
        x = w.one("Concat", V1, [x, zero], {"axis": rank - 1}, dtype=dt)
    elif onesided:
        raise UnsupportedError(f"{where(node)}: a one-sided DFT of a complex input")
    return w.one("IDFT" if inverse else "DFT", "opset7", [x, ins_[1], *sizes], dtype=dt)
