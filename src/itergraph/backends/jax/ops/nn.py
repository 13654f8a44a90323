"""Neural-network rules: activations, Softmax/LogSoftmax, MatMul, Gemm, Einsum,
LayerNormalization.

Activations keep the input's floating type. Softmax before opset 13 flattens the input to 2-D
at `axis` (default 1); from 13 it normalizes along `axis` (default -1). Matrix products use
full float32 precision on every device, so results match NumPy's.
"""

from __future__ import annotations

import numpy as np

from ...common.lrn import lrn, lrn_params
from ..table import lowering
from ._util import astype, attr_or_default, attr_str, norm_axis, precision


def _act(fn):
    def rule(cx, x):
        return astype(cx, fn(cx, x), x.dtype)

    return rule


def _lax():
    from jax import lax

    return lax


def _alpha(cx):
    return float(attr_or_default(cx.node, "alpha"))


def _elu_core(xp, x, alpha):
    return xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0)))


def _softplus(xp, x):
    return xp.logaddexp(xp.zeros((), x.dtype), x)


_ACTS = {
    "Relu": (1, lambda cx, x: cx.xp.maximum(x, np.zeros((), x.dtype))),
    "Sigmoid": (1, lambda cx, x: _lax().logistic(x)),
    "Softsign": (1, lambda cx, x: x / (1 + cx.xp.abs(x))),
    "Softplus": (1, lambda cx, x: _softplus(cx.xp, x)),
    "LeakyRelu": (1, lambda cx, x: cx.xp.where(x >= 0, x, x * _alpha(cx))),
    "Elu": (1, lambda cx, x: _elu_core(cx.xp, x, _alpha(cx))),
    "Selu": (1, lambda cx, x: float(attr_or_default(cx.node, "gamma"))
             * _elu_core(cx.xp, x, _alpha(cx))),
    "Celu": (12, lambda cx, x: cx.xp.maximum(x, 0)
             + cx.xp.minimum(0, _alpha(cx) * cx.xp.expm1(x / _alpha(cx)))),
    "ThresholdedRelu": (10, lambda cx, x: cx.xp.where(x > _alpha(cx), x, 0)),
    "HardSigmoid": (1, lambda cx, x: cx.xp.clip(
        _alpha(cx) * x + float(attr_or_default(cx.node, "beta")), 0, 1)),
    "HardSwish": (14, lambda cx, x: x * cx.xp.clip(x / 6 + 0.5, 0, 1)),
    "Mish": (18, lambda cx, x: x * cx.xp.tanh(_softplus(cx.xp, x))),
    "Swish": (24, lambda cx, x: x * _lax().logistic(_alpha(cx) * x)),
}
for _op, (_since, _fn) in _ACTS.items():
    lowering(_op, since=_since)(_act(_fn))


@lowering("Gelu", since=20)
def _gelu(cx, x):
    xp = cx.xp
    if attr_str(cx.node, "approximate", "none") == "tanh":
        k = float(np.sqrt(2 / np.pi))
        y = 0.5 * x * (1 + xp.tanh(k * (x + 0.044715 * x ** 3)))
    else:
        y = 0.5 * x * (1 + _lax().erf(x / float(np.sqrt(2))))
    return astype(cx, y, x.dtype)


@lowering("LRN", since=1)
def _lrn(cx, x):
    return lrn(cx.xp, x, *lrn_params(cx.node))


@lowering("PRelu", since=1)
def _prelu(cx, x, slope):
    return astype(cx, cx.xp.where(x < 0, x * slope, x), x.dtype)


def _softmax(xp, x, axis):
    m = xp.max(x, axis=axis, keepdims=True)
    e = xp.exp(x - m)
    return e / xp.sum(e, axis=axis, keepdims=True)


def _log_softmax(xp, x, axis):
    s = x - xp.max(x, axis=axis, keepdims=True)
    return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))


def _softmax_rule(impl):
    """The opset 13 form (older nodes were rewritten at import: `ir.legacy_forms`)."""

    def rule(cx, x):
        return impl(cx.xp, x, norm_axis(cx, int(attr_or_default(cx.node, "axis")), x.ndim))

    return rule


lowering("Softmax", since=1)(_softmax_rule(_softmax))
lowering("LogSoftmax", since=1)(_softmax_rule(_log_softmax))


@lowering("Hardmax", since=1)
def _hardmax(cx, x):
    xp = cx.xp
    a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), x.ndim)
    idx = xp.argmax(x, axis=a)
    return astype(cx, xp.moveaxis(_one_hot(xp, idx, x.shape[a]), -1, a), x.dtype)


def _one_hot(xp, idx, n):
    return xp.asarray(idx)[..., None] == xp.arange(n)


@lowering("MatMul", since=1)
def _matmul(cx, a, b):
    return cx.xp.matmul(a, b, precision=precision())


@lowering("Gemm", since=1)
def _gemm(cx, a, b, c=None):
    xp = cx.xp
    node = cx.node
    alpha = float(attr_or_default(node, "alpha"))
    beta = float(attr_or_default(node, "beta"))
    a = xp.transpose(a) if attr_or_default(node, "transA") else a
    b = xp.transpose(b) if attr_or_default(node, "transB") else b
    y = xp.matmul(a, b, precision=precision())
    if alpha != 1.0:
        y = y * alpha
    if c is not None and beta != 0.0:
        y = y + (c * beta if beta != 1.0 else c)
    return astype(cx, y, a.dtype)


@lowering("Einsum", since=12)
def _einsum(cx, *xs):
    eq = attr_str(cx.node, "equation")
    return cx.xp.einsum(eq.replace(" ", ""), *xs, precision=precision())


@lowering("LayerNormalization", since=17)
def _layer_norm(cx, x, scale, bias=None):
    """Normalize over the axes from `axis` on; outputs Y (and Mean, InvStdDev if asked)."""
    xp = cx.xp
    node = cx.node
    a = norm_axis(cx, int(attr_or_default(node, "axis")), x.ndim)
    eps = float(attr_or_default(node, "epsilon"))
    stash = np.float32 if int(attr_or_default(node, "stash_type")) == 1 else x.dtype
    axes = tuple(range(a, x.ndim))
    xs = astype(cx, x, np.promote_types(x.dtype, stash))
    mean = xp.mean(xs, axis=axes, keepdims=True)
    d = xs - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    inv = 1 / xp.sqrt(var + eps)
    y = astype(cx, d * inv, x.dtype) * scale
    if bias is not None:
        y = y + bias
    outs = [astype(cx, y, x.dtype), astype(cx, mean, stash), astype(cx, inv, stash)]
    n = len(node.outputs)
    return outs[0] if n == 1 else tuple(outs[:n])
