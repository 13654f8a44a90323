"""Translator of OpenVINO's ``ISTFT-16`` (semantics in `backends.common.istft`).

ONNX has no inverse STFT op; with a constant ``frame_size`` and a window of static length it
becomes an ONNX subgraph (``frame_step``, ``signal_length``, the batch and the frame count may
be run-time values), computed in at least float32:
- the one-sided bins of each frame, as ``[B, T, 2F]`` (real parts, then imaginary), times a
  constant ``[2F, frame_size]`` basis of the real inverse DFT (``c_k cos(2 pi k n / N) / N``
  and ``-c_k sin(2 pi k n / N) / N``, ``c_k`` 1 for the zero and Nyquist bins, else 2; the
  imaginary parts of those two bins meet zero rows, as ``irfft`` ignores them), scaled by
  ``sqrt(frame_size)`` when ``normalized``: ``MatMul``;
- times the window zero-padded to ``frame_size``; overlap-added at ``t * frame_step`` by
  ``ScatterElements`` (``reduction=add``), as is the squared window, by which the sum is
  divided where it is not 0 (where it is, every added term is 0 already: divided by 1);
- ``center`` drops ``frame_size // 2`` leading samples; the output is cut to
  ``signal_length`` (when >= 0, else the default length) by ``Slice`` and padded with zeros to
  it by ``Pad``.
Otherwise (a run-time ``frame_size``, or a window or data of unknown rank or length) it becomes
``ISTFT`` of the ``org.openvinotoolkit`` domain, inputs and attributes kept.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType, TensorType
from ...builder import Builder, rank_of, shape_of
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64


def irfft_basis(frame_size: int, scale: float, dtype) -> np.ndarray:
    """[2F, frame_size] with ``[re, im] @ basis`` the real inverse DFT of F one-sided bins."""
    bins = frame_size // 2 + 1
    k = np.arange(bins)[:, None]
    n = np.arange(frame_size)[None, :]
    c = np.full((bins, 1), 2.0)
    c[0] = 1.0
    if frame_size % 2 == 0:
        c[-1] = 1.0
    angle = 2 * np.pi * k * n / frame_size
    basis = np.concatenate([c * np.cos(angle), -c * np.sin(angle)]) * (scale / frame_size)
    return basis.astype(dtype)


def _shaped(v, *dims):
    """`v` with known rank (`dims`, ``None`` where unknown): OpenVINO's writer needs ranks."""
    v.type = TensorType(v.type.dtype if v.type is not None else None, tuple(dims))
    return v


def _scalar_const(b: Builder, v) -> int | None:
    c = b.value_of(v)
    return None if c is None or c.size != 1 else int(c.reshape(-1)[0])


def _window(b: Builder, layer: Layer, window, frame_size: int, dt: DataType):
    """The window zero-padded on both sides to `frame_size` ([frame_size], type `dt`)."""
    shape = shape_of(window)
    n = shape[0] if shape is not None and len(shape) == 1 else None
    if not isinstance(n, int):
        return None
    if n > frame_size:
        raise ModelError(f"{layer.where()}: the window has {n} values, more than "
                         f"frame_size={frame_size}")
    left = (frame_size - n) // 2
    w = b.cast(window, dt)
    c = b.value_of(w)
    if c is not None:
        return b.const(np.pad(c, (left, frame_size - n - left)))
    return b.op("Pad", [w, b.i64([left, frame_size - n - left])], dtype=dt)


def _dim(b: Builder, v, axis: int):
    """Dimension `axis` of `v` as a [1] int64 tensor."""
    return b.op("Shape", [v], {"start": axis, "end": axis + 1}, dtype=I64)


def _overlap_add(b: Builder, rows, updates, flat_idx, total, dt: DataType):
    """`updates` [R, T*S] added into zeros [R, total] at columns `flat_idx` [1, T*S]."""
    zeros = b.op("ConstantOfShape", [b.op("Concat", [rows, total], {"axis": 0}, dtype=I64)],
                 {"value": np.zeros(1, to_numpy(dt))}, dtype=dt)
    idx = b.op("Expand", [flat_idx, b.op("Shape", [updates], dtype=I64)], dtype=I64)
    return _shaped(b.op("ScatterElements", [_shaped(zeros, None, None), idx, updates],
                        {"axis": 1, "reduction": "add"}, dtype=dt), None, None)


