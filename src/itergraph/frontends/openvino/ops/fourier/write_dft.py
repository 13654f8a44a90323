"""ONNX ``DFT`` (opsets 17, 20) -> OpenVINO Fourier transforms over its one axis, with
``dft_length`` as ``signal_size``: a complex input (trailing axis 2) is ``DFT-7``/``IDFT-7``;
a real one (trailing axis 1) is ``RDFT-9`` when ``onesided``, else made complex with a zero
imaginary part first. The length must be a constant; an axis given at run time is fed to
OpenVINO's transform as its ``axes`` input for a complex signal, and refused for a real one.
A one-sided ``STFT`` of a real signal is ``STFT-15`` (the window of ones when absent)."""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from ..basic.write import V1, const_value


def _axis(w: NetWriter, node: Node, ins, rank: int) -> Out:
    """The axis as a one-element i64 vector in ``[0, rank - 2]``; one given at run time is
    moved into range by ``FloorMod`` (ONNX counts a negative axis from the back of the whole
    input, OpenVINO from the back of the signal axes)."""
    if node.version is not None and node.version < 20:
        a = int(node.attrs.get("axis", 1))
    else:
        c = const_value(node, 2)
        if c is None and len(node.inputs) > 2 and node.inputs[2] is not None:
            v = w.one("Reshape", V1, [ins[2], w.i64([1])], {"special_zero": False},
                      dtype=ins[2].dtype)
            v = w.one("Convert", V1, [v], {"destination_type": "i64"}, dtype=DataType.INT64)
            return w.one("FloorMod", V1, [v, w.i64(rank)], {"auto_broadcast": "numpy"},
                         dtype=DataType.INT64, shape=(1,))
        a = -2 if c is None else int(np.asarray(c).reshape(-1)[0])
    return w.i64([a + rank if a < 0 else a])


@exporter("DFT", since=17)
def _dft(w: NetWriter, node: Node, ins):
    x = ins[0]
    if x.shape is None or not isinstance(x.shape[-1], int):
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs the size of the last "
                               "(complex) axis")
    rank = len(x.shape)
    axis = _axis(w, node, ins, rank)
    inverse = bool(attr_or_default(node, "inverse"))
    onesided = bool(attr_or_default(node, "onesided"))
    length = const_value(node, 1)
    if len(node.inputs) > 1 and node.inputs[1] is not None and length is None:
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs a constant dft_length")
    sizes = [w.i64([int(np.asarray(length).reshape(-1)[0])])] if length is not None else []
    dt = x.dtype
    runtime_axis = not (node.version is not None and node.version < 20) and \
        len(node.inputs) > 2 and node.inputs[2] is not None and const_value(node, 2) is None
    if x.shape[-1] == 1 and runtime_axis:
        # OpenVINO 2026.4 computes other values along axis 2 of a [1, 10, 10, 1] real signal
        # given its axis at run time, and its CPU plugin crashes compiling the RDFT
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs a constant axis for "
                               "a real input (OpenVINO's transform of a real signal along an "
                               "axis given at run time is wrong or crashes)")
    if x.shape[-1] == 1:
        real = w.one("Squeeze", V1, [x, w.i64([rank - 1])], dtype=dt)
        if onesided and not inverse:
            return w.one("RDFT", "opset9", [real, axis, *sizes], dtype=dt)
        zero = w.one("Multiply", V1, [x, w.const(np.zeros((), np.float32).astype(
            np.dtype(str(dt)) if dt is not None else np.float32))],
            {"auto_broadcast": "numpy"}, dtype=dt)
        x = w.one("Concat", V1, [x, zero], {"axis": rank - 1}, dtype=dt)
    elif onesided:
        raise UnsupportedError(f"{where(node)}: a one-sided DFT of a complex input")
    return w.one("IDFT" if inverse else "DFT", "opset7", [x, axis, *sizes], dtype=dt)


@exporter("STFT", since=17)
def _stft(w: NetWriter, node: Node, ins):
    x = ins[0]
    if not attr_or_default(node, "onesided") or x.shape is None or x.shape[-1] != 1:
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer takes a one-sided STFT of "
                               "a real signal")
    length = const_value(node, 3)
    window = ins[2] if len(ins) > 2 else None
    if length is None:
        if window is None or window.shape is None or not isinstance(window.shape[0], int):
            raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs the frame length")
        length = window.shape[0]
    length = int(np.asarray(length).reshape(()))
    if window is None:
        window = w.const(np.ones(length, np.dtype(str(x.dtype)) if x.dtype else np.float32))
    sig = w.one("Squeeze", V1, [x, w.i64([len(x.shape) - 1])], dtype=x.dtype)
    step = w.one("Convert", V1, [ins[1]], {"destination_type": "i64"}, dtype=DataType.INT64)
    return w.one("STFT", "opset15", [sig, window, w.i64(length), step],
                 {"transpose_frames": False}, dtype=x.dtype)
