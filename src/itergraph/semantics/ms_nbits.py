"""ONNX Runtime's ``MatMulNBits`` (domain ``com.microsoft``): a ``MatMul`` by a weight stored
as 4- or 8-bit codes in blocks along K, what ``onnxruntime.quantization``'s
``MatMulNBitsQuantizer`` (and every int4 LLM export for ONNX Runtime GenAI) writes; written
once over ``xp``.

Inputs ``(A, B, scales, zero_points?, g_idx?, bias?)``, attributes ``K``, ``N``, ``bits`` (4
or 8), ``block_size``: ``B`` is uint8 ``[N, k_blocks, block_size * bits / 8]`` with
``k_blocks = ceil(K / block_size)`` (4-bit codes two to a byte, the lower nibble first),
``scales`` ``[N * k_blocks]``, ``zero_points`` uint8 codes packed the same way per row of
``N`` (``[N * ceil(k_blocks * bits / 8)]``) or of ``scales``' type (``[N * k_blocks]``),
default ``2 ** (bits - 1)``. The weight is ``W[k, n] = (code - zero_point) * scale`` of
``k``'s block (codes past ``K`` are padding), and ``Y = A @ W (+ bias)``, in float32 as ONNX
Runtime computes it without ``accuracy_level`` (dequantize, then a float32 matrix product).
Refused with `UnsupportedError` naming the node: ``g_idx`` (act-order), other bit widths.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, UnsupportedError, where
from ..ir.attributes import attr


def _codes(xp, packed, bits: int, count: int):
    """The `count` codes along the last axis of uint8 `packed` as int32."""
    p = packed.astype(np.int32)
    if bits == 8:
        return p[..., :count]
    both = xp.stack([p & 15, p >> 4], axis=-1)
    return both.reshape(p.shape[:-1] + (-1,))[..., :count]


def weight(node, xp, b, scales, zero_points=None):
    """``W`` ``[K, N]`` in the scales' type."""
    k, n = int(attr(node, "K")), int(attr(node, "N"))
    bits, block = int(attr(node, "bits", 4)), int(attr(node, "block_size"))
    if bits not in (4, 8):
        raise UnsupportedError(f"{where(node)}: {bits}-bit weights (4 and 8 are supported)")
    blocks = -(-k // block)
    if tuple(b.shape) != (n, blocks, block * bits // 8):
        raise ModelError(f"{where(node)}: B of shape {tuple(b.shape)}, expected "
                         f"{(n, blocks, block * bits // 8)} for K={k}, N={n}, "
                         f"block_size={block}, bits={bits}")
    q = _codes(xp, b, bits, block)  # [N, blocks, block]
    s = scales.reshape(n, blocks, 1).astype(np.float32)
    if zero_points is None:
        z = np.float32(2 ** (bits - 1))
    elif np.dtype(zero_points.dtype) == np.uint8:
        z = _codes(xp, zero_points.reshape(n, -1), bits, blocks).reshape(n, blocks, 1) \
            .astype(np.float32)
    else:
        z = zero_points.reshape(n, blocks, 1).astype(np.float32)
    w = (q.astype(np.float32) - z) * s
    return w.reshape(n, blocks * block)[:, :k].T


def matmul_nbits(node, xp, a, b, scales, zero_points=None, g_idx=None, bias=None):
    if g_idx is not None:
        raise UnsupportedError(f"{where(node)}: g_idx (act-order quantization) is not "
                               "supported")
    w = weight(node, xp, b, scales, zero_points)
    wd = np.float32 if np.dtype(a.dtype).itemsize < 4 else a.dtype
    y = xp.matmul(a.astype(wd), w.astype(wd))
    if bias is not None:
        y = y + bias.astype(wd)
    return y.astype(a.dtype)
