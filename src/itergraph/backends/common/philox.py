"""OpenVINO ``RandomUniform-8`` (domain ``org.openvinotoolkit``), alignment ``tensorflow``:
Philox4x32-10 as OpenVINO's specification defines it, in NumPy, bit for bit.

The generator: ``key = global_seed`` and ``counter = op_seed`` (uint64, each split into its low
word R and high word L). Block ``n`` (uint64, split likewise) is ten rounds of::

    n'       = (mulhi(R_counter, 0xCD9E8D57) ^ L_n ^ R_key,       mullo(R_counter, 0xCD9E8D57))
    counter' = (mulhi(R_n,       0xD2511F53) ^ L_counter ^ L_key, mullo(R_n,       0xD2511F53))

with the key raised by ``(0x9E3779B9, 0xBB67AE85)`` between rounds; the four words
``R_n, L_n, R_counter, L_counter`` are block ``n``'s output. Block ``n`` of a run is
``n0 + n`` (a carry into ``counter``), where ``(n0, counter)`` is the node's state: ``(0,
op_seed)`` at the first run, then ``n0`` grows by ``256 * element count`` per run (a wrap
adds one to ``counter``), as OpenVINO's CPU plugin does between ``infer`` calls.

Words to values: 32-bit types use one word per element, f64 and i64 two (the first the high
part). Floats put the low 23 (f32), 10 (f16), 7 (bf16) or 52 (f64) bits into the mantissa of
a number in [1, 2) and subtract 1; the result ``x * (max - min) + min`` is rounded once for
f32/f16/bf16 (a fused multiply-add, as the CPU plugin computes it) and in two steps for f64.
Integers are ``word % (max - min) + min`` in unsigned arithmetic of the type's width.
"""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)

_MUL_N = np.uint64(0xD2511F53)
_MUL_C = np.uint64(0xCD9E8D57)
_KEY_A = 0x9E3779B9
_KEY_B = 0xBB67AE85
_LO = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)
SKIP = 256  # blocks OpenVINO skips per generated element between runs

# float output type -> (random mantissa bits, unsigned type of the same width)
FLOATS = {"float32": (23, np.uint32), "float16": (10, np.uint16), "bfloat16": (7, np.uint16)}


def philox_blocks(key: int, counter: int, n0: int, count: int) -> np.ndarray:
    """The 4 uint32 words of blocks ``n0 .. n0+count-1``, flattened in block order."""
    n = np.uint64(n0 % 2**64) + np.arange(count, dtype=np.uint64)
    wrapped = n < np.uint64(n0 % 2**64)  # n overflowed: the carry goes into the counter
    c = np.uint64(counter % 2**64) + wrapped.astype(np.uint64)
    n_lo, n_hi = (n & _LO).astype(np.uint32), (n >> _32).astype(np.uint32)
    c_lo, c_hi = (c & _LO).astype(np.uint32), (c >> _32).astype(np.uint32)
    k_lo, k_hi = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p_n = _MUL_N * n_lo.astype(np.uint64)
        p_c = _MUL_C * c_lo.astype(np.uint64)
        n_lo, n_hi, c_lo, c_hi = (
            (p_c >> _32).astype(np.uint32) ^ n_hi ^ np.uint32(k_lo),
            (p_c & _LO).astype(np.uint32),
            (p_n >> _32).astype(np.uint32) ^ c_hi ^ np.uint32(k_hi),
            (p_n & _LO).astype(np.uint32),
        )
        k_lo, k_hi = (k_lo + _KEY_A) & 0xFFFFFFFF, (k_hi + _KEY_B) & 0xFFFFFFFF
    return np.stack([n_lo, n_hi, c_lo, c_hi], axis=-1).reshape(-1)


def round_fused(x: np.ndarray, scale, offset, dtype: np.dtype, mant_bits: int) -> np.ndarray:
    """``x * scale + offset`` rounded once to `dtype` (a float of `mant_bits` stored mantissa
    bits, at most 23): the product is exact in float64; a sum that lands exactly halfway
    between two `dtype` numbers is moved toward the exact value so the final rounding is right.
    """
    p = x.astype(np.float64) * np.float64(scale)
    c = np.float64(offset)
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)  # s + err == p + c exactly (TwoSum)
    low = np.uint64(52 - mant_bits)
    bits = s.view(np.uint64) & ((np.uint64(1) << low) - np.uint64(1))
    tie = (bits == (np.uint64(1) << (low - np.uint64(1)))) & (err != 0)
    if tie.any():
        s = np.where(tie, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(dtype)


def _scalar(v: np.ndarray, what: str, dtype: np.dtype):
    v = np.asarray(v)
    if v.size != 1:
        raise ExecutionError(f"RandomUniform: {what} must hold one element, has {v.size}")
    return v.reshape(()).astype(dtype)


def random_uniform(dims: tuple[int, ...], lo, hi, dtype: np.dtype, key: int, counter: int,
                   n0: int) -> np.ndarray:
    """The values of one RandomUniform run of shape `dims` and type `dtype` from state
    ``(n0, counter)``."""
    dtype = np.dtype(dtype)
    count = int(np.prod(dims, dtype=np.int64))
    lo, hi = _scalar(lo, "minval", dtype), _scalar(hi, "maxval", dtype)
    per = 2 if dtype.itemsize == 8 else 4
    words = philox_blocks(key, counter, n0, -(-count // per))
    if dtype.name in FLOATS:
        mant, view = FLOATS[dtype.name]
        bias = {23: 127 << 23, 10: 15 << 10, 7: 127 << 7}[mant]
        one = ((words[:count] & ((1 << mant) - 1)) | bias).astype(view)
        x = one.view(dtype).astype(np.float64) - 1.0  # exact: [0, 1) on the type's grid
        rng = (hi - lo).astype(dtype)  # rounded to the type, as the plugin stores it
        out = round_fused(x, rng, lo, dtype, mant)
    elif dtype == np.float64:
        pair = words.reshape(-1, 2)[:count].astype(np.uint64)
        mant = ((pair[:, 0] & np.uint64(0xFFFFF)) << _32) | pair[:, 1]
        x = (mant | np.uint64(1023 << 52)).view(np.float64) - 1.0
        out = x * (hi - lo) + lo
    elif dtype == np.int32:
        rng = np.uint32((int(hi) - int(lo)) % 2**32)
        if rng == 0:
            raise ExecutionError("RandomUniform: maxval must be greater than minval")
        out = (words[:count] % rng + np.uint32(int(lo) % 2**32)).view(np.int32)
    elif dtype == np.int64:
        pair = words.reshape(-1, 2)[:count].astype(np.uint64)
        rng = np.uint64((int(hi) - int(lo)) % 2**64)
        if rng == 0:
            raise ExecutionError("RandomUniform: maxval must be greater than minval")
        wide = (pair[:, 0] << _32) | pair[:, 1]
        out = (wide % rng + np.uint64(int(lo) % 2**64)).view(np.int64)
    else:
        raise ExecutionError(f"RandomUniform: output type {dtype} is not one of "
                             "f16, bf16, f32, f64, i32, i64")
    return np.asarray(out, dtype=dtype).reshape(dims)


def next_state(n0: int, counter: int, count: int) -> tuple[int, int]:
    """The state after a run of `count` elements."""
    n = n0 + SKIP * count
    return n % 2**64, (counter + (n >> 64)) % 2**64
