"""OpenVINO ``ISTFT-16`` (domain ``org.openvinotoolkit``): the inverse short-time Fourier
transform of `data` [(B,) F, T, 2] (F = frame_size // 2 + 1 one-sided bins, T frames, real and
imaginary parts) -> a real signal [(B,) L].

Each frame is the real inverse DFT of length ``frame_size`` of its bins (the imaginary parts of
the zero and Nyquist bins are ignored), multiplied by the window (zero-padded on both sides to
``frame_size``, the odd zero at the end); frame ``t`` is added at ``t * frame_step``. The sum
is divided by the overlap-added squared window where that is not 0 (0 where it is), and
multiplied by ``sqrt(frame_size)`` when ``normalized``. ``center`` drops ``frame_size // 2``
samples at the start. The length is ``signal_length`` when given (>= 0, as the spec says: 0
gives an empty signal): shorter cuts the end, longer pads zeros at the end; a negative one
means the default, as in OpenVINO's reference implementation (its CPU plugin refuses it). By
default ``(T - 1) * frame_step`` with ``center``,
``(T - 1) * frame_step + frame_size`` without. Computed in at least float32 and returned in
`data`'s type.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, where
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def scalars(node, frame_size, frame_step, signal_length=None) -> tuple[int, int, int | None]:
    """The run-time ``frame_size``, ``frame_step`` (both positive) and ``signal_length``
    (``None`` when absent or negative) of an ISTFT `node`."""
    fs = int(np.asarray(frame_size).reshape(-1)[0])
    step = int(np.asarray(frame_step).reshape(-1)[0])
    if fs <= 0 or step <= 0:
        raise InputError(f"{where(node)}: frame_size={fs} and frame_step={step} must be "
                         "positive")
    length = None if signal_length is None else int(np.asarray(signal_length).reshape(-1)[0])
    return fs, step, (length if length is not None and length >= 0 else None)


def padded_window(xp, window, frame_size: int):
    """`window` zero-padded on both sides to `frame_size` (the odd zero at the end)."""
    n = int(window.shape[0])
    if n > frame_size:
        raise InputError(f"ISTFT: the window has {n} values, more than frame_size={frame_size}")
    left = (frame_size - n) // 2
    return xp.pad(window, (left, frame_size - n - left))


def _overlap_add(xp, frames, step: int, total: int):
    """`frames` [B, T, S] added at ``t * step`` into [B, total]."""
    b, t, s = frames.shape
    idx = (np.arange(t)[:, None] * step + np.arange(s)[None, :]).reshape(-1)
    flat = frames.reshape(b, t * s)
    out = xp.zeros((b, total), frames.dtype)
    if hasattr(out, "at"):
        return out.at[:, idx].add(flat)
    np.add.at(out, (slice(None), idx), flat)
    return out


def istft(xp, data, window, frame_size: int, frame_step: int, length: int | None,
          center: bool, normalized: bool):
    dt = data.dtype
    ct = xp.float32 if dt.itemsize < 4 else dt
    batched = data.ndim == 4
    d = data.astype(ct) if batched else data.astype(ct)[None]
    frames_n = int(d.shape[2])
    if int(d.shape[1]) != frame_size // 2 + 1:
        raise InputError(f"ISTFT: {d.shape[1]} frequency bins, frame_size={frame_size} needs "
                         f"{frame_size // 2 + 1}")
    spec = d[..., 0] + 1j * d[..., 1]  # [B, F, T]
    frames = xp.fft.irfft(spec, n=frame_size, axis=1).astype(ct)  # [B, S, T]
    win = padded_window(xp, window.astype(ct), frame_size)
    frames = xp.swapaxes(frames, 1, 2) * win  # [B, T, S]
    total = (frames_n - 1) * frame_step + frame_size
    y = _overlap_add(xp, frames, frame_step, total)
    env = _overlap_add(xp, xp.broadcast_to(win * win, (1, frames_n, frame_size)), frame_step,
                       total)
    if normalized:
        y = y * np.float32(np.sqrt(frame_size)).astype(y.dtype)
    nonzero = env != 0
    y = xp.where(nonzero, y / xp.where(nonzero, env, 1), 0)
    start = frame_size // 2 if center else 0
    default = total - frame_size if center else total
    n = length if length is not None and length >= 0 else default
    y = y[:, start:start + n]
    if y.shape[1] < n:
        y = xp.pad(y, ((0, 0), (0, n - y.shape[1])))
    y = y.astype(dt)
    return y if batched else y[0]
