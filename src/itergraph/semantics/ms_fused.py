"""ONNX Runtime's fused float operators of the ``com.microsoft`` domain (what its graph
optimizer writes into saved optimized models), for NumPy and ``jax.numpy`` alike:

- ``FusedMatMul(A, B)``: ``alpha * op(A) @ op(B)``. For ``A`` of rank r >= 3,
  ``transBatchA`` moves its first axis behind the batch axes (``perm [1, .., r-2, 0, r-1]``,
  the axis that becomes the row axis) and ``transA`` then swaps the last two; likewise for B.
  Rank-1 operands are promoted as in ``MatMul``.
- ``FusedGemm(A, B, C)``: ``act(alpha * A' @ B' + beta * C)`` with ``activation`` and its
  ``activation_alpha``/``activation_beta``/``activation_gamma``.
- ``FusedConv(X, W, B, Z)``: ``act(Conv(X, W, B) + Z)`` with ``activation`` and
  ``activation_params`` (LeakyRelu alpha; Clip min, max; HardSigmoid alpha, beta).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import UnsupportedError, where
from ..ir.attributes import attr, attr_floats, attr_str
from ..ir.graph import MICROSOFT_DOMAIN

DOMAIN = MICROSOFT_DOMAIN


def _act_table(xp, a, b, g) -> dict[str, Callable]:
    return {
        "Relu": lambda v: xp.maximum(v, 0),
        "LeakyRelu": lambda v: xp.where(v >= 0, v, v * a),
        "Tanh": lambda v: xp.tanh(v),
        "Sigmoid": lambda v: 1 / (1 + xp.exp(-v)),
        "HardSigmoid": lambda v: xp.clip(v * a + b, 0, 1),
        "Clip": lambda v: xp.clip(v, a, b),
        "Elu": lambda v: xp.where(v >= 0, v, a * (xp.exp(v) - 1)),
        "Selu": lambda v: g * xp.where(v > 0, v, a * (xp.exp(v) - 1)),
        "ThresholdedRelu": lambda v: xp.where(v > a, v, 0),
        "Softplus": lambda v: xp.log1p(xp.exp(-xp.abs(v))) + xp.maximum(v, 0),
        "Softsign": lambda v: v / (1 + xp.abs(v)),
        "ScaledTanh": lambda v: a * xp.tanh(b * v),
    }


_DEFAULTS = {"LeakyRelu": (0.01, 0.0, 0.0), "HardSigmoid": (0.2, 0.5, 0.0),
             "Elu": (1.0, 0.0, 0.0), "Selu": (1.67326319217681884765625, 0.0,
                                              1.05070102214813232421875),
             "ThresholdedRelu": (1.0, 0.0, 0.0), "ScaledTanh": (1.0, 1.0, 0.0),
             "Clip": (float(np.finfo(np.float32).min), float(np.finfo(np.float32).max), 0.0)}


def activation(node, xp, *, conv: bool) -> Callable | None:
    """The node's fused activation as a function of an `xp` array (None: none)."""
    name = attr_str(node, "activation")
    if not name:
        return None
    a, b, g = _DEFAULTS.get(name, (0.0, 0.0, 0.0))
    if conv:
        params = attr_floats(node, "activation_params") or []
        if name == "Clip" and len(params) >= 2 or name == "HardSigmoid" and len(params) >= 2:
            a, b = params[0], params[1]
        elif name == "LeakyRelu" and params:
            a = params[0]
        allowed = ("Relu", "LeakyRelu", "Tanh", "Sigmoid", "HardSigmoid", "Clip")
    else:
        a = float(attr(node, "activation_alpha", a))
        b = float(attr(node, "activation_beta", b))
        g = float(attr(node, "activation_gamma", g))
        allowed = tuple(k for k in _act_table(xp, a, b, g) if k != "Clip")
    table = _act_table(xp, np.float32(a), np.float32(b), np.float32(g))
    if name not in allowed:
        raise UnsupportedError(f"{where(node)}: activation '{name}' is not supported "
                               f"(one of {', '.join(allowed)})")
    return table[name]


def _op(xp, x, trans: bool, trans_batch: bool):
    if x.ndim >= 3 and trans_batch:
        r = x.ndim
        x = xp.transpose(x, tuple(range(1, r - 1)) + (0, r - 1))
    if trans and x.ndim >= 2:
        x = xp.swapaxes(x, -1, -2)
    return x


def fused_matmul(node, xp, a, b, matmul=None):
    """``FusedMatMul``: ``alpha * op(A) @ op(B)`` (`matmul` in place of ``xp.matmul``)."""
    alpha = float(attr(node, "alpha", 1.0))
    a = _op(xp, a, bool(attr(node, "transA", 0)), bool(attr(node, "transBatchA", 0)))
    b = _op(xp, b, bool(attr(node, "transB", 0)), bool(attr(node, "transBatchB", 0)))
    y = (matmul or xp.matmul)(a, b)
    if alpha != 1.0:
        y = y * np.asarray(alpha, y.dtype)
    return y.astype(a.dtype)
