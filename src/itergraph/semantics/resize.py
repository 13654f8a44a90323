"""ONNX ``Resize`` (opset 11 and later) as gathers along its axes, for both backends.

Resize is separable: the output is the input resized along one axis after another. Along an
axis of input length ``n`` and output length ``m``, output position ``o`` is a weighted sum
of a few input positions (`Taps`)::

    for o in range(m):
        x = source_coordinate(o)              # coordinate_transformation_mode
        y[o] = sum(w_k * data[clamp(i_k, 0, n - 1)] for i_k, w_k in taps(x))
        if crop_and_resize and not 0 <= x <= n - 1:
            y[o] = extrapolation_value

- ``nearest``: one tap, ``x`` rounded as ``nearest_mode`` says;
- ``linear``: two taps (``floor(x)`` and the next, weights ``1 - f`` and ``f``); with
  ``antialias`` and a scale below 1 the triangle widened by ``1 / scale``, normalised;
- ``cubic``: four taps of Keys' kernel with ``cubic_coeff_a``; widened the same way.

Taps beyond the input read its edge, unless ``exclude_outside``, which gives them weight 0
and normalises the rest. The output length is ``sizes`` or ``floor(n * scale)``; the scale in
the coordinate transform is ``scales`` or ``sizes / n``. The taps depend on shapes and
constants only, so a backend computes them once (`plan`) and applies them as gathers
(`apply`, with NumPy or jax.numpy).

`plan` returns None for what it leaves to the reference implementation: an aspect-ratio
policy other than ``stretch``, and ``tf_crop_and_resize`` sized by ``scales``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ExecutionError, ModelError, where
from ..ir.attributes import attr, attr_ints, attr_or_default, attr_str

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                    "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@dataclass(frozen=True)
class Taps:
    """Along `axis`, output position ``o`` reads input positions ``index[o]`` (already
    clamped to the input) with ``weight[o]`` (None: one tap of weight 1); where
    ``outside[o]``, the output is the extrapolation value."""

    axis: int
    index: np.ndarray
    weight: np.ndarray | None
    outside: np.ndarray | None


@dataclass(frozen=True)
class Plan:
    """A resize of one input shape: the output shape and the taps of each resized axis."""

    out_shape: tuple[int, ...]
    taps: tuple[Taps, ...]
    extrapolation: float


@dataclass(frozen=True)
class Attrs:
    mode: str
    coordinate: str
    nearest: str
    cubic_a: float
    exclude_outside: bool
    antialias: bool
    axes: list[int] | None
    policy: str
    extrapolation: float


def read_attrs(node) -> Attrs:
    """`node`'s attributes, checked (a ModelError names the bad one)."""
    a = Attrs(mode=attr_str(node, "mode", "nearest"),
              coordinate=attr_str(node, "coordinate_transformation_mode", "half_pixel"),
              nearest=attr_str(node, "nearest_mode", "round_prefer_floor"),
              cubic_a=float(attr_or_default(node, "cubic_coeff_a")),
              exclude_outside=bool(attr_or_default(node, "exclude_outside")),
              antialias=bool(attr(node, "antialias", 0)),
              axes=attr_ints(node, "axes"),
              policy=attr_str(node, "keep_aspect_ratio_policy", "stretch"),
              extrapolation=float(attr_or_default(node, "extrapolation_value")))
    for name, value, allowed in (("mode", a.mode, ("nearest", "linear", "cubic")),
                                 ("coordinate_transformation_mode", a.coordinate,
                                  COORDINATE_MODES),
                                 ("nearest_mode", a.nearest, NEAREST_MODES),
                                 ("keep_aspect_ratio_policy", a.policy,
                                  ("stretch", "not_larger", "not_smaller"))):
        if value not in allowed:
            raise ModelError(f"{where(node)}: {name} '{value}' is not one of {list(allowed)}")
    return a


