"""OpenVINO ``Multinomial-13`` (domain ``org.openvinotoolkit``): class indices drawn from the
rows of `probs` [batch, classes].

Each row's cumulative sum (of ``exp(probs)`` with ``log_probs``), computed left to right in
the type of `probs`, is divided by its last element; sample ``j`` of row ``b`` takes the first
class whose normalised cumulative value is at least the uniform number ``u[b, j]``. Without
replacement, a row's samples are drawn in order and each chosen class is taken out: its
probability ``p`` is subtracted from the cumulative values from that class on and all are
divided by ``1 - p``.

The specification leaves the uniform numbers' generator open; OpenVINO's CPU plugin draws
them from the C++ standard library's ``mt19937`` seeded with ``std::seed_seq{global_seed,
op_seed}``, as ``float(word) / float(2**32 - 1)``, the same numbers at every run. This module
does the same (NumPy's MT19937 bit generator given the state that ``seed_seq`` makes), so
seeded outputs equal OpenVINO's bit for bit.
"""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)

_M32 = 0xFFFFFFFF
_MT_N = 624


def seed_seq(seeds: list[int], n: int = _MT_N) -> list[int]:
    """``std::seed_seq(seeds).generate`` of `n` 32-bit words (the C++ standard's algorithm)."""
    seeds = [s & _M32 for s in seeds]
    s = len(seeds)
    b = [0x8B8B8B8B] * n
    t = 11 if n >= 623 else 7 if n >= 68 else 5 if n >= 39 else 3 if n >= 7 else (n - 1) // 2
    p = (n - t) // 2
    q = p + t
    m = max(s + 1, n)

    def mix(x: int) -> int:
        return x ^ (x >> 27)

    for k in range(m):
        r1 = (1664525 * mix(b[k % n] ^ b[(k + p) % n] ^ b[(k - 1) % n])) & _M32
        extra = s if k == 0 else (k % n) + seeds[k - 1] if k <= s else k % n
        r2 = (r1 + extra) & _M32
        b[(k + p) % n] = (b[(k + p) % n] + r1) & _M32
        b[(k + q) % n] = (b[(k + q) % n] + r2) & _M32
        b[k % n] = r2
    for k in range(m, m + n):
        r3 = (1566083941 * mix((b[k % n] + b[(k + p) % n] + b[(k - 1) % n]) & _M32)) & _M32
        r4 = (r3 - (k % n)) & _M32
        b[(k + p) % n] ^= r3
        b[(k + q) % n] ^= r4
        b[k % n] = r4
    return b


def mt19937_words(seeds: list[int], count: int) -> np.ndarray:
    """The first `count` outputs (uint32) of ``mt19937`` seeded with ``seed_seq(seeds)``."""
    gen = np.random.MT19937()
    gen.state = {"bit_generator": "MT19937",
                 "state": {"key": np.asarray(seed_seq(seeds), np.uint32), "pos": _MT_N}}
    return gen.random_raw(count).astype(np.uint32)


def uniform_samples(count: int, dtype: np.dtype, global_seed: int, op_seed: int) -> np.ndarray:
    """The plugin's `count` numbers in [0, 1]: ``float(word) / float(2**32 - 1)`` rounded to
    `dtype`. Seeds both 0: seeded afresh from the operating system (a new draw every run)."""
    if global_seed == 0 and op_seed == 0:
        global_seed, op_seed = (int(x) for x in np.random.SeedSequence().generate_state(2))
    words = mt19937_words([global_seed, op_seed], count)
    return (words.astype(np.float32) / np.float32(4294967295.0)).astype(dtype)


def multinomial(probs: np.ndarray, num_samples: int, with_replacement: bool, log_probs: bool,
                global_seed: int, op_seed: int) -> np.ndarray:
    """Class indices [batch, num_samples] (int64) for `probs` [batch, classes]."""
    if probs.ndim != 2:
        raise ExecutionError(f"Multinomial: probs must be 2-D [batch, classes], has shape "
                             f"{list(probs.shape)}")
    if num_samples < 0:
        raise ExecutionError(f"Multinomial: num_samples is {num_samples}")
    batch, classes = probs.shape
    if not with_replacement and num_samples > classes:
        raise ExecutionError(f"Multinomial: {num_samples} samples without replacement from "
                             f"{classes} classes")
    dt = probs.dtype
    w = np.exp(probs) if log_probs else probs
    cdf = np.cumsum(w, axis=1, dtype=dt)
    tiny = np.finfo(dt).tiny if dt.kind == "f" else np.asarray(1, dt)
    top = np.maximum(cdf[:, -1:], np.asarray(tiny, dt))
    cdf = (cdf / top).astype(dt)
    u = uniform_samples(batch * num_samples, dt, global_seed, op_seed).reshape(batch,
                                                                               num_samples)
    out = np.zeros((batch, num_samples), np.int64)
    if with_replacement:
        for b in range(batch):
            out[b] = np.searchsorted(cdf[b], u[b], side="left")
        return np.minimum(out, classes - 1)
    one = np.asarray(1, dt)
    cols = np.arange(classes)
    for j in range(num_samples):
        hit = u[:, j:j + 1] <= cdf
        chosen = np.where(hit.any(axis=1), hit.argmax(axis=1), classes)
        out[:, j] = np.minimum(chosen, classes - 1)
        rows = np.nonzero(chosen < classes)[0]
        if not len(rows):
            continue
        c = chosen[rows]
        prev = np.where(c > 0, cdf[rows, np.maximum(c - 1, 0)], np.asarray(0, dt))
        p = (cdf[rows, c] - prev).astype(dt)
        sub = np.where(cols[None, :] >= c[:, None], p[:, None], np.asarray(0, dt)).astype(dt)
        cdf[rows] = ((cdf[rows] - sub).astype(dt) / (one - p)[:, None]).astype(dt)
    return out
