"""A large constant operand of an exact float32 product, kept as narrow integers in column
blocks (NumPy): what `exact_int` multiplies a constant B (`ms_quant.Memo`) by, where it
`fits`, in place of one ``np.matmul``.

`exact_int` computes ``(a - a_zp) @ (b - b_zp)`` as one float32 matrix product where every
partial sum is an integer below ``2**24``. For a large constant B with few rows of A (a
recogniser's classifier: ddddocr's ``[20, 1024] @ [1024, 8210]``, 33 MB of float32) that
product streams B from memory once per call. Its centered codes fit in int8 (or int16): one
byte each instead of four. Here B is kept as blocks of columns (about `BLOCK_ELEMENTS`
each), and each block is converted into one float32 buffer that stays in the cache and
multiplied there: the same exact integers in every product (any order of summation gives
them), so the result is bitwise that of the one product, measured 10-35% faster for 2 to 64
rows of A (ddddocr's classifier and its LSTM's input products; any ``MatMulInteger``-based
operator with a constant B). One row (a matrix-vector product streams B well) and many rows
(the product's own work dominates) run the float32 product as it is.
"""

from __future__ import annotations

import numpy as np

BLOCK_ELEMENTS = 1 << 18  # elements of a block (its float32 buffer: 1 MiB)
MIN_ELEMENTS = 1 << 20  # smaller operands stay in the caches as float32 anyway
MIN_K = 128  # rows of B at least: shorter blocks measured no faster than the one product
ROWS = (2, 128)  # the rows of A (all axes but the last) the blocks are used for


class IntBlocks:
    """`f32` (``[K, N]``: integers, as `exact_int.Operand.f32` holds them) as column blocks
    of int8, or int16 where int8 does not hold them; `matmul(a)` is ``a @ f32``."""

    __slots__ = ("source", "blocks", "k", "n", "cols")

    def __init__(self, f32: np.ndarray):
        self.source = f32
        self.k, self.n = f32.shape
        self.cols = _columns(self.k)
        lo, hi = (float(f32.min()), float(f32.max())) if f32.size else (0.0, 0.0)
        dt = np.int8 if -128 <= lo and hi <= 127 else np.int16
        self.blocks = [(j, np.ascontiguousarray(f32[:, j:j + self.cols], dtype=dt))
                       for j in range(0, self.n, self.cols)]

    @staticmethod
    def fits(f32: np.ndarray) -> bool:
        """Is `f32` a 2-D operand large enough to gain, whose integers fit in 16 bits?"""
        return (f32.ndim == 2 and f32.size >= MIN_ELEMENTS and f32.shape[0] >= MIN_K
                and f32.shape[1] > _columns(f32.shape[0])
                and float(np.abs(f32).max()) <= 32767)

    def matmul(self, a: np.ndarray) -> np.ndarray:
        """``a @ source`` (`a` float32 ``[..., M, K]``), block by block (see `ROWS`)."""
        if not ROWS[0] <= a.size // max(self.k, 1) <= ROWS[1]:
            return np.matmul(a, self.source)
        y = np.empty((*a.shape[:-1], self.n), np.float32)
        buf = np.empty((self.k, self.cols), np.float32)
        for j, blk in self.blocks:
            w = buf[:, :blk.shape[1]]
            np.copyto(w, blk)
            np.matmul(a, w, out=y[..., j:j + blk.shape[1]])
        return y


def _columns(k: int) -> int:
    """Columns of a block of `k` rows: about `BLOCK_ELEMENTS`, a multiple of 16."""
    return max(16, BLOCK_ELEMENTS // max(k, 1) // 16 * 16)

