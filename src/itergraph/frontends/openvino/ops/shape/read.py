"""Translators of OpenVINO data-movement ops (reshape, slice, gather, broadcast ...) into ONNX.

Differences from ONNX handled here (checked against OpenVINO in tests/openvino):
- ``Reshape``: ``special_zero=false`` keeps a 0 as a zero dim (ONNX ``allowzero=1``);
- ``Split``/``VariadicSplit`` take the axis (and lengths) as inputs; a ``-1`` length takes the
  rest of the axis;
- ``StridedSlice`` masks (begin/end/new_axis/shrink_axis/ellipsis) become ONNX ``Slice`` +
  ``Squeeze`` + ``Unsqueeze``; begin and end may be computed at run time;
- ``Slice-8`` orders its inputs (start, stop, step, axes); ONNX (starts, ends, axes, steps);
- ``Gather`` with ``batch_dims`` becomes ``GatherND`` between transposes;
- ``Broadcast`` ``explicit`` mode places the data axes with ``axes_mapping``;
- ``Tile`` pads the shorter of data rank and repeats with leading ones;
- ``Pad`` crops where a pad is negative; ``pad_mode="symmetric"`` (a mirror that repeats the
  edge) is one ``Gather`` of mirrored positions per axis (`pad_symmetric`).
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.graph import Value
from .....ir.types import DataType, TensorType
from ...builder import (
    INT64_MAX,
    INT64_MIN,
    Builder,
    dtype_of,
    rank_of,
    require_rank,
    shape_of,
)
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype
from .pad_symmetric import symmetric_pad


@importer("Reshape", since=1)
def _reshape(b: Builder, layer: Layer, x):
    allowzero = 0 if layer.bool_attr("special_zero", False) else 1
    shape = b.to_i64(x[1])
    c = b.value_of(shape)
    if allowzero and c is not None and 0 not in c.tolist():
        allowzero = 0  # no zero in the pattern: both readings agree; keep the common form
    return b.op("Reshape", [x[0], shape], {"allowzero": allowzero}, dtype=out_dtype(layer, x))


@importer("Squeeze", since=1)
def _squeeze(b: Builder, layer: Layer, x):
    ins = [x[0]] + ([b.i64_vector(x[1])] if len(x) > 1 else [])
    if len(x) > 1 and layer.opset and layer.opset >= 15 and layer.bool_attr("allow_axis_skip"):
        raise UnsupportedError(f"{layer.where()}: allow_axis_skip=true is not supported")
    return b.op("Squeeze", ins, dtype=out_dtype(layer, x))


@importer("Unsqueeze", since=1)
def _unsqueeze(b: Builder, layer: Layer, x):
    return b.op("Unsqueeze", [x[0], b.i64_vector(x[1])], dtype=out_dtype(layer, x))


@importer("Concat", since=1)
def _concat(b: Builder, layer: Layer, x):
    return b.op("Concat", list(x), {"axis": layer.int_attr("axis", 0)}, dtype=out_dtype(layer, x))


def _axis(b: Builder, layer: Layer, v) -> int:
    a = b.need_const(v, layer, "the axis input")
    if a.size != 1:
        raise ModelError(f"{layer.where()}: the axis input must hold one value")
    return int(a.reshape(-1)[0])


@importer("Split", since=1)
def _split(b: Builder, layer: Layer, x):
    n = layer.int_attr("num_splits", required=True)
    if n < 1 or n != len(layer.outputs):
        raise ModelError(f"{layer.where()}: num_splits={n} but the layer has "
                         f"{len(layer.outputs)} outputs")
    axis = _axis(b, layer, x[1])
    outs = b.op("Split", [x[0]], {"axis": axis, "num_outputs": n}, outputs=n,
                dtype=out_dtype(layer, x))
    return [outs] if n == 1 else outs


@importer("VariadicSplit", since=1)
def _variadic_split(b: Builder, layer: Layer, x):
    axis = _axis(b, layer, x[1])
    n = len(layer.outputs)
    lengths = b.value_of(x[2])
    dt = out_dtype(layer, x)
    if lengths is not None:
        lengths = [int(v) for v in lengths.reshape(-1)]
        if len(lengths) != n:
            raise ModelError(f"{layer.where()}: {len(lengths)} split lengths for {n} outputs")
        if lengths.count(-1) > 1:
            raise ModelError(f"{layer.where()}: more than one split length is -1")
        if -1 in lengths:
            j = lengths.index(-1)
            port_dim = layer.outputs[j].shape[axis] if layer.outputs[j].shape else None
            if isinstance(port_dim, int):
                lengths[j] = port_dim
        if -1 not in lengths:
            split = b.i64(lengths)
        else:
            split = _rest_lengths(b, layer, x[0], axis, lengths)
    else:
        split = _runtime_lengths(b, x[0], axis, x[2])
    outs = b.op("Split", [x[0], split], {"axis": axis}, outputs=n, dtype=dt)
    return [outs] if n == 1 else outs


def _runtime_lengths(b: Builder, data, axis: int, lengths):
    """Split lengths computed at run time, a -1 entry replaced by the rest of the axis."""
    lens = b.op("Reshape", [b.to_i64(lengths), b.i64([-1])], dtype=DataType.INT64)
    if axis < 0:
        axis_dim = b.op("Gather", [b.op("Shape", [data], dtype=DataType.INT64), b.i64([axis])],
                        {"axis": 0}, dtype=DataType.INT64)
    else:
        axis_dim = b.op("Shape", [data], {"start": axis, "end": axis + 1}, dtype=DataType.INT64)
    total = b.op("ReduceSum", [lens, b.i64([0])], {"keepdims": 1}, dtype=DataType.INT64)
    # with one -1 entry the sum of the lengths is one less than the known part
    rest = b.op("Sub", [axis_dim, b.op("Add", [total, b.i64([1])], dtype=DataType.INT64)],
                dtype=DataType.INT64)
    unknown = b.op("Equal", [lens, b.i64(-1)], dtype=DataType.BOOL)
    return b.op("Where", [unknown, rest, lens], dtype=DataType.INT64)


def _rest_lengths(b: Builder, layer: Layer, data, axis: int, lengths: list[int]):
    """Split lengths where the -1 entry becomes the rest of the axis, computed at run time."""
    r = rank_of(data)
    if axis < 0:
        if r is None:
            raise UnsupportedError(f"{layer.where()}: a negative axis needs the input rank")
        axis += r
    dim = b.op("Shape", [data], {"start": axis, "end": axis + 1}, dtype=DataType.INT64)
    known = sum(v for v in lengths if v != -1)
    rest = b.op("Sub", [dim, b.i64([known])], dtype=DataType.INT64)
    j = lengths.index(-1)
    parts = []
    if j:
        parts.append(b.i64(lengths[:j]))
    parts.append(rest)
    if j + 1 < len(lengths):
        parts.append(b.i64(lengths[j + 1:]))
    return parts[0] if len(parts) == 1 else b.op("Concat", parts, {"axis": 0},
                                                 dtype=DataType.INT64)


def _pick(b: Builder, v, idx: list[int], fill: list[int | None]):
    """``[fill[k] if fill[k] is not None else v[idx[k]] for k]`` as an int64 vector value."""
    c = b.value_of(v)
    if c is not None:
        flat = c.reshape(-1).astype(np.int64)
        return b.i64([f if f is not None else int(flat[i]) for i, f in zip(idx, fill)])
    g = b.op("Gather", [b.to_i64(v), b.i64(idx)], {"axis": 0}, dtype=DataType.INT64)
    if all(f is None for f in fill):
        return g
    mask = np.array([f is not None for f in fill])
    fills = np.array([0 if f is None else f for f in fill], np.int64)
    return b.op("Where", [b.const(mask), b.i64(fills), g], dtype=DataType.INT64)


@importer("StridedSlice", since=1)
def _strided_slice(b: Builder, layer: Layer, x):
    data, begin, end = x[0], x[1], x[2]
    n = _spec_len(layer, begin, end)

    def mask(name):
        m = layer.ints_attr(name)
        if any(v not in (0, 1) for v in m):  # OpenVINO refuses them ("mask elem in range")
            raise ModelError(f"{layer.where()}: {name} {m} holds a value other than 0 and 1")
        return [bool(v) for v in (m + [0] * n)[:n]]

    bm, em = mask("begin_mask"), mask("end_mask")
    nm, sm, el = mask("new_axis_mask"), mask("shrink_axis_mask"), mask("ellipsis_mask")
    if sum(el) > 1:
        raise ModelError(f"{layer.where()}: more than one ellipsis in ellipsis_mask")
    if len(x) > 3:
        strides = b.need_const(x[3], layer, "the strides input").reshape(-1).astype(np.int64)
    else:
        strides = np.ones(n, np.int64)
    if len(strides) < n:
        raise ModelError(f"{layer.where()}: {len(strides)} strides for {n} slice entries")
    if np.any(strides == 0):
        raise ModelError(f"{layer.where()}: a stride is 0")
    rank = None
    if any(el):
        rank = require_rank(layer, data, 0)
    # walk the spec: input axis `ia` and output axis `oa`
    slice_idx, slice_axes, starts_fill, ends_fill, steps = [], [], [], [], []
    shrink_idx, shrink_axes, new_axes = [], [], []
    ia = oa = 0
    for i in range(n):
        if el[i]:
            consumed = sum(1 for k in range(i + 1, n) if not nm[k] and not el[k])
            span = rank - ia - consumed
            ia += span
            oa += span
        elif nm[i]:
            new_axes.append(oa)
            oa += 1
        elif sm[i]:
            shrink_idx.append(i)
            shrink_axes.append(ia)
            ia += 1
        else:
            st = int(strides[i])
            slice_idx.append(i)
            slice_axes.append(ia)
            starts_fill.append((0 if st > 0 else INT64_MAX) if bm[i] else None)
            ends_fill.append((INT64_MAX if st > 0 else INT64_MIN) if em[i] else None)
            steps.append(st)
            ia += 1
            oa += 1
    dt = out_dtype(layer, x)
    v = data
    all_idx = slice_idx + shrink_idx
    all_axes = slice_axes + shrink_axes
    if all_idx:
        starts = _pick(b, begin, all_idx, starts_fill + [None] * len(shrink_idx))
        ends_slice = _pick(b, end, slice_idx, ends_fill) if slice_idx else None
        ends = ends_slice
        if shrink_idx:
            shrink_end = _shrink_end(b, begin, shrink_idx)
            ends = shrink_end if ends is None else b.op("Concat", [ends, shrink_end], {"axis": 0},
                                                         dtype=DataType.INT64)
        all_steps = steps + [1] * len(shrink_idx)
        v = b.op("Slice", [v, starts, ends, b.i64(all_axes), b.i64(all_steps)], dtype=dt)
    if shrink_axes:
        v = b.squeeze(v, shrink_axes)
    if new_axes:
        v = b.unsqueeze(v, new_axes)
    if v is data:
        v = b.op("Identity", [v], dtype=dt)
    return v


def _shrink_end(b: Builder, begin, idx: list[int]):
    """``begin + 1`` for shrunk axes, with -1 mapped to 'to the end'."""
    c = b.value_of(begin)
    if c is not None:
        flat = c.reshape(-1).astype(np.int64)
        return b.i64([INT64_MAX if flat[i] == -1 else flat[i] + 1 for i in idx])
    g = b.op("Gather", [b.to_i64(begin), b.i64(idx)], {"axis": 0}, dtype=DataType.INT64)
    plus = b.op("Add", [g, b.i64(1)], dtype=DataType.INT64)
    is_last = b.op("Equal", [g, b.i64(-1)], dtype=DataType.BOOL)
    return b.op("Where", [is_last, b.i64(INT64_MAX), plus], dtype=DataType.INT64)


def _spec_len(layer: Layer, begin, end) -> int:
    for v, p in ((begin, 1), (end, 2)):
        c = v.const
        if c is not None:
            return int(c.size)
        shape = layer.inputs[p].shape
        if len(shape) == 1 and isinstance(shape[0], int):
            return shape[0]
    raise UnsupportedError(f"{layer.where()}: the length of begin/end must be known")


@importer("Slice", since=8)
def _slice8(b: Builder, layer: Layer, x):
    ins = [x[0], b.to_i64(x[1]), b.to_i64(x[2])]
    axes = b.to_i64(x[4]) if len(x) > 4 else None
    ins += [axes, b.to_i64(x[3])]
    return b.op("Slice", ins, dtype=out_dtype(layer, x))


def _gather(b: Builder, layer: Layer, x, batch_dims: int):
    axis = _axis(b, layer, x[2])
    dt = out_dtype(layer, x)
    idx = x[1]
    if dtype_of(idx) not in (DataType.INT32, DataType.INT64):
        idx = b.to_i64(idx)
    if batch_dims == 0:
        return b.op("Gather", [x[0], idx], {"axis": axis}, dtype=dt)
    r = require_rank(layer, x[0], 0)
    q = require_rank(layer, x[1], 1)
    if batch_dims < 0:
        batch_dims += q
    if axis < 0:
        axis += r
    if not 0 <= batch_dims <= axis < r or batch_dims > q:
        raise ModelError(f"{layer.where()}: batch_dims={batch_dims} and axis={axis} are "
                         f"inconsistent with ranks {r} and {q}")
    if batch_dims == q:  # one index per batch entry: add an index axis
        idx = b.unsqueeze(idx, [q])
        q += 1
        squeeze_after = True
    else:
        squeeze_after = False
    bd = batch_dims
    perm = list(range(bd)) + [axis] + list(range(bd, axis)) + list(range(axis + 1, r))
    moved = x[0] if perm == list(range(r)) else b.transpose(x[0], perm)
    g = b.op("GatherND", [moved, b.unsqueeze(idx, [q])], {"batch_dims": bd}, dtype=dt)
    # g: [B, I..., M..., N...] -> [B, M..., I..., N...]
    n_i, n_m = q - bd, axis - bd
    order = (list(range(bd)) + list(range(bd + n_i, bd + n_i + n_m)) + list(range(bd, bd + n_i))
             + list(range(bd + n_i + n_m, bd + n_i + n_m + r - axis - 1)))
    out = g if order == list(range(len(order))) else b.transpose(g, order)
    if squeeze_after:
        out = b.squeeze(out, [axis])
    return out


@importer("Gather", since=1)
def _gather1(b: Builder, layer: Layer, x):
    return _gather(b, layer, x, 0)


@importer("Gather", since=7)
def _gather7(b: Builder, layer: Layer, x):
    return _gather(b, layer, x, layer.int_attr("batch_dims", 0))


@importer("Transpose", since=1)
def _transpose(b: Builder, layer: Layer, x):
    perm = b.need_const(x[1], layer, "the permutation").reshape(-1).astype(np.int64)
    dt = out_dtype(layer, x)
    if perm.size == 0:
        return b.op("Transpose", [x[0]], dtype=dt)
    r = len(perm)
    perm = [int(p) + r if p < 0 else int(p) for p in perm]
    return b.op("Transpose", [x[0]], {"perm": perm}, dtype=dt)


@importer("Broadcast", since=1)
def _broadcast(b: Builder, layer: Layer, x):
    mode = (layer.attr("mode", "numpy") or "numpy").lower()
    dt = out_dtype(layer, x)
    shape = b.to_i64(x[1])
    if mode in ("numpy", "bidirectional"):
        return b.op("Expand", [x[0], shape], dtype=dt)
    if mode != "explicit":
        raise UnsupportedError(f"{layer.where()}: Broadcast mode '{mode}' is not supported")
    if len(x) < 3:
        raise ModelError(f"{layer.where()}: explicit Broadcast needs axes_mapping")
    mapping = [int(v) for v in b.need_const(x[2], layer, "axes_mapping").reshape(-1)]
    tshape = layer.inputs[1].shape
    c = b.value_of(x[1])
    n = int(c.size) if c is not None else (tshape[0] if len(tshape) == 1 else None)
    if not isinstance(n, int):
        raise UnsupportedError(f"{layer.where()}: the target shape length must be known")
    if sorted(mapping) != mapping:
        raise UnsupportedError(f"{layer.where()}: axes_mapping must be increasing")
    missing = [i for i in range(n) if i not in mapping]
    v = b.unsqueeze(x[0], missing) if missing else x[0]
    return b.op("Expand", [v, shape], dtype=dt)


@importer("Tile", since=1)
def _tile(b: Builder, layer: Layer, x):
    dt = out_dtype(layer, x)
    reps = b.to_i64(x[1])
    r = rank_of(x[0])
    c = b.value_of(reps)
    shape = layer.inputs[1].shape
    n = int(c.size) if c is not None else (shape[0] if len(shape) == 1 else None)
    data = x[0]
    if not isinstance(n, int) or r is None:  # e.g. a loop body's value of unknown rank
        return _tile_any_length(b, data, reps, r, dt)
    if n < r:
        reps = (b.i64([1] * (r - n) + c.reshape(-1).tolist()) if c is not None else
                b.op("Concat", [b.i64([1] * (r - n)), reps], {"axis": 0}, dtype=DataType.INT64))
    elif n > r:
        data = b.unsqueeze(data, list(range(n - r)))
    return b.op("Tile", [data, reps], dtype=dt)


def _tile_any_length(b: Builder, data: Value, reps: Value, rank: int | None, dt) -> Value:
    """Tile with repeats whose length is known only at run time (OpenVINO's TF frontend
    computes them), or data whose rank is (`rank` None: a loop body's value): both are
    padded with leading ones to the longer of the two, as OpenVINO's Tile does, before the
    ONNX Tile (which needs equal lengths)::

        n = max(rank, len(reps))
        tile(data.reshape([1] * (n - rank) + data.shape), [1] * (n - len(reps)) + reps)
    """
    i64 = DataType.INT64
    count = b.op("Size", [reps], dtype=i64)
    rank_c = (b.const(np.array(rank, np.int64)) if rank is not None else
              b.op("Size", [b.op("Shape", [data], dtype=i64)], dtype=i64))
    zero = b.const(np.array(0, np.int64))

    def ones(k: Value) -> Value:
        length = b.unsqueeze(b.op("Max", [k, zero], dtype=i64), [0])
        return b.op("ConstantOfShape", [length], {"value": np.array([1], np.int64)}, dtype=i64)

    full_reps = b.op("Concat", [ones(b.op("Sub", [rank_c, count], dtype=i64)), reps],
                     {"axis": 0}, dtype=i64)
    shape = b.op("Shape", [data], dtype=i64)
    full_shape = b.op("Concat", [ones(b.op("Sub", [count, rank_c], dtype=i64)), shape],
                      {"axis": 0}, dtype=i64)
    return b.op("Tile", [b.op("Reshape", [data, full_shape], dtype=dt), full_reps], dtype=dt)


@importer("Pad", since=1)
def _pad(b: Builder, layer: Layer, x):
    mode = (layer.attr("pad_mode", "constant") or "constant").lower()
    if mode not in ("constant", "edge", "reflect", "symmetric"):
        raise UnsupportedError(f"{layer.where()}: pad_mode '{mode}' is not supported")
    data = x[0]
    lo, hi = b.value_of(b.to_i64(x[1])), b.value_of(b.to_i64(x[2]))
    if lo is not None and hi is not None and (lo.min(initial=0) < 0 or hi.min(initial=0) < 0):
        # Pad-12 crops where a pad is negative: a Slice, then the non-negative pads
        lo, hi = lo.reshape(-1), hi.reshape(-1)
        axes = [i for i in range(len(lo)) if lo[i] < 0 or hi[i] < 0]
        starts = [max(-int(lo[i]), 0) for i in axes]
        ends = [int(hi[i]) if hi[i] < 0 else INT64_MAX for i in axes]
        dt = out_dtype(layer, x)
        shape = shape_of(data)
        data = b.op("Slice", [data, b.i64(starts), b.i64(ends), b.i64(axes)], dtype=dt)
        if shape is not None and dt is not None:  # the writer needs the rank
            dims = list(shape)
            for i in axes:
                dims[i] = (dims[i] + min(int(lo[i]), 0) + min(int(hi[i]), 0)
                           if isinstance(dims[i], int) else None)
                if dims[i] is not None and dims[i] < 0:  # OpenVINO refuses it
                    raise ModelError(f"{layer.where()}: pads ({int(lo[i])}, {int(hi[i])}) "
                                     f"remove more than the {shape[i]} elements of axis {i}")
            data.type = TensorType(dt, tuple(dims))
        x = [data, b.i64(np.maximum(lo, 0)), b.i64(np.maximum(hi, 0)), *x[3:]]
    if mode == "symmetric":
        return symmetric_pad(b, layer, data, b.to_i64(x[1]), b.to_i64(x[2]),
                             out_dtype(layer, x))
    pads = b.op("Concat", [b.to_i64(x[1]), b.to_i64(x[2])], {"axis": 0}, dtype=DataType.INT64)
    ins = [data, pads]
    if mode == "constant" and len(x) > 3:
        ins.append(x[3])
    return b.op("Pad", ins, {"mode": mode}, dtype=out_dtype(layer, x))


@importer("ScatterUpdate", since=3)
def _scatter_update(b: Builder, layer: Layer, x):
    """``data[..., indices[j...], ...] = updates[..., j..., ...]`` along `axis`: ONNX
    ``ScatterND`` on the axis moved to the front (data and updates transposed)."""
    axis = _axis(b, layer, x[3])
    dt = out_dtype(layer, x)
    idx = b.op("Unsqueeze", [b.to_i64(x[1]), b.i64([-1])], dtype=DataType.INT64)
    if axis == 0:
        return b.op("ScatterND", [x[0], idx, x[2]], dtype=dt)
    r = require_rank(layer, x[0], 0)
    k = require_rank(layer, x[1], 1)
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis < r:
        raise ModelError(f"{layer.where()}: axis {axis} out of range for rank {r}")
    perm = [axis] + [a for a in range(r) if a != axis]
    inv = [perm.index(a) for a in range(r)]
    upd_perm = list(range(axis, axis + k)) + list(range(axis)) + \
        list(range(axis + k, r - 1 + k))
    y = b.op("ScatterND", [b.transpose(x[0], perm), idx, b.transpose(x[2], upd_perm)], dtype=dt)
    return b.transpose(y, inv)
