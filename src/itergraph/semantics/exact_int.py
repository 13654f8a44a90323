"""Exact integer products of quantized codes through float BLAS (NumPy).

``MatMulInteger``, ``ConvInteger`` and the contrib operators built on them sum products of
centered codes, ``sum_k (a_k - a_zp) (b_k - b_zp)``, in int32. NumPy has no integer BLAS, so
the sum runs as a float product; it is exact when every partial sum is an integer the float
type holds. With ``amax`` a bound of ``|a - a_zp|`` and ``L1`` the largest sum of
``|b - b_zp|`` over the summed axes of one output (a column of B, an output channel of W),
every partial sum, in whatever order and blocking BLAS adds the terms (fused multiply-adds
included), is at most ``amax * L1`` in magnitude. So:

- ``amax * L1 < 2**24``: one float32 product (half the memory traffic of float64, twice the
  SIMD width). For 8-bit codes ``amax <= 255``; real weights stay far below the limit
  (ddddocr's CRNN: ``255 * L1`` at most 0.23 * 2**24).
- else, A split into 4-bit halves, ``a' = 16 hi + lo`` (``lo = a' & 15``, ``hi = a' >> 4``,
  ``|hi| <= ceil(amax / 16)``): both halves in one float32 product, exact while
  ``max(15, |hi|) * L1 < 2**24``, then combined in int32.
- else one float64 product (exact below 2**53, far beyond where int32 sums wrap anyway).

`Operand` holds a constant B's centered float32 form and its ``L1``, made once, and for a
large constant B its narrow column blocks (`int_blocks`), which a matrix product by it runs
on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .int_blocks import IntBlocks

_EXACT32 = 1 << 24
RANGES = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127),  # codes per type
          np.dtype(np.uint16): (0, 65535), np.dtype(np.int16): (-32768, 32767)}


class Operand:
    """``b - zp`` (the B of a product) as float32, with ``l1``: the largest sum of
    ``|b - zp|`` over `k_axes` (the axes the product sums over)."""

    __slots__ = ("f32", "l1", "_f64", "blocks")

    def __init__(self, b, zp, k_axes: tuple[int, ...]):
        c = np.asarray(b).astype(np.int64)
        if zp is not None:
            c = c - np.asarray(zp).astype(np.int64)
        self.l1 = int(np.abs(c).sum(axis=k_axes).max()) if c.size else 0
        self.f32 = c.astype(np.float32)  # exact: centered 16-bit codes fit in 24 bits
        self._f64 = None
        #: `int_blocks.IntBlocks` of `f32`, which ``np.matmul`` by it then runs on (set by
        #: `ms_quant.Memo` for a large constant weight), or None
        self.blocks = None

    def keep_blocks(self) -> None:
        """Keep `f32` as narrow column blocks where that pays (`int_blocks`): for an
        operand multiplied again and again (a constant weight)."""
        if IntBlocks.fits(self.f32):
            self.blocks = IntBlocks(self.f32)

    def f64(self) -> np.ndarray:
        if self._f64 is None:
            self._f64 = self.f32.astype(np.float64)
        return self._f64


def a_bound(a, zp) -> float:
    """The largest ``|a - zp|`` `a`'s element type allows (inf for other types)."""
    rng = RANGES.get(np.dtype(a.dtype))
    if rng is None:
        return float("inf")
    z = np.asarray(0 if zp is None else zp)
    if z.size == 0:
        return float(max(-rng[0], rng[1]))
    return float(max(rng[1] - int(z.min()), int(z.max()) - rng[0]))


def float32_exact(amax: float, b: Operand) -> bool:
    """Whether products of A codes within ``+-amax`` and `b` sum exactly in float32."""
    return amax * b.l1 < _EXACT32


def float_product(fn: Callable, a, zp, b: Operand, amax: float | None = None):
    """``(fn(a - zp, b - b_zp), bound)`` as float32 values (exact integers, each at most
    `bound` in magnitude) where one float32 product is exact (the first case of the module
    docstring); else None. `amax` defaults to `a_bound` of `a` and `zp`."""
    amax = a_bound(a, zp) if amax is None else amax
    if not float32_exact(amax, b):
        return None
    # the codes converted and centered in one pass (exact: integers below 2**17)
    ac = a.astype(np.float32) if zp is None else \
        np.subtract(a, np.asarray(zp, dtype=np.float32), dtype=np.float32)
    return _f32_product(fn, ac, b), amax * b.l1


def _f32_product(fn: Callable, a, b: Operand):
    """``fn(a, b.f32)``; a matrix product on `b`'s blocks where it keeps them."""
    if fn is np.matmul and b.blocks is not None:
        return b.blocks.matmul(a)
    return fn(a, b.f32)


def product(fn: Callable, a, zp, b: Operand):
    """``fn(a - zp, b - b_zp)`` as int32, computed exactly (see the module docstring).

    `fn` is the bilinear map (a matrix product, a convolution); it must also accept A with
    one extra leading axis of length 2 (the two halves of a split A) and keep that axis
    first in its result."""
    amax = a_bound(a, zp)
    exact = float_product(fn, a, zp, b, amax)
    if exact is not None:
        return exact[0].astype(np.int32)
    ac = a.astype(np.int32)
    if zp is not None:
        ac -= np.asarray(zp).astype(np.int32)
    if max(15.0, np.ceil(amax / 16)) * b.l1 < _EXACT32:
        halves = np.stack([ac & 15, ac >> 4]).astype(np.float32)
        y = _f32_product(fn, halves, b)
        return y[0].astype(np.int32) + (y[1].astype(np.int32) << 4)
    return fn(ac.astype(np.float64), b.f64()).astype(np.int64).astype(np.int32)
