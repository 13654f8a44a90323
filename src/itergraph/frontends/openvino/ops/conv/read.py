"""Translators of OpenVINO convolutions and pooling: Convolution, GroupConvolution,
ConvolutionBackpropData, GroupConvolutionBackpropData (ONNX ``Conv``/``ConvTranspose``),
MaxPool-1/8/14, AvgPool-1/14/16 (ONNX ``MaxPool``/``AveragePool``).

OpenVINO semantics kept (checked against OpenVINO itself in tests/openvino/opset):
- padding: ``auto_pad`` ``explicit`` (or ``notset``) takes ``pads_begin``/``pads_end``;
  ``valid`` pads nothing; ``same_upper``/``same_lower`` pad to ``ceil(in / stride)`` outputs,
  the odd element at the end/beginning. Where the spatial input shape is known the padding is
  resolved here and written as explicit ONNX ``pads``;
- pooling ``rounding_type``: ``floor`` and ``ceil`` round the output count
  ``(in + pads - window) / stride + 1``; ``ceil_torch`` drops a last window that would start
  in the end padding. The extra windows of ``ceil`` read past the end padding: they become
  end padding of the ONNX op, which a max ignores and an average with ``exclude-pad`` does
  not count. An average that counts padding divides by the whole window, so all its padding
  becomes an explicit zero ``Pad``; where ``pads_begin``/``pads_end`` are all zero the CPU
  plugin counts no padding at all (followed here). A window that starts past the input
  (``ceil`` only) is the lowest value of the type for a max (its index the first element of
  its plane), NaN for an average that excludes padding (0 / 0): appended to the ONNX pool's
  output, since ONNX pads must be smaller than the window;
- ``MaxPool-8``'s indices are flat indices into the input from axis ``axis`` on (ONNX counts
  from axis 0): the ONNX indices modulo the size of the axes from ``axis``;
- an integer ``Convolution`` (i32, what OpenVINO's converter makes of ``ConvInteger``) is a
  float32 ``Conv`` between ``Cast`` nodes: ONNX's ``Conv`` is float only, and OpenVINO's CPU
  plugin computes it in float32 too (exact while every partial sum stays below 2**24);
- group convolutions take weights ``[G, O/G, I/G, k...]`` (``[G, I/G, O/G, k...]`` for the
  transposed one): ONNX ``group=G`` with the first two axes merged;
- ``ConvolutionBackpropData``'s output size is ``stride * (in - 1) + window - pads +
  output_padding``; an ``output_shape`` input sets the total padding instead, spread by
  ``auto_pad`` as for the forward op (odd element at the end unless ``same_lower``); without
  it ``same_upper``/``same_lower`` pad nothing, as ``valid``.
"""

from __future__ import annotations

import math

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType, TensorType
from ...builder import Builder, dtype_of, shape_of
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64
_AUTO = {"explicit": "NOTSET", "notset": "NOTSET", "valid": "VALID",
         "same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER"}


def auto_pad(layer: Layer) -> str:
    mode = (layer.attr("auto_pad", "explicit") or "explicit").strip().lower()
    if mode not in _AUTO:
        raise ModelError(f"{layer.where()}: auto_pad '{mode}' is not one of {sorted(_AUTO)}")
    return _AUTO[mode]


def spatial_in(layer: Layer, x, n: int) -> list[int] | None:
    """The static spatial input dims (input 0 after batch and channels), else ``None``."""
    shape = shape_of(x) or (layer.inputs[0].shape if layer.inputs else None)
    if not shape or len(shape) != n + 2:
        return None
    dims = list(shape[2:])
    return dims if all(isinstance(d, int) for d in dims) else None


def _ints(layer: Layer, key: str, n: int, default: int | None = None) -> list[int]:
    vals = layer.ints_attr(key, [default] * n if default is not None else None)
    if len(vals) != n:
        raise ModelError(f"{layer.where()}: '{key}' has {len(vals)} values for {n} spatial "
                         "axes")
    return vals


