"""Normalization kernels: BatchNormalization (opset 15 form, inference and training),
InstanceNormalization (opset 1-22) and LayerNormalization (opset 17).

All statistics are population ones (variance divided by the element count) and are computed
in float32 for float16/bfloat16 inputs (`backends.common.precision`), the results cast back.

BatchNormalization, for ``X`` ``[N, C, D1, ...]`` and per-channel ``scale``, ``B``,
``input_mean``, ``input_var`` (``[C]``)::

    Y = (X - mean) / sqrt(var + epsilon) * scale + B

In inference mode ``mean``/``var`` are the inputs (folded once into one multiply and one add
per element; at compile time when all four are initializers). In training mode
(``training_mode`` 1) they are the batch statistics over every axis but the channel axis,
and the outputs after ``Y`` are::

    running_mean = input_mean * momentum + mean * (1 - momentum)   # momentum default 0.9
    running_var  = input_var * momentum + var * (1 - momentum)

Older nodes (``is_test``, ``spatial=0``, the saved statistics) are read into this form:
`ir.legacy_forms`. In inference mode, outputs beyond ``Y`` repeat the inputs' mean and
variance.

InstanceNormalization: each ``[n, c]`` slice of ``X`` ``[N, C, D1, ...]`` normalized over its
spatial axes with its own mean and variance, then ``* scale[c] + B[c]``.

LayerNormalization: ``X`` normalized over the axes from ``axis`` (default -1) to the last,
``Y = (X - Mean) * InvStdDev * Scale + B`` (``Scale`` and optional ``B`` broadcast to those
axes); the optional outputs ``Mean`` and ``InvStdDev = 1 / sqrt(Var + epsilon)`` have the
shape of ``X`` with the normalized axes kept as size 1 and the element type ``stash_type``
(default 1, float32). The computation runs in the stash type, or in float64 for a float64
``X`` (as ONNX Runtime and ``onnx.reference`` do).
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir.attributes import attr_or_default, const_input, np_dtype
from ...common.precision import work_dtype
from ...common.window import check_instance_rank
from . import kernel

# ----------------------------------------------------------------------------- BatchNorm


def _param_shape(x_shape) -> tuple[int, ...]:
    """A per-channel BatchNormalization parameter's shape against ``X``."""
    return (x_shape[1],) + (1,) * (len(x_shape) - 2)


def inference_affine(scale, bias, mean, var, eps: float, wd) -> tuple[np.ndarray, np.ndarray]:
    """Inference BatchNormalization as ``Y = X * a + c`` (in `wd`, the parameters' shape):
    ``a = scale / sqrt(var + eps)``, ``c = bias - mean * a``."""
    a = scale.astype(wd) / np.sqrt(var.astype(wd) + wd.type(eps))
    return a, bias.astype(wd) - mean.astype(wd) * a


def is_inference(node) -> bool:
    """Does this BatchNormalization normalise by its given statistics (no training mode)?"""
    return not attr_or_default(node, "training_mode")


