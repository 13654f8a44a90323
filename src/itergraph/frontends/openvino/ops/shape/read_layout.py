"""Translators of OpenVINO's channel and block rearrangements into ONNX ``Reshape``/``Transpose``
(and ``ExtractImagePatches-3`` into ``Slice``/``Concat``)
(checked against OpenVINO in tests/openvino/opset); the data shape must be static.

- ``ShuffleChannels`` (declared ``opset1``): axis ``axis`` of size ``C`` is viewed as
  ``[group, C / group]``, the two swapped and merged again;
- ``SpaceToBatch-2``: zero padding (``pads_begin``/``pads_end``), then each axis ``i`` of size
  ``d`` split into ``[d / b_i, b_i]``, the block parts moved before the batch and merged into
  it (block ``b_0`` of the batch axis is 1);
- ``BatchToSpace-2``: the inverse: the batch split into ``[b_1, ..., b_n, N / prod(b)]``, each
  block part moved after its axis and merged into it, then ``crops_begin``/``crops_end``
  sliced off.
"""

from __future__ import annotations

import math

from .....errors import ModelError, UnsupportedError
from ...builder import Builder, shape_of
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype


def _static_shape(layer: Layer, v) -> list[int]:
    shape = shape_of(v) or (layer.inputs[0].shape if layer.inputs else None)
    if shape is None or any(not isinstance(d, int) for d in shape):
        raise UnsupportedError(f"{layer.where()}: the data shape must be static")
    return list(shape)


def _reshape(b: Builder, v, shape, dt):
    return b.op("Reshape", [v, b.i64(list(shape))], dtype=dt)


