"""Neural-network kernels: activations, Softmax/LogSoftmax, MatMul, Gemm, Identity, Dropout.

Activations keep the input's floating type (Python-float constants do not promote under
NumPy's scalar rules). Softmax before opset 13 flattens the input to 2-D at `axis` (default
1) and normalizes each row; from opset 13 it normalizes along `axis` (default -1).
"""

from __future__ import annotations

import math

import numpy as np
from numpy import asarray, ndarray

from ....ir.attributes import attr, attr_or_default, attr_str
from ...common.lrn import lrn, lrn_params
from . import kernel
from .elementwise import erf

# ----------------------------------------------------------------------------- activations


def _act(make):
    """Register helper: `make(node)` returns ``fn(x)``; the result is wrapped and type-kept."""

    def factory(node, ctx):
        f = make(node)

        def fn(x):
            r = f(x)
            if r.__class__ is not ndarray:
                r = asarray(r)
            return r if r.dtype == x.dtype else r.astype(x.dtype)

        return fn

    return factory


def _sigmoid_generic(x):
    """Overflow-free logistic function for any floating type."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _expit_impl():
    try:
        from scipy.special import expit  # one vectorized call: fastest on small arrays

        return expit
    except ImportError:  # pragma: no cover - scipy is optional
        return None


_expit = _expit_impl()
_EXPIT_MAX_SIZE = 768  # above this, NumPy's SIMD loops beat scipy's scalar one
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def sigmoid(x):
    """Logistic function ``1 / (1 + exp(-x))``, overflow-free.

    float32 and float64 arrays of up to `_EXPIT_MAX_SIZE` elements use scipy's ``expit``
    when scipy is installed (within a few ulp). Larger float32 arrays use
    ``0.5 * tanh(0.5 x) + 0.5`` computed in place: four SIMD passes, absolute error within
    one ulp of 1.0 (so outputs below about 1e-5 lose relative precision, as ONNX Runtime's
    own approximation does). Everything else uses the branch-free ``where`` formulation.
    """
    dt = x.dtype
    if dt is _F32 or dt == _F32:
        if _expit is not None and x.size <= _EXPIT_MAX_SIZE:
            return _expit(x)
        r = np.multiply(x, np.float32(0.5))
        if r.__class__ is not np.ndarray:  # a 0-d input gives a NumPy scalar
            r = np.asarray(r)
        np.tanh(r, out=r)
        r *= np.float32(0.5)
        r += np.float32(0.5)
        return r
    if dt == _F64 and _expit is not None and x.size <= _EXPIT_MAX_SIZE:
        return _expit(x)
    return _sigmoid_generic(x)


def softplus(x):
    return np.logaddexp(0, x).astype(x.dtype, copy=False)


kernel("Relu", since=1)(_act(lambda n: lambda x: np.maximum(x, 0)))


@kernel("Sigmoid", since=1)
def _sigmoid(node, ctx):
    generic = _act(lambda n: sigmoid)(node, ctx)
    expit = _expit

    def fn(x):
        if expit is not None and x.size <= _EXPIT_MAX_SIZE and x.dtype.char in "fd":
            r = expit(x)  # keeps the type
            return r if r.__class__ is ndarray else asarray(r)
        return generic(x)

    return fn


kernel("Softsign", since=1)(_act(lambda n: lambda x: x / (1 + np.abs(x))))
kernel("Softplus", since=1)(_act(lambda n: softplus))


@kernel("LeakyRelu", since=1)
def _leaky_relu(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    return _act(lambda n: lambda x: np.where(x >= 0, x, x * alpha))(node, ctx)


@kernel("Elu", since=1)
def _elu(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    return _act(lambda n: lambda x: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))))(
        node, ctx
    )


@kernel("Selu", since=1)
def _selu(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    gamma = float(attr_or_default(node, "gamma"))
    return _act(
        lambda n: lambda x: gamma * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))
    )(node, ctx)


@kernel("Celu", since=12)
def _celu(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    return _act(
        lambda n: lambda x: np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(x / alpha))
    )(node, ctx)


@kernel("ThresholdedRelu", since=10)
def _thresholded_relu(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    return _act(lambda n: lambda x: np.where(x > alpha, x, 0))(node, ctx)


def _plus_clip01(t, beta):
    """``clip(t + beta, 0, 1)``, in place when `t` is an array (a fresh one: the caller's):
    the same operations as the plain expression, with one allocation where it makes three,
    which for large activations costs more than the arithmetic."""
    if t.__class__ is not ndarray:
        return np.clip(t + beta, 0, 1)
    t += beta
    return t.clip(0, 1, out=t)


def _hard_swish_value(x):
    """``x * clip(x / 6 + 0.5, 0, 1)`` (`_plus_clip01`, then the product in place)."""
    t = _plus_clip01(x / 6, 0.5)
    return np.multiply(x, t, out=t) if t.__class__ is ndarray else x * t


@kernel("HardSigmoid", since=1)
def _hard_sigmoid(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    beta = float(attr_or_default(node, "beta"))
    return _act(lambda n: lambda x: _plus_clip01(alpha * x, beta))(node, ctx)


@kernel("HardSwish", since=14)
def _hard_swish(node, ctx):
    return _act(lambda n: _hard_swish_value)(node, ctx)


@kernel("Swish", since=24)
def _swish(node, ctx):
    alpha = float(attr_or_default(node, "alpha"))
    return _act(lambda n: lambda x: x * sigmoid(alpha * x))(node, ctx)


@kernel("Mish", since=18)
def _mish(node, ctx):
    return _act(lambda n: lambda x: x * np.tanh(softplus(x)))(node, ctx)


@kernel("Gelu", since=20)
def _gelu(node, ctx):
    approximate = attr_str(node, "approximate", "none")
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        return _act(lambda n: lambda x: 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x**3))))(
            node, ctx
        )
    r2 = np.sqrt(2)
    return _act(lambda n: lambda x: 0.5 * x * (1 + erf(x / r2)))(node, ctx)


@kernel("PRelu", since=1)
def _prelu(node, ctx):
    """PRelu: ``slope * x`` where x < 0; slope broadcasts unidirectionally to x (an older
    node's per-channel slope was aligned at import: `ir.legacy_forms`)."""

    def fn(x, slope):
        r = np.where(x < 0, x * slope, x)
        return asarray(r if r.dtype == x.dtype else r.astype(x.dtype))

    return fn


# ----------------------------------------------------------------------------- softmax


def _softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _softmax_factory(impl):
    """The opset 13 form, over ``axis`` alone (older nodes were rewritten at import into
    ``Flatten`` -> this -> ``Reshape``: `ir.legacy_forms`)."""

    def factory(node, ctx):
        axis = int(attr_or_default(node, "axis"))

        def fn(x):
            return asarray(impl(x, axis))

        return fn

    return factory


kernel("Softmax", since=1)(_softmax_factory(_softmax))
kernel("LogSoftmax", since=1)(_softmax_factory(_log_softmax))


# ----------------------------------------------------------------------------- linear algebra


@kernel("MatMul", since=1)
def _matmul(node, ctx):
    """MatMul: ``np.matmul``; float32/float64 with a 2-D right-hand side go to one BLAS call
    (``np.dot``; a stacked left-hand side is flattened to 2-D first: one large product
    instead of one per matrix)."""
    mm = np.matmul
    dot = np.dot
    prod = math.prod

    def fn(a, b):
        if b.ndim == 2 and a.ndim >= 2 and a.dtype.char in "fd" and b.dtype == a.dtype:
            try:
                if a.ndim == 2:
                    return dot(a, b)
                lead = a.shape[:-1]
                return dot(a.reshape(prod(lead), a.shape[-1]), b).reshape(*lead, b.shape[1])
            except ValueError:
                pass  # the shapes do not match: np.matmul reports it as it always did
        r = mm(a, b)
        if r.__class__ is not ndarray:
            r = asarray(r)
        return r if r.dtype == a.dtype else r.astype(a.dtype)  # ml_dtypes matmul gives f32

    return fn


@kernel("Gemm", since=1)
def _gemm(node, ctx):
    """Gemm: ``alpha * A' @ B' + beta * C`` (A', B' optionally transposed; C broadcasts)."""
    ta = bool(attr_or_default(node, "transA"))
    tb = bool(attr_or_default(node, "transB"))
    alpha = float(attr_or_default(node, "alpha"))
    beta = float(attr_or_default(node, "beta"))

    def fn(a, b, c=None):
        y = (a.T if ta else a) @ (b.T if tb else b)
        if alpha != 1.0:
            y = y * alpha
        if c is not None and beta != 0.0:
            y = y + (c * beta if beta != 1.0 else c)
        return y if y.dtype == a.dtype else y.astype(a.dtype)

    return fn


# ----------------------------------------------------------------------------- identity, dropout


@kernel("Identity", since=1)
def _identity(node, ctx):
    return lambda x: x


@kernel("Dropout", since=1)
def _dropout(node, ctx):
    """Dropout (opset 12 on; older nodes were rewritten at import: `ir.legacy_forms`): the
    identity at inference; with ``training_mode`` a random mask.

    A given `seed` makes the mask reproducible (NumPy ``RandomState(seed)``, as the ONNX
    reference does). The mask output is bool.
    """
    n_out = len(node.outputs)
    seed = attr(node, "seed")

    def fn(x, ratio=None, training_mode=None):
        r = 0.5 if ratio is None else float(ratio)
        training = training_mode is not None and bool(training_mode)
        if not training or r == 0:
            y = x
            mask = np.ones(x.shape, dtype=bool) if n_out > 1 else None
        else:
            rnd = np.random.RandomState(None if seed is None else int(seed))
            mask = rnd.uniform(0.0, 1.0, x.shape) >= r
            y = asarray(mask * x * (1.0 / (1.0 - r))).astype(x.dtype, copy=False)
        return (y, mask) if n_out > 1 else y

    return fn


@kernel("LRN", since=1)
def _lrn(node, ctx):
    params = lrn_params(node)
    return lambda x: lrn(np, x, *params)