@kernel("BatchNormalization", since=1)
def _batch_norm(node, ctx):
    eps = float(attr_or_default(node, "epsilon"))
    momentum = float(attr_or_default(node, "momentum"))
    n_out = len(node.outputs)
    training = not is_inference(node)
    consts = [const_input(node, i) for i in range(1, 5)]
    folded: dict[tuple, tuple] = {}

    def fold(scale, bias, mean, var, x_shape, wd):
        """(a, c) with ``Y = X * a + c``, shaped against ``X``."""
        shape = _param_shape(x_shape)
        a, c = inference_affine(scale, bias, mean, var, eps, wd)
        return a.reshape(shape), c.reshape(shape)

    def infer(x, scale, bias, mean, var):
        wd = work_dtype(x.dtype)
        if all(p is c for p, c in zip((scale, bias, mean, var), consts)):
            key = (x.shape[1:], wd)
            ac = folded.get(key)
            if ac is None:
                ac = folded[key] = fold(scale, bias, mean, var, x.shape, wd)
        else:
            ac = fold(scale, bias, mean, var, x.shape, wd)
        a, c = ac
        y = np.multiply(x, a, dtype=wd)
        y += c
        y = y.astype(x.dtype, copy=False)
        return y if n_out == 1 else (y, mean, var)[:n_out]

    def train(x, scale, bias, mean, var):
        wd = work_dtype(x.dtype)
        if x.ndim < 2:
            raise ExecutionError(f"{where(node)}: input of rank {x.ndim} (need N, C, ...)")
        axes = (0,) + tuple(range(2, x.ndim))
        xw = x.astype(wd, copy=False)
        m = xw.mean(axis=axes, keepdims=True)
        d = xw - m
        v = np.mean(d * d, axis=axes, keepdims=True)
        inv = 1.0 / np.sqrt(v + wd.type(eps))
        shape = _param_shape(x.shape)
        y = d * (inv * scale.astype(wd).reshape(shape)) + bias.astype(wd).reshape(shape)
        y = y.astype(x.dtype, copy=False)
        if n_out == 1:
            return y
        m, v = m.reshape(mean.shape), v.reshape(var.shape)
        run_mean = (mean.astype(wd) * wd.type(momentum) + m * wd.type(1 - momentum))
        run_var = (var.astype(wd) * wd.type(momentum) + v * wd.type(1 - momentum))
        return (y, run_mean.astype(mean.dtype), run_var.astype(var.dtype))[:n_out]

    return train if training else infer


# ----------------------------------------------------------------------------- InstanceNorm


@kernel("InstanceNormalization", since=1)
def _instance_norm(node, ctx):
    eps = float(attr_or_default(node, "epsilon"))

    def fn(x, scale, bias):
        check_instance_rank(node, x.ndim)
        wd = work_dtype(x.dtype)
        axes = tuple(range(2, x.ndim))
        shape = (-1,) + (1,) * (x.ndim - 2)
        xw = x.astype(wd, copy=False)
        d = xw - xw.mean(axis=axes, keepdims=True)
        inv = 1.0 / np.sqrt(np.mean(d * d, axis=axes, keepdims=True) + wd.type(eps))
        d *= inv * scale.astype(wd).reshape(shape)
        d += bias.astype(wd).reshape(shape)
        return d.astype(x.dtype, copy=False)

    return fn


# ----------------------------------------------------------------------------- LayerNorm


@kernel("RMSNormalization", since=23)
def _rms_norm(node, ctx):
    """``x / sqrt(mean(x**2 over the axes from `axis`) + epsilon) * scale``, the mean in
    `stash_type`."""
    axis = int(attr_or_default(node, "axis"))
    eps = float(attr_or_default(node, "epsilon"))
    stash = np_dtype(int(attr_or_default(node, "stash_type")), node)

    def fn(x, scale):
        r = x.ndim
        if not -r <= axis < r:
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {r}")
        wd = np.promote_types(work_dtype(stash), work_dtype(x.dtype))
        xw = x.astype(wd, copy=False)
        ms = np.mean(xw * xw, axis=tuple(range(axis % r, r)), keepdims=True)
        y = (xw / np.sqrt(ms + wd.type(eps))).astype(x.dtype) * scale
        return y.astype(x.dtype, copy=False)

    return fn


@kernel("LayerNormalization", since=17)
def _layer_norm(node, ctx):
    axis = int(attr_or_default(node, "axis"))
    eps = float(attr_or_default(node, "epsilon"))
    stash = np_dtype(int(attr_or_default(node, "stash_type")), node)
    n_out = len(node.outputs)

    def fn(x, scale, bias=None):
        wd = np.promote_types(work_dtype(stash), work_dtype(x.dtype))
        r = x.ndim
        if not -r <= axis < r:
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {r}")
        axes = tuple(range(axis % r, r))
        xw = x.astype(wd, copy=False)
        mean = xw.mean(axis=axes, keepdims=True)
        d = xw - mean
        inv = 1.0 / np.sqrt(np.mean(d * d, axis=axes, keepdims=True) + wd.type(eps))
        d *= inv
        d *= scale.astype(wd, copy=False)
        if bias is not None:
            d += bias.astype(wd, copy=False)
        y = d.astype(x.dtype, copy=False)
        if n_out == 1:
            return y
        return (y, mean.astype(stash, copy=False), inv.astype(stash, copy=False))[:n_out]

    return fn