def plan(node, a: Attrs, shape: tuple[int, ...], roi, scales, sizes) -> Plan | None:
    """The resize of an input of `shape` given the values of `roi`, `scales` and `sizes`
    (None or empty when absent); None where `plan` defers (module doc)."""
    rank = len(shape)
    axes = _axes(node, a.axes, rank)
    scales = None if scales is None or np.size(scales) == 0 else \
        np.asarray(scales, np.float64).reshape(-1)
    sizes = None if sizes is None or np.size(sizes) == 0 else \
        [int(s) for s in np.asarray(sizes).reshape(-1)]
    if (scales is None) == (sizes is None):
        raise ExecutionError(f"{where(node)}: exactly one of scales and sizes must be given")
    given = scales if scales is not None else sizes
    if len(given) != len(axes):
        raise ExecutionError(f"{where(node)}: {'scales' if sizes is None else 'sizes'} has "
                             f"{len(given)} entries for {len(axes)} axes of shape "
                             f"{list(shape)}")
    if a.policy != "stretch" and sizes is not None:
        return None
    crop = a.coordinate == "tf_crop_and_resize"
    if crop and sizes is None:
        return None
    out = list(shape)
    factor = {}
    for k, ax in enumerate(axes):
        if sizes is not None:
            if sizes[k] < 0 or (sizes[k] == 0 and shape[ax]):  # ONNX Runtime: a scale of 0
                raise ExecutionError(f"{where(node)}: sizes {sizes} holds a size below 1 for "
                                     f"axis {ax} of length {shape[ax]}")
            out[ax] = sizes[k]
            factor[ax] = sizes[k] / shape[ax] if shape[ax] else 1.0
        else:
            if not scales[k] > 0:
                raise ExecutionError(f"{where(node)}: scales {scales.tolist()} must all be "
                                     "greater than 0")
            out[ax] = int(math.floor(shape[ax] * scales[k]))
            factor[ax] = float(scales[k])
    bounds = _roi(node, roi, axes, rank) if crop else {}
    taps = []
    for ax in axes:
        lo, hi = bounds.get(ax, (0.0, 1.0))
        if out[ax] == shape[ax] and math.isclose(factor[ax], 1.0) and (lo, hi) == (0.0, 1.0):
            continue
        if shape[ax] == 0 or out[ax] == 0:
            if out[ax] and not shape[ax]:
                raise ExecutionError(f"{where(node)}: cannot resize an empty axis {ax} to "
                                     f"length {out[ax]}")
            continue
        taps.append(_axis_taps(a, ax, shape[ax], out[ax], factor[ax], (lo, hi)))
    return Plan(tuple(out), tuple(taps), a.extrapolation)


def _axes(node, axes: list[int] | None, rank: int) -> list[int]:
    if axes is None:
        return list(range(rank))
    norm = [x + rank if x < 0 else x for x in axes]
    if any(not 0 <= x < rank for x in norm) or len(set(norm)) != len(norm):
        raise ModelError(f"{where(node)}: axes {axes} are not distinct axes of rank {rank}")
    return norm


def _roi(node, roi, axes: list[int], rank: int) -> dict[int, tuple[float, float]]:
    r = np.asarray(roi if roi is not None else [], np.float64).reshape(-1)
    if r.size != 2 * len(axes):
        raise ExecutionError(f"{where(node)}: tf_crop_and_resize needs an roi of "
                             f"{2 * len(axes)} values (starts, then ends), got {r.size}")
    n = len(axes)
    return {ax: (float(r[k]), float(r[n + k])) for k, ax in enumerate(axes)}


def _source(a: Attrs, n: int, m: int, scale: float, roi: tuple[float, float]) -> np.ndarray:
    """The input coordinate of every output position, computed in float32 as ONNX Runtime
    does (where a coordinate lands on a whole number or a half decides a nearest tap)."""
    f = np.float32
    o, scale, n_, m_ = np.arange(m, dtype=f), f(scale), f(n), f(m)
    return _coordinate(a.coordinate, o, n_, m_, scale, (f(roi[0]), f(roi[1]))).astype(np.float64)