def _window(k: int, d: int) -> int:
    return (k - 1) * d + 1


def same_pads(mode: str, size: int, k: int, s: int, d: int) -> tuple[int, int]:
    """(begin, end) padding of ``same_upper``/``same_lower``: ``ceil(size / s)`` outputs."""
    total = max((-(-size // s) - 1) * s + _window(k, d) - size, 0)
    small, big = total // 2, total - total // 2
    return (small, big) if mode == "SAME_UPPER" else (big, small)


class Geometry:
    """The window, stride, dilation and padding of one convolution or pooling layer."""

    def __init__(self, layer: Layer, kernel: list[int], x, dilated: bool = True):
        n = len(kernel)
        self.n, self.kernel = n, kernel
        self.strides = _ints(layer, "strides", n, 1)
        self.dilations = _ints(layer, "dilations", n, 1) if dilated else [1] * n
        for name, v in (("kernel", kernel), ("strides", self.strides),
                        ("dilations", self.dilations)):
            if any(d < 1 for d in v):  # OpenVINO refuses them ("std::none_of(strides...")
                raise ModelError(f"{layer.where()}: {name} {list(v)} must be positive")
        self.mode = auto_pad(layer)
        if self.mode == "NOTSET":
            self.begin = _ints(layer, "pads_begin", n, 0)
            self.end = _ints(layer, "pads_end", n, 0)
        else:
            self.begin, self.end = [0] * n, [0] * n
        self.size = spatial_in(layer, x, n)
        if self.size is not None and self.mode in ("SAME_UPPER", "SAME_LOWER"):
            pads = [same_pads(self.mode, i, k, s, d) for i, k, s, d in
                    zip(self.size, kernel, self.strides, self.dilations)]
            self.begin, self.end = [p[0] for p in pads], [p[1] for p in pads]
            self.mode = "NOTSET"
        elif self.size is not None:
            self.mode = "NOTSET"

    def attrs(self) -> dict:
        a = {"kernel_shape": list(self.kernel), "strides": list(self.strides)}
        if self.mode == "NOTSET":
            a["pads"] = list(self.begin) + list(self.end)
        else:
            a["auto_pad"] = self.mode
        if any(d != 1 for d in self.dilations):
            a["dilations"] = list(self.dilations)
        return a

    def pooled(self, rounding: str, layer: Layer) -> tuple[list[int], list[int]] | None:
        """(end padding, empty windows) per spatial axis: the end padding makes a
        floor-rounded ONNX pool give OpenVINO's windows that hold an input element, and the
        empty windows (which start past the input) follow them; ``None`` when the spatial size
        is unknown."""
        if self.size is None:
            return None
        ends, empty, outputs = [], [], []
        for i, k, s, d, pb, pe in zip(self.size, self.kernel, self.strides, self.dilations,
                                      self.begin, self.end):
            span = i + pb + pe - _window(k, d)
            if span < 0:
                raise ModelError(f"{layer.where()}: the window {k} (dilation {d}) is larger "
                                 f"than the padded input {i + pb + pe}")
            o = span // s + 1 if rounding == "floor" else -(-span // s) + 1
            if rounding == "ceil_torch" and (o - 1) * s >= i + pb:
                o -= 1
            outputs.append(o)
            real = min(o, -(-(i + pb) // s))
            need = (real - 1) * s + _window(k, d) - i - pb
            ends.append(max(need, pe) if real == o else max(need, 0))
            empty.append(o - real)
        self.outputs = outputs
        return ends, empty


def _rounding(layer: Layer, allowed: tuple[str, ...]) -> str:
    r = (layer.attr("rounding_type", "floor") or "floor").strip().lower()
    if r not in allowed:
        raise ModelError(f"{layer.where()}: rounding_type '{r}' is not one of {list(allowed)}")
    return r


def _check_rank(layer: Layer, x, n: int, what: str = "data") -> None:
    shape = shape_of(x)
    if shape is not None and len(shape) != n + 2:
        raise ModelError(f"{layer.where()}: {what} has rank {len(shape)}, the window "
                         f"{n} spatial axes")
    if not 1 <= n <= 3:
        raise UnsupportedError(f"{layer.where()}: {n} spatial axes (1 to 3 are supported)")


def _weights_shape(b: Builder, layer: Layer, w, port: int = 1) -> list[int]:
    shape = shape_of(w) or (layer.inputs[port].shape if len(layer.inputs) > port else None)
    if shape is None or any(not isinstance(d, int) for d in shape):
        raise UnsupportedError(f"{layer.where()}: the filter shape must be static")
    return list(shape)


def _merge_groups(b: Builder, w, shape: list[int]):
    """Weights ``[G, A, B, k...]`` as ``[G*A, B, k...]``."""
    new = [shape[0] * shape[1], *shape[2:]]
    c = b.value_of(w)
    if c is not None:
        return b.const(c.reshape(new))
    return b.op("Reshape", [w, b.i64(new)], dtype=dtype_of(w))


def _conv(b: Builder, layer: Layer, x, grouped: bool):
    ws = _weights_shape(b, layer, x[1])
    w, group = x[1], 1
    if grouped:
        group = ws[0]
        w = _merge_groups(b, w, ws)
        ws = [ws[0] * ws[1], *ws[2:]]
    n = len(ws) - 2
    _check_rank(layer, x[0], n)
    g = Geometry(layer, ws[2:], x[0])
    attrs = g.attrs()
    if group != 1:
        attrs["group"] = group
    dt = out_dtype(layer, x)
    if dt is not None and np.dtype(dt.numpy).kind in "iu":
        # an integer convolution (OpenVINO's converter makes ConvInteger one): ONNX's Conv is
        # float only, so it runs in float32, as OpenVINO's CPU plugin runs it
        y = b.op("Conv", [b.cast(x[0], DataType.FLOAT32), b.cast(w, DataType.FLOAT32)], attrs,
                 dtype=DataType.FLOAT32)
        return b.cast(y, dt)
    return b.op("Conv", [x[0], w], attrs, dtype=dt)


@importer("Convolution", since=1)
def _convolution(b: Builder, layer: Layer, x):
    return _conv(b, layer, x, grouped=False)


@importer("GroupConvolution", since=1)
def _group_convolution(b: Builder, layer: Layer, x):
    return _conv(b, layer, x, grouped=True)


def _backprop(b: Builder, layer: Layer, x, grouped: bool):
    ws = _weights_shape(b, layer, x[1])
    w, group = x[1], 1
    if grouped:  # [G, C_in/G, C_out/G, k...] -> [C_in, C_out/G, k...]
        group = ws[0]
        w = _merge_groups(b, w, ws)
        ws = [ws[0] * ws[1], *ws[2:]]
    n = len(ws) - 2
    _check_rank(layer, x[0], n)
    kernel = ws[2:]
    g = Geometry(layer, kernel, x[0])
    mode = auto_pad(layer)
    out_pad = _ints(layer, "output_padding", n, 0)
    size = spatial_in(layer, x[0], n)
    attrs: dict = {"kernel_shape": kernel, "strides": g.strides}
    if any(d != 1 for d in g.dilations):
        attrs["dilations"] = g.dilations
    if group != 1:
        attrs["group"] = group
    target = None
    if len(x) > 2 and x[2] is not None:
        target = [int(v) for v in b.need_const(x[2], layer, "the output_shape input")
                  .reshape(-1)]
        if len(target) != n:
            raise ModelError(f"{layer.where()}: output_shape has {len(target)} values for {n} "
                             "spatial axes")
    if target is not None:
        if size is None:
            raise UnsupportedError(f"{layer.where()}: output_shape needs a static input shape")
        begin, end, extra = [], [], []
        for i, k, s, d, o, op in zip(size, kernel, g.strides, g.dilations, target, out_pad):
            total = s * (i - 1) + _window(k, d) + op - o
            grow = max(-total, 0)
            total = max(total, 0)
            small, big = total // 2, total - total // 2
            lo, hi = {"SAME_UPPER": (big, small), "SAME_LOWER": (small, big)}.get(mode, (0, total))
            begin.append(lo)
            end.append(hi)
            extra.append(op + grow)
        attrs["pads"] = begin + end
        out_pad = extra
    elif mode != "NOTSET":  # without output_shape the same_* modes pad nothing either
        attrs["pads"] = [0] * (2 * n)
    else:
        attrs["pads"] = _ints(layer, "pads_begin", n, 0) + _ints(layer, "pads_end", n, 0)
    if any(out_pad):
        attrs["output_padding"] = out_pad
    return b.op("ConvTranspose", [x[0], w], attrs, dtype=out_dtype(layer, x))


@importer("ConvolutionBackpropData", since=1)
def _conv_backprop(b: Builder, layer: Layer, x):
    return _backprop(b, layer, x, grouped=False)


@importer("GroupConvolutionBackpropData", since=1)
def _group_conv_backprop(b: Builder, layer: Layer, x):
    return _backprop(b, layer, x, grouped=True)


def _pool_geometry(b: Builder, layer: Layer, x, dilated: bool) -> Geometry:
    kernel = layer.ints_attr("kernel")
    if not kernel:
        raise ModelError(f"{layer.where()}: missing attribute 'kernel'")
    _check_rank(layer, x[0], len(kernel))
    return Geometry(layer, kernel, x[0], dilated=dilated)


def _pool_attrs(layer: Layer, g: Geometry, rounding: str) -> tuple[dict, list[int]]:
    """The ONNX pool's attributes and the empty windows to append per spatial axis."""
    attrs = g.attrs()
    got = g.pooled(rounding, layer)
    if got is not None:
        attrs["pads"] = list(g.begin) + got[0]
        return attrs, got[1]
    if rounding == "ceil" and any(g.end):
        raise UnsupportedError(f"{layer.where()}: rounding_type 'ceil' with end padding needs "
                               "a static input shape")
    if rounding != "floor":
        attrs["ceil_mode"] = 1
    return attrs, [0] * g.n


def _append_windows(b: Builder, y, empty: list[int], value, dt):
    """`y` with `empty` windows of `value` appended along each spatial axis."""
    if not any(empty):
        return y
    n = len(empty)
    pads = b.i64([0] * (n + 2) + [0, 0, *empty])
    fill = b.const(np.asarray(value))
    return b.op("Pad", [y, pads, fill], {"mode": "constant"}, dtype=dt)


def _max_pool(b: Builder, layer: Layer, x, rounding: str, dilated: bool):
    g = _pool_geometry(b, layer, x, dilated)
    attrs, empty = _pool_attrs(layer, g, rounding)
    dt = out_dtype(layer, x)
    np_dt = np.dtype(to_numpy(dt)) if dt is not None else np.dtype(np.float32)
    lowest = np.array(np.finfo(np_dt).min if np_dt.kind == "f" else np.iinfo(np_dt).min, np_dt)
    if len(layer.outputs) < 2:
        return _append_windows(b, b.op("MaxPool", [x[0]], attrs, dtype=dt), empty, lowest, dt)
    y, idx = b.op("MaxPool", [x[0]], attrs, outputs=2)
    if dt is not None:
        y.type = TensorType(dt, None)
    idx.type = TensorType(I64, None)
    y = _append_windows(b, y, empty, lowest, dt)
    if any(empty):  # an empty window points at the first element of its plane
        n = g.n
        plane = b.i64(max(1, math.prod(g.size)))  # an empty plane has no index to reduce
        first = b.op("Slice", [idx, b.i64([0] * n), b.i64([1] * n), b.i64(range(2, n + 2))],
                     dtype=I64)
        base = b.op("Sub", [first, b.op("Mod", [first, plane], dtype=I64)], dtype=I64)
        idx = _append_windows(b, idx, empty, np.array(0, np.int64), I64)
        real = [o - e for o, e in zip(g.outputs, empty)]
        mask = np.ones(g.outputs, np.int64)
        mask[tuple(slice(0, r) for r in real)] = 0
        idx = b.op("Add", [idx, b.op("Mul", [base, b.const(mask)], dtype=I64)], dtype=I64)
    axis = layer.int_attr("axis", 0)
    shape = shape_of(x[0]) or layer.inputs[0].shape
    r = len(shape) if shape else g.n + 2
    axis = axis + r if axis < 0 else axis
    if axis != 0:
        if not shape or any(not isinstance(d, int) for d in shape[axis:]):
            raise UnsupportedError(f"{layer.where()}: indices from axis {axis} need static dims")
        idx = b.op("Mod", [idx, b.i64(max(1, math.prod(shape[axis:])))], dtype=I64)
    it = (layer.attr("index_element_type", "i64") or "i64").strip().lower()
    if it not in ("i64", "i32"):
        raise ModelError(f"{layer.where()}: index_element_type '{it}' is not i32 or i64")
    if it == "i32":
        idx = b.cast(idx, DataType.INT32)
    return [y, idx]


@importer("MaxPool", since=1)
def _max_pool1(b: Builder, layer: Layer, x):
    return _max_pool(b, layer, x, _rounding(layer, ("floor", "ceil")), dilated=False)


@importer("MaxPool", since=8)
def _max_pool8(b: Builder, layer: Layer, x):
    return _max_pool(b, layer, x, _rounding(layer, ("floor", "ceil")), dilated=True)


@importer("MaxPool", since=14)
def _max_pool14(b: Builder, layer: Layer, x):
    return _max_pool(b, layer, x, _rounding(layer, ("floor", "ceil", "ceil_torch")),
                     dilated=True)


def _avg_pool(b: Builder, layer: Layer, x, rounding: str, dilated: bool = False):
    g = _pool_geometry(b, layer, x, dilated=dilated)
    exclude = layer.bool_attr("exclude-pad", False)
    if not any(g.begin) and not any(g.end) and g.mode == "NOTSET":
        exclude = True  # the CPU plugin counts no padding where pads are zero
    dt = out_dtype(layer, x)
    attrs, empty = _pool_attrs(layer, g, rounding)
    data = x[0]
    if not exclude and "pads" in attrs:
        # the divisor is the whole window, empty ones included: explicit zeros, no ONNX pads
        n = g.n
        pads = attrs.pop("pads")
        end = [e + extra * s for e, extra, s in zip(pads[n:], empty, g.strides)]
        zero = b.const(np.zeros((), to_numpy(dt) if dt is not None else np.float32))
        data = b.op("Pad", [data, b.i64([0, 0, *pads[:n], 0, 0, *end]), zero],
                    {"mode": "constant"}, dtype=dt)
        return b.op("AveragePool", [data], attrs, dtype=dt)
    if not exclude:
        raise UnsupportedError(f"{layer.where()}: an average counting padding needs a static "
                               "input shape")
    attrs["count_include_pad"] = 0
    y = b.op("AveragePool", [data], attrs, dtype=dt)
    nan = np.array(np.nan, to_numpy(dt) if dt is not None else np.float32)
    return _append_windows(b, y, empty, nan, dt)  # an empty window averages nothing


@importer("AvgPool", since=1)
def _avg_pool1(b: Builder, layer: Layer, x):
    return _avg_pool(b, layer, x, _rounding(layer, ("floor", "ceil")))


@importer("AvgPool", since=14)
def _avg_pool14(b: Builder, layer: Layer, x):
    return _avg_pool(b, layer, x, _rounding(layer, ("floor", "ceil", "ceil_torch")))


@importer("AvgPool", since=16)
def _avg_pool16(b: Builder, layer: Layer, x):
    """AvgPool-16 adds ``dilations`` (ONNX AveragePool's, opset 19)."""
    return _avg_pool(b, layer, x, _rounding(layer, ("floor", "ceil", "ceil_torch")),
                     dilated=True)
