"""Translators of OpenVINO's Fourier transforms as ONNX ``DFT-20`` nodes, one per axis
(checked against OpenVINO in tests/openvino/opset).

OpenVINO keeps complex numbers as a trailing axis of 2 (real, imaginary), as ONNX does; the
``axes`` are those of the data without that axis (negative from its end). ``signal_size``
(-1: unchanged) pads with zeros or trims each axis before the transform: ONNX's
``dft_length``. The inverse transforms divide by the product of the sizes, as ONNX's do.
- ``DFT-7``/``IDFT-7``: complex to complex over every axis of ``axes``;
- ``RDFT-9``: real input; the last axis of ``axes`` is transformed first, one-sided (``n // 2
  + 1`` outputs), the others then in full;
- ``IRDFT-9``: the others inverted first, then the last axis from its one-sided half: its
  length ``n`` is ``signal_size`` or ``2 * (m - 1)`` for ``m`` inputs; the half is trimmed or
  padded to ``n // 2 + 1``, completed by conjugate symmetry (``Y[k] = conj(Y[n - k])``) and
  inverted in full, and the real part kept (the imaginary parts of ``Y[0]`` and ``Y[n / 2]``
  drop out, as in NumPy's ``irfft``).
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType, TensorType
from ...builder import Builder, dtype_of, require_rank, shape_of
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64


def _axes_sizes(b: Builder, layer: Layer, x, rank: int) -> list[tuple[int, int]]:
    """(axis, signal size or -1) pairs, axes made non-negative for data of `rank` axes."""
    axes = [int(a) for a in b.need_const(x[1], layer, "the axes input").reshape(-1)]
    sizes = [-1] * len(axes)
    if len(x) > 2 and x[2] is not None:
        sizes = [int(s) for s in b.need_const(x[2], layer, "signal_size").reshape(-1)]
        if len(sizes) != len(axes):
            raise ModelError(f"{layer.where()}: signal_size has {len(sizes)} values for "
                             f"{len(axes)} axes")
    out = []
    for a, s in zip(axes, sizes):
        a = a + rank if a < 0 else a
        if not 0 <= a < rank:
            raise ModelError(f"{layer.where()}: axis out of range for {rank} axes")
        out.append((a, s))
    if len({a for a, _ in out}) != len(out):
        raise ModelError(f"{layer.where()}: repeated axes")
    return out


def _dft(b: Builder, v, axis: int, size: int, dt, inverse=False, onesided=False):
    """ONNX ``DFT-20`` of `v` along `axis`, ``dft_length`` `size` (none when -1)."""
    length = b.i64(size) if size > 0 else None
    y = b.op("DFT", [v, length, b.i64(axis)], {"inverse": int(inverse),
                                               "onesided": int(onesided)}, dtype=dt)
    shape = shape_of(v)
    if shape is not None and dt is not None:  # the writer needs the complex axis
        dims = list(shape)
        n = size if size > 0 else dims[axis]
        dims[axis] = n // 2 + 1 if onesided and isinstance(n, int) else n
        dims[-1] = 2
        y.type = TensorType(dt, tuple(dims))
    return y


def _complex_dft(b: Builder, layer: Layer, x, inverse: bool):
    r = require_rank(layer, x[0], 0) - 1
    dt = out_dtype(layer, x)
    v = x[0]
    for a, s in _axes_sizes(b, layer, x, r):
        v = _dft(b, v, a, s, dt, inverse=inverse)
    return v


@importer("DFT", since=7)
def _dft7(b: Builder, layer: Layer, x):
    return _complex_dft(b, layer, x, inverse=False)


@importer("IDFT", since=7)
def _idft7(b: Builder, layer: Layer, x):
    return _complex_dft(b, layer, x, inverse=True)


@importer("RDFT", since=9)
def _rdft9(b: Builder, layer: Layer, x):
    r = require_rank(layer, x[0], 0)
    dt = out_dtype(layer, x)
    pairs = _axes_sizes(b, layer, x, r)
    v = b.unsqueeze(x[0], [r])
    last, size = pairs[-1]
    v = _dft(b, v, last, size, dt, onesided=True)
    for a, s in pairs[:-1]:
        v = _dft(b, v, a, s, dt)
    return v


@importer("IRDFT", since=9)
def _irdft9(b: Builder, layer: Layer, x):
    r = require_rank(layer, x[0], 0) - 1
    dt = out_dtype(layer, x) or dtype_of(x[0])
    pairs = _axes_sizes(b, layer, x, r)
    v = x[0]
    for a, s in pairs[:-1]:
        v = _dft(b, v, a, s, dt, inverse=True)
    last, n = pairs[-1]
    shape = layer.inputs[0].shape if layer.inputs else None
    m = shape[last] if shape and isinstance(shape[last], int) else None
    if n <= 0:
        if m is None:
            raise ModelError(f"{layer.where()}: IRDFT needs the size of axis {last}")
        n = 2 * (m - 1)
    half = n // 2 + 1
    dims = shape_of(v)
    if m is None or m != half:  # trim or pad the one-sided half to n // 2 + 1
        v = _fit(b, layer, v, last, r + 1, half, m, dt)
    conj = b.const(np.array([1, -1], to_numpy(dt)))
    mirror = b.op("Slice", [v, b.i64([n - half]), b.i64([0]), b.i64([last]), b.i64([-1])],
                  dtype=dt)
    full = b.op("Concat", [v, b.op("Mul", [mirror, conj], dtype=dt)], {"axis": last},
                dtype=dt) if n - half > 0 else v
    if dims is not None and dt is not None:  # the writer needs the complex axis
        dims = list(dims)
        dims[last] = n
        full.type = TensorType(dt, tuple(dims))
    y = _dft(b, full, last, -1, dt, inverse=True)
    real = b.op("Slice", [y, b.i64([0]), b.i64([1]), b.i64([r])], dtype=dt)
    return b.squeeze(real, [r])


def _fit(b: Builder, layer: Layer, v, axis: int, rank: int, size: int, have: int | None, dt):
    """`v` (of `rank` axes) trimmed or zero-padded to `size` along `axis`."""
    if have is None:
        raise ModelError(f"{layer.where()}: IRDFT with signal_size needs the size of axis "
                         f"{axis}")
    if have > size:
        return b.op("Slice", [v, b.i64([0]), b.i64([size]), b.i64([axis])], dtype=dt)
    pads = [0] * (2 * rank)
    pads[rank + axis] = size - have
    zero = b.const(np.zeros((), to_numpy(dt)))
    return b.op("Pad", [v, b.i64(pads), zero], {"mode": "constant"}, dtype=dt)


@importer("STFT", since=15)
def _stft15(b: Builder, layer: Layer, x):
    """``STFT-15`` (signal ``[B, T]`` or ``[T]``, window, frame_size, frame_step) as ONNX
    ``STFT-17`` (one-sided) on the signal with a trailing real axis; ``transpose_frames`` swaps
    the frames and bins axes. A window shorter than the frame is refused."""
    r = require_rank(layer, x[0], 0)
    dt = out_dtype(layer, x)
    size = int(b.need_const(x[2], layer, "frame_size").reshape(()))
    win = shape_of(x[1])
    if win is None or win[0] != size:
        raise UnsupportedError(f"{layer.where()}: a window of {win} for frames of {size}")
    sig = b.unsqueeze(x[0], [0, 2] if r == 1 else [2])
    step = b.op("Reshape", [b.to_i64(x[3]), b.i64([])], dtype=I64)
    y = b.op("STFT", [sig, step, b.cast(x[1], dt), b.i64(size)], {"onesided": 1}, dtype=dt)
    if layer.bool_attr("transpose_frames", False):
        y = b.transpose(y, [0, 2, 1, 3])
    return b.squeeze(y, [0]) if r == 1 else y
