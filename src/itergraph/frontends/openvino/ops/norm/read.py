"""Translators of OpenVINO normalisation and channel-layout ops: BatchNormInference, MVN,
NormalizeL2, LRN, GRN, GroupNormalization, DepthToSpace, SpaceToDepth.

OpenVINO semantics kept (checked against OpenVINO itself in tests/openvino):
- ``BatchNormInference-1`` takes (gamma, beta, data, mean, variance), ``-5`` (data, gamma, beta,
  mean, variance): ONNX ``BatchNormalization`` (channels on axis 1);
- ``MVN-1`` (declared ``opset2``) normalises over ``reduction_axes``, else over the axes from
  1 (``across_channels``) or 2 to the last; ``eps`` is added to the variance; ``MVN-6`` takes
  the axes as an input and adds ``eps`` inside or outside the square root (``eps_mode``);
- ``NormalizeL2`` divides by ``sqrt(max(sum x^2, eps))`` (``eps_mode="max"``) or
  ``sqrt(sum x^2 + eps)`` (``"add"``); an empty axes list normalises each element alone;
- ``LRN`` sums squares over a window of ``size`` along each of its axes (any axes, unlike
  ONNX ``LRN``), and scales ``alpha`` by ``size ** len(axes)``: running sums and slices;
- ``DepthToSpace``'s ``blocks_first``/``depth_first`` are ONNX's ``DCR``/``CRD``;
  ``SpaceToDepth`` ``blocks_first`` is ONNX ``SpaceToDepth``, ``depth_first`` the same with the
  channels regrouped (block offset inner); both for 4-D data.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import INT64_MAX, Builder, require_rank
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64


@importer("BatchNormInference", since=1)
def _batch_norm1(b: Builder, layer: Layer, x):
    gamma, beta, data, mean, var = x[:5]
    return _batch_norm(b, layer, [data, gamma, beta, mean, var])


@importer("BatchNormInference", since=5)
def _batch_norm5(b: Builder, layer: Layer, x):
    return _batch_norm(b, layer, x[:5])


def _batch_norm(b: Builder, layer: Layer, x):
    eps = layer.float_attr("epsilon")
    if eps is None:
        raise ModelError(f"{layer.where()}: BatchNormInference needs 'epsilon'")
    dt = out_dtype(layer, x)
    return b.op("BatchNormalization", list(x), {"epsilon": eps}, dtype=dt)


def _mvn(b: Builder, layer: Layer, data, axes, normalize: bool, eps: float, inside: bool):
    dt = out_dtype(layer, [data])
    mean = b.op("ReduceMean", [data, axes], {"keepdims": 1}, dtype=dt)
    y = b.op("Sub", [data, mean], dtype=dt)
    if not normalize:
        return y
    var = b.op("ReduceMean", [b.op("Mul", [y, y], dtype=dt), axes], {"keepdims": 1}, dtype=dt)
    e = b.const(np.array(eps, to_numpy(dt)))
    if inside:
        den = b.op("Sqrt", [b.op("Add", [var, e], dtype=dt)], dtype=dt)
    else:
        den = b.op("Add", [b.op("Sqrt", [var], dtype=dt), e], dtype=dt)
    return b.op("Div", [y, den], dtype=dt)


@importer("MVN", since=2)
def _mvn1(b: Builder, layer: Layer, x):
    r = require_rank(layer, x[0], 0)
    axes = layer.ints_attr("reduction_axes", [])
    if not axes:
        axes = list(range(1 if layer.bool_attr("across_channels", False) else 2, r))
    eps = layer.float_attr("eps")
    if eps is None:
        raise ModelError(f"{layer.where()}: MVN needs 'eps'")
    return _mvn(b, layer, x[0], b.i64(axes), layer.bool_attr("normalize_variance", False), eps,
                inside=True)


@importer("MVN", since=6)
def _mvn6(b: Builder, layer: Layer, x):
    mode = (layer.attr("eps_mode", required=True) or "").lower()
    if mode not in ("inside_sqrt", "outside_sqrt"):
        raise ModelError(f"{layer.where()}: eps_mode '{mode}' is not 'inside_sqrt' or "
                         "'outside_sqrt'")
    eps = layer.float_attr("eps")
    if eps is None:
        raise ModelError(f"{layer.where()}: MVN needs 'eps'")
    return _mvn(b, layer, x[0], b.i64_vector(x[1]), layer.bool_attr("normalize_variance", False),
                eps, inside=mode == "inside_sqrt")


@importer("NormalizeL2", since=1)
def _normalize_l2(b: Builder, layer: Layer, x):
    mode = (layer.attr("eps_mode", required=True) or "").lower()
    if mode not in ("add", "max"):
        raise ModelError(f"{layer.where()}: eps_mode '{mode}' is not 'add' or 'max'")
    eps = layer.float_attr("eps")
    if eps is None:
        raise ModelError(f"{layer.where()}: NormalizeL2 needs 'eps'")
    dt = out_dtype(layer, x)
    sq = b.op("Mul", [x[0], x[0]], dtype=dt)
    s = b.op("ReduceSum", [sq, b.i64_vector(x[1])], {"keepdims": 1, "noop_with_empty_axes": 1},
             dtype=dt)
    e = b.const(np.array(eps, to_numpy(dt)))
    s = b.op("Add" if mode == "add" else "Max", [s, e], dtype=dt)
    return b.op("Div", [x[0], b.op("Sqrt", [s], dtype=dt)], dtype=dt)


@importer("LRN", since=1)
def _lrn(b: Builder, layer: Layer, x):
    r = require_rank(layer, x[0], 0)
    axes = [int(a) for a in b.need_const(x[1], layer, "the axes input").reshape(-1)]
    axes = sorted({a + r if a < 0 else a for a in axes})
    if any(not 0 <= a < r for a in axes):
        raise ModelError(f"{layer.where()}: LRN axes out of range for rank {r}")
    size = layer.int_attr("size", required=True)
    if size < 1:
        raise ModelError(f"{layer.where()}: LRN size {size} must be at least 1")
    alpha, beta = layer.float_attr("alpha", 1e-4), layer.float_attr("beta", 0.75)
    bias = layer.float_attr("bias", 1.0)
    dt = out_dtype(layer, x)
    s = b.op("Mul", [x[0], x[0]], dtype=dt)
    for a in axes:
        s = _window_sum(b, s, a, r, size, dt)
    npdt = to_numpy(dt)
    scale = b.op("Mul", [s, b.const(np.array(alpha / size ** len(axes), npdt))], dtype=dt)
    den = b.op("Pow", [b.op("Add", [scale, b.const(np.array(bias, npdt))], dtype=dt),
                       b.const(np.array(beta, npdt))], dtype=dt)
    return b.op("Div", [x[0], den], dtype=dt)


def _window_sum(b: Builder, v, axis: int, rank: int, size: int, dt):
    """Sum over the window ``[i - h, i + h]`` (clipped), ``h = (size - 1) // 2``, along `axis`
    (the spec's window, so an even size sums ``size - 1`` elements): the difference of two
    slices of an exclusive running sum of the zero-padded input."""
    h = (size - 1) // 2
    width = 2 * h + 1
    pads = [0] * (2 * rank)
    pads[axis], pads[rank + axis] = h, h + 1
    padded = b.op("Pad", [v, b.i64(pads)], dtype=dt)
    run = b.op("CumSum", [padded, b.i64(axis)], {"exclusive": 1}, dtype=dt)
    ax = b.i64([axis])
    hi = b.op("Slice", [run, b.i64([width]), b.i64([INT64_MAX]), ax], dtype=dt)
    low = b.op("Slice", [run, b.i64([0]), b.i64([-width]), ax], dtype=dt)
    return b.op("Sub", [hi, low], dtype=dt)


def _block_args(layer: Layer, x) -> tuple[str, int]:
    if require_rank(layer, x[0], 0) != 4:
        raise UnsupportedError(f"{layer.where()}: {layer.type} of data of rank other than 4 "
                               "is not supported")
    mode = (layer.attr("mode", required=True) or "").lower()
    if mode not in ("blocks_first", "depth_first"):
        raise ModelError(f"{layer.where()}: mode '{mode}' is not 'blocks_first' or "
                         "'depth_first'")
    return mode, layer.int_attr("block_size", 1)


@importer("DepthToSpace", since=1)
def _depth_to_space(b: Builder, layer: Layer, x):
    mode, bs = _block_args(layer, x)
    return b.op("DepthToSpace", x[:1], {"blocksize": bs,
                                        "mode": "DCR" if mode == "blocks_first" else "CRD"},
                dtype=out_dtype(layer, x))


@importer("SpaceToDepth", since=1)
def _space_to_depth(b: Builder, layer: Layer, x):
    mode, bs = _block_args(layer, x)
    dt = out_dtype(layer, x)
    y = b.op("SpaceToDepth", x[:1], {"blocksize": bs}, dtype=dt)
    if mode == "blocks_first":
        return y
    # ONNX's channel c' = block * C + c; depth_first wants c * bs^2 + block
    n = b.op("Shape", [y], {"end": 1}, dtype=I64)
    hw = b.op("Shape", [y], {"start": 2}, dtype=I64)
    split = b.op("Concat", [n, b.i64([bs * bs, -1]), hw], {"axis": 0}, dtype=I64)
    y = b.transpose(b.op("Reshape", [y, split], dtype=dt), [0, 2, 1, 3, 4])
    merged = b.op("Concat", [n, b.i64([-1]), hw], {"axis": 0}, dtype=I64)
    return b.op("Reshape", [y, merged], dtype=dt)


@importer("GRN", since=1)
def _grn(b: Builder, layer: Layer, x):
    """``x / sqrt(sum(x ** 2 over axis 1) + bias)``."""
    dt = out_dtype(layer, x)
    bias = layer.float_attr("bias")
    if bias is None:
        raise ModelError(f"{layer.where()}: GRN needs 'bias'")
    sq = b.op("ReduceSum", [b.op("Mul", [x[0], x[0]], dtype=dt), b.i64([1])], {"keepdims": 1},
              dtype=dt)
    den = b.op("Sqrt", [b.op("Add", [sq, b.const(np.array(bias, to_numpy(dt)))], dtype=dt)],
               dtype=dt)
    return b.op("Div", [x[0], den], dtype=dt)


@importer("GroupNormalization", since=12)
def _group_norm(b: Builder, layer: Layer, x):
    """ONNX ``GroupNormalization-21``: per-channel ``scale`` and ``bias``."""
    groups = layer.int_attr("num_groups", required=True)
    eps = layer.float_attr("epsilon")
    if eps is None:
        raise ModelError(f"{layer.where()}: GroupNormalization needs 'epsilon'")
    return b.op("GroupNormalization", x[:3], {"num_groups": groups, "epsilon": eps},
                dtype=out_dtype(layer, x))