def _coordinate(mode: str, o, n, m, scale, roi):
    half, one = np.float32(0.5), np.float32(1)
    if mode == "half_pixel":
        return (o + half) / scale - half
    if mode == "half_pixel_symmetric":
        offset = n / 2 * (one - m / (scale * n))
        return offset + (o + half) / scale - half
    if mode == "pytorch_half_pixel":
        return (o + half) / scale - half if m > 1 else np.zeros_like(o)
    if mode == "align_corners":
        return o * (n - one) / (m - one) if m > 1 else np.zeros_like(o)
    if mode == "asymmetric":
        return o / scale
    lo, hi = roi  # tf_crop_and_resize
    if m > 1:
        return lo * (n - one) + o * (hi - lo) * (n - one) / (m - one)
    return np.full_like(o, (lo + hi) * (n - one) / 2)


def _nearest(mode: str, x: np.ndarray) -> np.ndarray:
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    frac = x - np.floor(x)
    half = frac == 0.5
    if mode == "round_prefer_floor":
        return np.where(half, np.floor(x), np.floor(x + 0.5))
    return np.where(half, np.ceil(x), np.floor(x + 0.5))


def _keys(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel at distances `t`."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _axis_taps(a: Attrs, ax: int, n: int, m: int, scale: float,
               roi: tuple[float, float]) -> Taps:
    x = _source(a, n, m, scale, roi)
    outside = ((x < 0) | (x > n - 1)) if a.coordinate == "tf_crop_and_resize" else None
    if outside is not None and not outside.any():
        outside = None
    if a.mode == "nearest":
        index = np.clip(_nearest(a.nearest, x), 0, n - 1).astype(np.int64)[:, None]
        return Taps(ax, index, None, outside)
    # the taps left of x: the one below it (the one before it when x is a whole number,
    # which then gets weight 0 in the linear case and Keys' kernel's 0 at distance 1)
    base = np.ceil(x) - 1
    s = min(scale, 1.0) if a.antialias else 1.0
    if a.mode == "linear":
        first = int(math.floor(-1 / s) + 1)
        offsets = np.arange(first, 2 - first)
        weight = np.clip(1 - np.abs((base[:, None] + offsets - x[:, None]) * s), 0, 1)
    else:
        first = int(math.floor(-2 / s) + 1)
        offsets = np.arange(first, 2 - first)
        weight = _keys((base[:, None] + offsets - x[:, None]) * s, a.cubic_a)
    weight = weight / weight.sum(axis=1, keepdims=True)
    index = base[:, None].astype(np.int64) + offsets
    if a.exclude_outside:
        weight = np.where((index < 0) | (index >= n), 0.0, weight)
        total = weight.sum(axis=1, keepdims=True)
        weight = weight / np.where(total == 0, 1.0, total)
    return Taps(ax, np.clip(index, 0, n - 1), weight, outside)


def apply(plan: Plan, x, xp=np):
    """`x` resized by `plan` (`xp`: NumPy, or jax.numpy tracing)."""
    work = x if x.dtype.kind != "f" or x.dtype.itemsize >= 4 else x.astype(np.float32)
    for t in plan.taps:
        shape = [1] * work.ndim
        shape[t.axis] = t.index.shape[0]
        if t.weight is None:
            work = xp.take(work, t.index[:, 0], axis=t.axis)
        else:
            w = t.weight.astype(work.dtype)
            y = None
            for k in range(t.index.shape[1]):
                term = xp.take(work, t.index[:, k], axis=t.axis) * w[:, k].reshape(shape)
                y = term if y is None else y + term
            work = y
        if t.outside is not None:
            fill = np.asarray(plan.extrapolation, work.dtype)
            work = xp.where(t.outside.reshape(shape), fill, work)
    return work if work.dtype == x.dtype else work.astype(x.dtype)


def native(x_dtype, a: Attrs) -> bool:
    """Whether `apply` gives ONNX's result for inputs of `x_dtype` in this mode (the
    reference gives ``exclude_outside`` a meaning for ``nearest`` too, which ONNX Runtime
    refuses)."""
    if a.mode == "nearest":
        return not a.exclude_outside
    return np.dtype(x_dtype).kind == "f"
