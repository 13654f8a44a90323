"""Neural-network layers: scale, normalization, parametric ReLU, convolution, deconvolution,
pooling and LRN (TensorRT's semantics, lowered to ONNX-standard IR nodes by `lower`).

Spatial layers read ``[N, C, *spatial]`` with the last ``len(kernel)`` axes spatial. Padding:
`pre_padding` / `post_padding` (or `padding_nd`, the same on both sides); `padding_mode`
EXPLICIT_ROUND_DOWN (default) and EXPLICIT_ROUND_UP (pooling: ONNX ``ceil_mode``) use them,
SAME_UPPER / SAME_LOWER pad to ``ceil(size / stride)`` (ONNX ``auto_pad``).
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ..errors import ModelError
from .core import FLOATS, Layer
from .dims import Dims
from .enums import (
    ONNX_TYPE,
    DataType,
    LayerType,
    PaddingMode,
    PoolingType,
    ScaleMode,
    as_dtype,
    check_enum,
    to_numpy,
)
from .shapes import broadcast, norm_axis


def _weights(w) -> np.ndarray | None:
    if w is None:
        return None
    arr = w.numpy() if hasattr(w, "numpy") else np.asarray(w)
    return None if arr.size == 0 else arr


class ScaleLayer(Layer):
    """``(x * scale + shift) ** power`` with coefficients per tensor (UNIFORM), per channel
    (CHANNEL, on `channel_axis`) or per element of the axes from `channel_axis` on
    (ELEMENTWISE). Missing weights default to shift 0, scale 1, power 1."""

    _type = LayerType.SCALE
    check_at_creation = False

    def __init__(self, network, x, mode, shift, scale, power, channel_axis):
        super().__init__(network, [x])
        self.mode = check_enum(ScaleMode, mode, self.what())
        self.shift, self.scale, self.power = shift, scale, power
        self.channel_axis = int(channel_axis)

    def _coeff_shape(self) -> tuple[int, ...]:
        x = self.required_input(0)
        rank = len(x.shape)
        mode = check_enum(ScaleMode, self.mode, self.what())
        if mode is ScaleMode.UNIFORM:
            return (1,) * rank
        c = norm_axis(self.channel_axis, rank, self.what())
        if mode is ScaleMode.CHANNEL:
            return tuple(x.shape[c] if i == c else 1 for i in range(rank))
        return tuple(1 if i < c else x.shape[i] for i in range(rank))

    def infer(self):
        x = self.required_input(0)
        if x.compute_dtype not in FLOATS:
            raise ModelError(f"{self.what()}: needs a floating-point input")
        want = self._coeff_shape()
        for name in ("shift", "scale", "power"):
            w = _weights(getattr(self, name))
            if w is not None and -1 not in want and w.size != int(np.prod(want)):
                raise ModelError(f"{self.what()}: {name} has {w.size} weights, "
                                 f"{self.mode.name} mode needs {int(np.prod(want))}")
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        x = em.value(self.inputs[0])
        dt = np.dtype(np.float32) if self.inputs[0].compute_dtype == DataType.FLOAT else None
        shape = self._coeff_shape()
        for name, op in (("scale", "Mul"), ("shift", "Add"), ("power", "Pow")):
            w = _weights(getattr(self, name))
            if w is not None:
                c = em.const(w.reshape(shape).astype(dt or w.dtype))
                if dt is None:
                    c = em.node("CastLike", [c, x])
                x = em.node(op, [x, c])
        return x if x is not em.value(self.inputs[0]) else em.node("Identity", [x])


class NormalizationLayer(Layer):
    """``(x - mean) / sqrt(var + epsilon) * scale + bias`` over the axes of `axes` (a
    bitmask); with `num_groups` G > 1 the channels (axis 1) split into G groups normalized
    separately (scale and bias ``[1, G, 1...]``, or ``[1, C, 1...]`` for the V2 layer)."""

    _type = LayerType.NORMALIZATION
    check_at_creation = False

    def __init__(self, network, x, scale, bias, axes, v2: bool = False):
        super().__init__(network, [x, scale, bias])
        self.axes = int(axes)
        self.epsilon = 1e-5
        self.num_groups = 1
        self.compute_precision = DataType.FLOAT
        self._v2 = v2

    @property
    def is_v2(self) -> bool:
        return self._v2

    def axis_list(self) -> list[int]:
        rank = len(self.required_input(0).shape)
        if self.axes <= 0 or self.axes >> rank:
            raise ModelError(f"{self.what()}: axes bitmask {self.axes:#b} does not name axes "
                             f"of rank {rank}")
        return [i for i in range(rank) if self.axes >> i & 1]

    def infer(self):
        x, s, b = (self.required_input(i) for i in range(3))
        dt = x.compute_dtype
        if dt not in FLOATS or s.compute_dtype != dt or b.compute_dtype != dt:
            raise ModelError(f"{self.what()}: input, scale and bias must share a float type")
        self.axis_list()
        if len(s.shape) != len(x.shape) or tuple(s.shape) != tuple(b.shape):
            raise ModelError(f"{self.what()}: scale and bias must have the same shape and the "
                             "input's rank")
        g = int(self.num_groups)
        if g > 1 and len(x.shape) > 1 and x.shape[1] > 0 and x.shape[1] % g:
            raise ModelError(f"{self.what()}: {g} groups do not divide {x.shape[1]} channels")
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        x_t = self.inputs[0]
        x, s, b = (em.value(t) for t in self.inputs)
        rank = len(x_t.shape)
        g = int(self.num_groups)
        eps = em.scalar(float(self.epsilon), x_t.compute_dtype)
        if g == 1:
            axes = em.ints(self.axis_list())
            y = _normalize(em, x, axes, eps)
            return em.node("Add", [em.node("Mul", [y, s]), b])
        shape = em.node("Shape", [x])
        grouped = em.node("Reshape", [x, em.ints([0, g, -1])])
        y = _normalize(em, grouped, em.ints([2]), eps)
        if not self._v2:
            y = em.node("Add", [em.node("Mul", [y, em.node("Reshape", [s, em.ints([1, g, 1])])]),
                                em.node("Reshape", [b, em.ints([1, g, 1])])])
            return em.node("Reshape", [y, shape])
        y = em.node("Reshape", [y, shape])
        del rank
        return em.node("Add", [em.node("Mul", [y, s]), b])


def _normalize(em, x, axes, eps):
    mean = em.node("ReduceMean", [x, axes], {"keepdims": 1})
    d = em.node("Sub", [x, mean])
    var = em.node("ReduceMean", [em.node("Mul", [d, d]), axes], {"keepdims": 1})
    return em.node("Div", [d, em.node("Sqrt", [em.node("Add", [var, eps])])])


class ParametricReLULayer(Layer):
    """``x if x >= 0 else slopes * x`` (slopes broadcast to x, same rank)."""

    _type = LayerType.PARAMETRIC_RELU

    def __init__(self, network, x, slopes):
        super().__init__(network, [x, slopes])

    def infer(self):
        x, s = self.required_input(0), self.required_input(1)
        if x.compute_dtype != s.compute_dtype:
            raise ModelError(f"{self.what()}: input and slopes have different types")
        return [(x.compute_dtype, broadcast([x.shape, s.shape], self.what()), None)]

    def lower(self, em):
        return em.node("PRelu", [em.value(t) for t in self.inputs])


class _Spatial(Layer):
    """Stride / padding / dilation attributes shared by convolution, deconvolution, pooling."""

    check_at_creation = False

    def _spatial_init(self, k: int) -> None:
        self._k = k
        self.stride_nd = (1,) * k
        self.pre_padding = (0,) * k
        self.post_padding = (0,) * k
        self.padding_mode = PaddingMode.EXPLICIT_ROUND_DOWN

    def _dims_prop(name):  # noqa: N805 - a property factory used in the class body
        def get(self):
            return Dims(getattr(self, "_" + name))

        def set_(self, v):
            object.__setattr__(self, "_" + name, tuple(int(d) for d in v))
            self.network.touch()

        return property(get, set_)

    stride_nd = _dims_prop("stride_nd")
    pre_padding = _dims_prop("pre_padding")
    post_padding = _dims_prop("post_padding")
    dilation_nd = _dims_prop("dilation_nd")
    kernel_size_nd = _dims_prop("kernel_size_nd")
    window_size_nd = _dims_prop("window_size_nd")

    @property
    def padding_nd(self) -> Dims:
        return Dims(self._pre_padding)

    @padding_nd.setter
    def padding_nd(self, v) -> None:
        self.pre_padding = v
        self.post_padding = v

    @abstractmethod
    def _window(self) -> tuple[int, ...]:
        """The window's spatial extent (kernel or pooling window), one entry per axis."""

    def _check(self):
        x = self.required_input(0)
        k = self._k
        if len(x.shape) < k + 1:
            raise ModelError(f"{self.what()}: a {k}-D window needs an input of rank >= "
                             f"{k + 1}, got {tuple(x.shape)}")
        for name in ("_stride_nd", "_pre_padding", "_post_padding"):
            if len(getattr(self, name)) != k:
                raise ModelError(f"{self.what()}: {name[1:]} must have {k} entries")
        for name, dims in (("stride_nd", self._stride_nd), ("window", self._window()),
                           ("dilation_nd", getattr(self, "_dilation_nd", (1,) * k))):
            if any(d < 1 for d in dims):
                raise ModelError(f"{self.what()}: {name} {tuple(dims)} must be positive")
        return x

    def _out_dims(self, x, dilation=None, transposed=False) -> list[int]:
        k = self._k
        win = self._window()
        dil = dilation or (1,) * k
        mode = check_enum(PaddingMode, self.padding_mode, self.what())
        out = []
        for j in range(k):
            n = x.shape[len(x.shape) - k + j]
            if n < 0:
                out.append(-1)
                continue
            s, e = self._stride_nd[j], dil[j] * (win[j] - 1) + 1
            if transposed:
                out.append((n - 1) * s + e - self._pre_padding[j] - self._post_padding[j])
            elif mode in (PaddingMode.SAME_UPPER, PaddingMode.SAME_LOWER):
                out.append(math.ceil(n / s))
            else:
                span = n + self._pre_padding[j] + self._post_padding[j] - e
                up = mode is PaddingMode.EXPLICIT_ROUND_UP
                out.append((-(-span // s) if up else span // s) + 1)
        return out

    def _batched(self, em, x, keep: int, fn):
        """`fn` on `x` seen as ``[N, *last keep axes]`` (ONNX's layout), the leading axes
        folded into N (or a unit N added), then unfolded again."""
        rank = len(self.inputs[0].shape)
        lead = rank - keep
        if lead == 1:
            return fn(x)
        big = np.iinfo(np.int64).max
        shape = em.node("Shape", [x])
        folded = em.node("Reshape", [x, em.node("Concat", [em.ints([-1]), em.node(
            "Slice", [shape, em.ints([lead]), em.ints([big])])], {"axis": 0})])
        y = fn(folded)
        back = em.node("Concat", [em.node("Slice", [shape, em.ints([0]), em.ints([lead])]),
                                  em.node("Slice", [em.node("Shape", [y]), em.ints([1]),
                                                    em.ints([big])])], {"axis": 0})
        return em.node("Reshape", [y, back])

    def _pad_attrs(self) -> dict:
        mode = check_enum(PaddingMode, self.padding_mode, self.what())
        if mode is PaddingMode.SAME_UPPER:
            return {"auto_pad": "SAME_UPPER"}
        if mode is PaddingMode.SAME_LOWER:
            return {"auto_pad": "SAME_LOWER"}
        return {"pads": list(self._pre_padding) + list(self._post_padding)}


class ConvolutionLayer(_Spatial):
    """ONNX Conv: `kernel` ``[K, C / num_groups, *kernel_size_nd]``, optional `bias` [K]."""

    _type = LayerType.CONVOLUTION
    _transposed = False

    def __init__(self, network, x, maps, kernel_shape, kernel, bias):
        super().__init__(network, [x])
        k = len(tuple(kernel_shape))
        self._spatial_init(k)
        self.kernel_size_nd = kernel_shape
        self.dilation_nd = (1,) * k
        self.num_output_maps = int(maps)
        self.num_groups = 1
        self.kernel, self.bias = kernel, bias

    def max_inputs(self) -> int:
        return 3

    def _window(self):
        return self._kernel_size_nd

    def _kernel_shape(self, c: int) -> tuple[int, ...]:
        g = int(self.num_groups)
        if self._transposed:
            return (c, self.num_output_maps // g, *self._kernel_size_nd)
        return (self.num_output_maps, c // g, *self._kernel_size_nd)

    def infer(self):
        x = self._check()
        c = x.shape[len(x.shape) - self._k - 1]
        kt = self.get_input(1)
        w = _weights(self.kernel)
        if kt is None and w is not None and c > 0 and w.size != int(
                np.prod(self._kernel_shape(c))):
            raise ModelError(f"{self.what()}: {w.size} kernel weights do not fill "
                             f"{self._kernel_shape(c)}")
        if kt is None and w is None:
            raise ModelError(f"{self.what()}: no kernel weights (nor input 1)")
        spatial = self._out_dims(x, self._dilation_nd, self._transposed)
        lead = x.shape[: len(x.shape) - self._k - 1]
        return [(x.compute_dtype, (*lead, self.num_output_maps, *spatial), None)]

    def lower(self, em):
        x_t = self.inputs[0]
        x = em.value(x_t)
        c = x_t.shape[len(x_t.shape) - self._k - 1]
        kt, bt = self.get_input(1), self.get_input(2)
        w = em.value(kt) if kt is not None else em.const(
            _weights(self.kernel).reshape(self._kernel_shape(c)).astype(np.float32))
        ins = [x, w]
        bias = _weights(self.bias)
        if bt is not None:
            ins.append(em.value(bt))
        elif bias is not None:
            ins.append(em.const(bias.reshape(-1).astype(np.float32)))
        attrs = {"strides": list(self._stride_nd), "dilations": list(self._dilation_nd),
                 "group": int(self.num_groups), "kernel_shape": list(self._kernel_size_nd),
                 **self._pad_attrs()}
        op = "ConvTranspose" if self._transposed else "Conv"
        return self._batched(em, x, self._k + 1, lambda v: em.node(op, [v, *ins[1:]], attrs))


class DeconvolutionLayer(ConvolutionLayer):
    """ONNX ConvTranspose: `kernel` ``[C, K / num_groups, *kernel_size_nd]``."""

    _type = LayerType.DECONVOLUTION
    _transposed = True


class PoolingLayer(_Spatial):
    """MAX / AVERAGE pooling (ONNX MaxPool / AveragePool; `average_count_excludes_padding`
    is ``count_include_pad = 0``); MAX_AVERAGE_BLEND mixes them by `blend_factor`."""

    _type = LayerType.POOLING

    def __init__(self, network, x, kind, window):
        super().__init__(network, [x])
        self._kind = check_enum(PoolingType, kind, self.what())
        self._spatial_init(len(tuple(window)))
        self.window_size_nd = window
        self.average_count_excludes_padding = True
        self.blend_factor = 0.0

    @property
    def type(self) -> PoolingType:
        """The pooling kind (TensorRT's ``IPoolingLayer.type``)."""
        return self._kind

    @type.setter
    def type(self, kind) -> None:
        self._kind = check_enum(PoolingType, kind, self.what())
        self.network.touch()

    def _window(self):
        return self._window_size_nd

    def infer(self):
        x = self._check()
        lead = x.shape[: len(x.shape) - self._k]
        return [(x.compute_dtype, (*lead, *self._out_dims(x)), None)]

    def lower(self, em):
        return self._batched(em, em.value(self.inputs[0]), self._k + 1, lambda v: self._pool(
            em, v))

    def _pool(self, em, x):
        attrs = {"kernel_shape": list(self._window_size_nd), "strides": list(self._stride_nd),
                 **self._pad_attrs()}
        if self.padding_mode is PaddingMode.EXPLICIT_ROUND_UP:
            attrs["ceil_mode"] = 1
        mx = em.node("MaxPool", [x], attrs)
        if self._kind is PoolingType.MAX:
            return mx
        avg = em.node("AveragePool", [x], {
            **attrs, "count_include_pad": int(not self.average_count_excludes_padding)})
        if self._kind is PoolingType.AVERAGE:
            return avg
        f = float(self.blend_factor)
        dt = self.inputs[0].compute_dtype
        return em.node("Add", [em.node("Mul", [mx, em.scalar(1 - f, dt)]),
                               em.node("Mul", [avg, em.scalar(f, dt)])])


#: TensorRT's ILRNLayer ranges (its window size: odd, from 1 to 15)
_LRN_RANGES = (("alpha", -1e20, 1e20), ("beta", 0.01, 1e5), ("k", 1e-5, 1e10))


class LRNLayer(Layer):
    """ONNX LRN across channels (axis 1): `window_size` (odd, 1 to 15), `alpha`, `beta`,
    `k`."""

    _type = LayerType.LRN

    def __init__(self, network, x, window, alpha, beta, k):
        super().__init__(network, [x])
        self.window_size, self.alpha, self.beta, self.k = int(window), alpha, beta, k

    def infer(self):
        x = self.required_input(0)
        if x.compute_dtype not in FLOATS or len(x.shape) < 3:
            raise ModelError(f"{self.what()}: needs a float input of rank >= 3")
        n = int(self.window_size)
        if not (1 <= n <= 15 and n % 2):
            raise ModelError(f"{self.what()}: window_size {n} must be odd, from 1 to 15")
        for name, lo, hi in _LRN_RANGES:
            v = float(getattr(self, name))
            if not lo <= v <= hi:
                raise ModelError(f"{self.what()}: {name} {v} must lie in [{lo:g}, {hi:g}]")
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        """``x / (k + alpha / n * sum of x^2 over the n channels around)^beta`` (ONNX LRN),
        the window sum as n shifted slices of the zero-padded squares."""
        x_t = self.inputs[0]
        x = em.value(x_t)
        n = int(self.window_size)
        dt, rank = x_t.compute_dtype, len(x_t.shape)
        sq = em.node("Mul", [x, x])
        lo, hi = (n - 1) // 2, n - 1 - (n - 1) // 2
        pads = [0] * (2 * rank)
        pads[1], pads[rank + 1] = lo, hi
        padded = em.node("Pad", [sq, em.ints(pads)])
        channels = em.node("Gather", [em.node("Shape", [x]), em.ints([1])], {"axis": 0})
        total = None
        for i in range(n):
            part = em.node("Slice", [padded, em.ints([i]), em.node(
                "Add", [channels, em.ints([i])]), em.ints([1])])
            total = part if total is None else em.node("Add", [total, part])
        scale = em.node("Mul", [total, em.scalar(float(self.alpha) / n, dt)])
        base = em.node("Add", [scale, em.scalar(float(self.k), dt)])
        return em.node("Div", [x, em.node("Pow", [base, em.scalar(float(self.beta), dt)])])




class _QDQ(Layer):
    """Shared by quantize and dequantize: input, scale (input 1), optional zero point
    (input 2); `axis` -1 is per tensor, else the per-channel axis of a 1-D scale."""

    check_at_creation = False

    def __init__(self, network, x, scale, to_type):
        super().__init__(network, [x, scale])
        self.axis = -1
        self.to_type = to_type

    def max_inputs(self) -> int:
        return 3

    def _attrs(self) -> dict:
        x, s = self.required_input(0), self.required_input(1)
        if len(s.shape) > 1:
            raise ModelError(f"{self.what()}: block quantization is not supported")
        if len(s.shape) == 1 and s.shape[0] != 1:
            rank = len(x.shape)
            if not 0 <= self.axis < rank:
                raise ModelError(f"{self.what()}: a per-channel scale needs an axis in "
                                 f"[0, {rank}), got {self.axis}")
            return {"axis": int(self.axis)}
        return {}

    def _operands(self, em, dt: DataType):
        """(scale, zero point) as `dt` values shaped to broadcast against the input."""
        x_t, s_t = self.required_input(0), self.required_input(1)
        rank = len(x_t.shape)
        axis = self._attrs().get("axis")
        shape = [1] * rank
        if axis is not None:
            shape[axis] = -1
        s = em.node("Reshape", [em.value(s_t), em.ints(shape)])
        zp_t = self.get_input(2)
        zp = (em.scalar(0, dt) if zp_t is None else
              em.node("Reshape", [em.node("Cast", [em.value(zp_t)], {"to": ONNX_TYPE[dt]}),
                                  em.ints(shape)]))
        return s, zp




class QuantizeLayer(_QDQ):
    """``saturate(round_half_even(x / scale) + zero point)`` as INT8 or UINT8 (ONNX
    QuantizeLinear's formula)."""

    _type = LayerType.QUANTIZE

    def infer(self):
        x = self.required_input(0)
        to = as_dtype(self.to_type)
        if to not in (DataType.INT8, DataType.UINT8):
            raise ModelError(f"{self.what()}: quantizing to {to.name} is not supported "
                             "(INT8 and UINT8 are)")
        self._attrs()
        return [(to, x.shape, None)]

    def lower(self, em):
        dt = self.required_input(0).compute_dtype
        s, zp = self._operands(em, dt)
        q = em.node("Add", [em.node("Round", [em.node("Div", [em.value(self.inputs[0]), s])]),
                            zp])
        to = as_dtype(self.to_type)
        info = np.iinfo(to_numpy(to))
        q = em.node("Clip", [q, em.scalar(info.min, dt), em.scalar(info.max, dt)])
        return em.node("Cast", [q], {"to": ONNX_TYPE[to]})


class DequantizeLayer(_QDQ):
    """``(x - zero point) * scale`` in the scale's type (ONNX DequantizeLinear's formula)."""

    _type = LayerType.DEQUANTIZE

    def infer(self):
        x, s = self.required_input(0), self.required_input(1)
        if x.compute_dtype not in (DataType.INT8, DataType.UINT8):
            raise ModelError(f"{self.what()}: dequantizing {x.compute_dtype.name} is not supported "
                             "(INT8 and UINT8 are)")
        self._attrs()
        return [(s.compute_dtype, x.shape, None)]

    def lower(self, em):
        dt = self.required_input(1).compute_dtype
        s, zp = self._operands(em, dt)
        x = em.node("Cast", [em.value(self.inputs[0])], {"to": ONNX_TYPE[dt]})
        return em.node("Mul", [em.node("Sub", [x, zp]), s])


__all__ = ["ConvolutionLayer", "DeconvolutionLayer", "DequantizeLayer", "LRNLayer",
           "NormalizationLayer", "ParametricReLULayer", "PoolingLayer", "QuantizeLayer",
           "ScaleLayer"]