def _subgraph(b: Builder, layer: Layer, x, dt: DataType, frame_size: int, center: bool,
              normalized: bool):
    rank = rank_of(x[0])
    ct = DataType.FLOAT32 if dt in (DataType.FLOAT16, DataType.BFLOAT16) else dt
    win = _window(b, layer, x[1], frame_size, ct) if rank in (3, 4) else None
    if win is None:
        return None
    bins = frame_size // 2 + 1
    shape = shape_of(x[0])
    if shape is not None and isinstance(shape[-3], int) and shape[-3] != bins:
        raise ModelError(f"{layer.where()}: {shape[-3]} frequency bins, frame_size="
                         f"{frame_size} needs {bins}")
    data = b.cast(x[0], ct)
    if rank == 3:
        data = b.unsqueeze(data, [0])
    spec = _shaped(b.op("Reshape", [b.transpose(data, [0, 2, 3, 1]), b.i64([0, 0, 2 * bins])],
                        dtype=ct), None, None, 2 * bins)
    basis = irfft_basis(frame_size, float(np.sqrt(frame_size)) if normalized else 1.0,
                        to_numpy(ct))
    frames = _shaped(b.op("MatMul", [spec, b.const(basis)], dtype=ct), None, None, frame_size)
    frames = _shaped(b.op("Mul", [frames, win], dtype=ct), None, None, frame_size)
    step = b.op("Reshape", [b.to_i64(x[3]), b.i64([1])], dtype=I64)
    count = _dim(b, frames, 1)
    starts = b.op("Mul", [b.op("Range", [b.i64(0), b.squeeze(count, [0]), b.i64(1)],
                               dtype=I64), step], dtype=I64)
    idx = b.op("Add", [b.unsqueeze(starts, [1]), b.i64(np.arange(frame_size)[None, :])],
               dtype=I64)
    flat = b.op("Reshape", [idx, b.i64([1, -1])], dtype=I64)  # [1, T*S]
    total = b.op("Add", [b.op("Mul", [b.op("Sub", [count, b.i64([1])], dtype=I64), step],
                              dtype=I64), b.i64([frame_size])], dtype=I64)
    y = _overlap_add(b, _dim(b, frames, 0),
                     b.op("Reshape", [frames, b.i64([0, -1])], dtype=ct), flat, total, ct)
    squared = b.op("Mul", [win, win], dtype=ct)
    tiled = b.op("Expand", [b.unsqueeze(squared, [0]),
                            b.op("Concat", [count, b.i64([frame_size])], {"axis": 0},
                                 dtype=I64)], dtype=ct)
    env = _overlap_add(b, b.i64([1]), b.op("Reshape", [tiled, b.i64([1, -1])], dtype=ct),
                       flat, total, ct)
    zero = b.const(np.zeros((), to_numpy(ct)))
    one = b.const(np.ones((), to_numpy(ct)))
    safe = b.op("Where", [b.op("Equal", [env, zero], dtype=DataType.BOOL), one, env], dtype=ct)
    y = _shaped(b.op("Div", [_shaped(y, None, None), _shaped(safe, 1, None)], dtype=ct),
                None, None)
    start = frame_size // 2 if center else 0
    default = b.op("Sub", [total, b.i64([frame_size])], dtype=I64) if center else total
    if len(x) > 4 and x[4] is not None:
        given = b.op("Reshape", [b.to_i64(x[4]), b.i64([1])], dtype=I64)
        length = _scalar_const(b, given)
        if length is not None:
            n = given if length >= 0 else default
        else:
            negative = b.op("Less", [given, b.i64([0])], dtype=DataType.BOOL)
            n = b.op("Where", [negative, default, given], dtype=I64)
    else:
        n = default
    end = b.op("Add", [n, b.i64([start])], dtype=I64)
    y = _shaped(b.op("Slice", [y, b.i64([start]), end, b.i64([1])], dtype=ct), None, None)
    short = b.op("Sub", [n, _dim(b, y, 1)], dtype=I64)
    pads = b.op("Concat", [b.i64([0, 0, 0]), short], {"axis": 0}, dtype=I64)
    y = _shaped(b.op("Pad", [y, pads], dtype=ct), None, None)
    if rank == 3:
        y = b.squeeze(y, [0])
    return b.cast(y, dt)


@importer("ISTFT", since=16)
def _istft(b: Builder, layer: Layer, x):
    if len(x) not in (4, 5):
        raise ModelError(f"{layer.where()}: ISTFT takes 4 or 5 inputs, got {len(x)}")
    dt = out_dtype(layer, x)
    center, normalized = layer.bool_attr("center"), layer.bool_attr("normalized")
    frame_size = _scalar_const(b, x[2])
    if frame_size is not None:
        if frame_size <= 0:
            raise ModelError(f"{layer.where()}: frame_size={frame_size} is not positive")
        y = _subgraph(b, layer, x, dt, frame_size, center, normalized)
        if y is not None:
            return y
    ins = [x[0], b.cast(x[1], dt)] + [b.to_i64(v) for v in x[2:]]
    return b.op("ISTFT", ins, {"center": int(center), "normalized": int(normalized)}, dtype=dt,
                domain=DOMAIN)
