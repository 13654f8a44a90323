"""ONNX ``LRN`` (local response normalisation across channels, axis 1) for NumPy and
``jax.numpy`` alike, shared by both backends::

    sq_sum[n, c] = sum(x[n, k] ** 2 for k in [c - (size - 1) // 2, c + ceil((size - 1) / 2)])
    y = x / (bias + alpha / size * sq_sum) ** beta

(``onnx.reference``'s LRN gets the window wrong; ONNX Runtime is the oracle.)
"""

from __future__ import annotations

from ...ir.attributes import attr, attr_or_default


def lrn_params(node) -> tuple[int, float, float, float]:
    """``(size, alpha, beta, bias)`` of an LRN node, with ONNX's defaults."""
    return (int(attr(node, "size")), float(attr_or_default(node, "alpha")),
            float(attr_or_default(node, "beta")), float(attr_or_default(node, "bias")))


def lrn(xp, x, size: int, alpha: float, beta: float, bias: float):
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    channels = x.shape[1]
    padded = xp.pad(xp.square(x), [(0, 0), (lo, hi)] + [(0, 0)] * (x.ndim - 2))
    total = xp.cumsum(padded, axis=1)
    total = xp.concatenate([xp.zeros_like(total[:, :1]), total], axis=1)
    window = total[:, size:size + channels] - total[:, :channels]
    return (x / (bias + alpha / size * window) ** beta).astype(x.dtype)