@importer("ShuffleChannels", since=1)
def _shuffle_channels(b: Builder, layer: Layer, x):
    shape = _static_shape(layer, x[0])
    r = len(shape)
    axis = layer.int_attr("axis", 1)
    axis = axis + r if axis < 0 else axis
    group = layer.int_attr("group", 1)
    if not 0 <= axis < r or group < 1 or shape[axis] % group:
        raise ModelError(f"{layer.where()}: axis {axis} of shape {shape} does not split into "
                         f"{group} groups")
    dt = out_dtype(layer, x)
    view = [math.prod(shape[:axis]), group, shape[axis] // group, math.prod(shape[axis + 1:])]
    v = b.transpose(_reshape(b, x[0], view, dt), [0, 2, 1, 3])
    return _reshape(b, v, shape, dt)


def _blocks(b: Builder, layer: Layer, x, rank: int, names: tuple[str, str]):
    block = [int(v) for v in b.need_const(x[1], layer, "block_shape").reshape(-1)]
    lo = [int(v) for v in b.need_const(x[2], layer, names[0]).reshape(-1)]
    hi = [int(v) for v in b.need_const(x[3], layer, names[1]).reshape(-1)]
    if not len(block) == len(lo) == len(hi) == rank or block[0] != 1 or min(block) < 1:
        raise ModelError(f"{layer.where()}: block_shape {block} and {names} need {rank} values "
                         "with a block of 1 on the batch axis")
    return block, lo, hi


@importer("SpaceToBatch", since=2)
def _space_to_batch(b: Builder, layer: Layer, x):
    shape = _static_shape(layer, x[0])
    r = len(shape)
    block, lo, hi = _blocks(b, layer, x, r, ("pads_begin", "pads_end"))
    dt = out_dtype(layer, x)
    v = x[0]
    if any(lo) or any(hi):
        v = b.op("Pad", [v, b.i64(lo + hi)], {"mode": "constant"}, dtype=dt)
    padded = [d + p + q for d, p, q in zip(shape, lo, hi)]
    if any(d % k for d, k in zip(padded, block)):
        raise ModelError(f"{layer.where()}: padded shape {padded} is not a multiple of "
                         f"{block}")
    view = [padded[0]]
    for d, k in zip(padded[1:], block[1:]):
        view += [d // k, k]
    v = _reshape(b, v, view, dt)
    perm = [2 + 2 * i for i in range(r - 1)] + [0] + [1 + 2 * i for i in range(r - 1)]
    v = b.transpose(v, perm)
    return _reshape(b, v, [padded[0] * math.prod(block)] +
                    [d // k for d, k in zip(padded[1:], block[1:])], dt)


@importer("BatchToSpace", since=2)
def _batch_to_space(b: Builder, layer: Layer, x):
    shape = _static_shape(layer, x[0])
    r = len(shape)
    block, lo, hi = _blocks(b, layer, x, r, ("crops_begin", "crops_end"))
    dt = out_dtype(layer, x)
    n = math.prod(block)
    if shape[0] % n:
        raise ModelError(f"{layer.where()}: batch {shape[0]} is not a multiple of {n}")
    v = _reshape(b, x[0], block[1:] + [shape[0] // n] + shape[1:], dt)
    perm = [r - 1]
    for i in range(r - 1):
        perm += [r + i, i]
    v = b.transpose(v, perm)
    full = [shape[0] // n] + [d * k for d, k in zip(shape[1:], block[1:])]
    v = _reshape(b, v, full, dt)
    if not any(lo) and not any(hi):
        return v
    ends = [f - h for f, h in zip(full, hi)]
    return b.op("Slice", [v, b.i64(lo), b.i64(ends), b.i64(list(range(r)))], dtype=dt)




@importer("ExtractImagePatches", since=3)
def _extract_image_patches(b: Builder, layer: Layer, x):
    """``[N, C, H, W]`` -> ``[N, kh * kw * C, out_h, out_w]``: for each window offset
    ``(i, j)`` (row-major) the strided ``Slice`` of the (padded) data at ``(i * rate_h, j *
    rate_w)``, concatenated on axis 1 (depth ordered offset row, offset column, channel).
    ``valid`` keeps windows inside the data; ``same_upper``/``same_lower`` zero-pad to
    ``ceil(size / stride)`` windows, the odd element at the end/beginning."""
    shape = _static_shape(layer, x[0])
    if len(shape) != 4:
        raise ModelError(f"{layer.where()}: ExtractImagePatches takes 4-D data")
    k, s, rate = (layer.ints_attr(a) for a in ("sizes", "strides", "rates"))
    if not (len(k) == len(s) == len(rate) == 2):
        raise ModelError(f"{layer.where()}: sizes, strides and rates need 2 values each")
    mode = (layer.attr("auto_pad", "valid") or "valid").strip().lower()
    if mode not in ("valid", "same_upper", "same_lower"):
        raise ModelError(f"{layer.where()}: auto_pad '{mode}'")
    dt = out_dtype(layer, x)
    data, sizes, outs = x[0], shape[2:], []
    begin, end = [0, 0], [0, 0]
    for d in range(2):
        eff = (k[d] - 1) * rate[d] + 1
        if mode == "valid":
            outs.append(max((sizes[d] - eff) // s[d] + 1, 0))
            continue
        o = -(-sizes[d] // s[d])
        total = max((o - 1) * s[d] + eff - sizes[d], 0)
        small, big = total // 2, total - total // 2
        begin[d], end[d] = (small, big) if mode == "same_upper" else (big, small)
        outs.append(o)
    if any(begin) or any(end):
        data = b.op("Pad", [data, b.i64([0, 0, *begin, 0, 0, *end])], {"mode": "constant"},
                    dtype=dt)
    parts = []
    for i in range(k[0]):
        for j in range(k[1]):
            starts = [i * rate[0], j * rate[1]]
            stops = [st + (o - 1) * st_ + 1 for st, o, st_ in zip(starts, outs, s)]
            parts.append(b.op("Slice", [data, b.i64(starts), b.i64(stops), b.i64([2, 3]),
                                        b.i64(s)], dtype=dt))
    return parts[0] if len(parts) == 1 else b.op("Concat", parts, {"axis": 1}, dtype=dt)
