"""OpenVINO ``RandomUniform-8`` with ``alignment="pytorch"``: the 32-bit Mersenne Twister
(MT19937) as OpenVINO's specification defines it, in NumPy, bit for bit.

The state is ``state[0] = global_seed & 0xffffffff``, ``state[i] = 1812433253 * (state[i-1] ^
(state[i-1] >> 30)) + i`` (32-bit); the words are MT19937's tempered outputs from that state
(``op_seed`` is not used), the same at every run. Words to values: one word per element,
two for f64 and for i64 when ``min`` or ``max`` exceeds 2**32 - 1 (the first word the high
part). Floats take the word's low ``digits`` bits (24 for f32, 11 for f16, 8 for bf16, 53 for
f64) times ``2**-digits``, then ``x * (max - min) + min``, rounded after each step in float32
(float64 for f64) and converted to the output type. Integers are ``word % (max - min) +
min``.
"""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError

_N = 624
_DIGITS = {"float32": 24, "float16": 11, "bfloat16": 8}


def mt_state(seed: int) -> np.ndarray:
    """The initial 624-word state of `seed` (its low 32 bits)."""
    st = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        p = st[-1]
        st.append((1812433253 * (p ^ (p >> 30)) + i) & 0xFFFFFFFF)
    return np.asarray(st, np.uint32)


def mt_words(seed: int, count: int) -> np.ndarray:
    """The first `count` tempered MT19937 words (uint32) from `mt_state(seed)`."""
    gen = np.random.MT19937()
    gen.state = {"bit_generator": "MT19937", "state": {"key": mt_state(seed), "pos": _N}}
    return gen.random_raw(count).astype(np.uint32)


def random_uniform_mt(dims: tuple[int, ...], lo, hi, dtype: np.dtype, seed: int) -> np.ndarray:
    """The values of a RandomUniform of shape `dims` and type `dtype`, PyTorch alignment."""
    dtype = np.dtype(dtype)
    count = int(np.prod(dims, dtype=np.int64))
    lo, hi = np.asarray(lo).reshape(-1)[:1], np.asarray(hi).reshape(-1)[:1]
    if lo.size != 1 or hi.size != 1:
        raise ExecutionError("RandomUniform: minval and maxval must hold one element")
    lo, hi = lo.astype(dtype)[0], hi.astype(dtype)[0]
    if dtype.name in _DIGITS:
        d = _DIGITS[dtype.name]
        w = mt_words(seed, count)
        x = (w & np.uint32((1 << d) - 1)).astype(np.float32) * np.float32(2.0 ** -d)
        rng = np.float32(hi.astype(np.float32) - lo.astype(np.float32))
        out = (x * rng + np.float32(lo)).astype(dtype)
    elif dtype == np.float64:
        w = mt_words(seed, 2 * count).reshape(-1, 2).astype(np.uint64)
        wide = ((w[:, 0] << np.uint64(32)) | w[:, 1]) & np.uint64((1 << 53) - 1)
        out = wide.astype(np.float64) * 2.0 ** -53 * (hi - lo) + lo
    elif dtype.kind == "i" and dtype.itemsize in (4, 8):
        bits = 8 * dtype.itemsize
        rng = (int(hi) - int(lo)) % 2**bits
        if rng == 0:
            raise ExecutionError("RandomUniform: maxval must be greater than minval")
        if bits == 64 and max(int(lo), int(hi)) > 0xFFFFFFFF:
            w = mt_words(seed, 2 * count).reshape(-1, 2).astype(np.uint64)
            x = (w[:, 0] << np.uint64(32)) | w[:, 1]
        else:
            x = mt_words(seed, count).astype(np.uint64)
        u = np.uint64 if bits == 64 else np.uint32
        r = (x % np.uint64(rng)).astype(u) + u(int(lo) % 2**bits)
        out = r.view(dtype)
    else:
        raise ExecutionError(f"RandomUniform: output type {dtype} is not one of "
                             "f16, bf16, f32, f64, i32, i64")
    return np.asarray(out, dtype=dtype).reshape(dims)
