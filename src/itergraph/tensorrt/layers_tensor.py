"""Layers that make, pad, resize or check tensors: fill, padding, resize, assertion, einsum.

TensorRT semantics, lowered to ONNX-standard IR nodes (`lower` returns the output value).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .core import FLOATS, Layer, checked_dims
from .dims import Dims
from .enums import (
    ONNX_TYPE,
    DataType,
    FillOperation,
    InterpolationMode,
    LayerType,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
    SampleMode,
    as_dtype,
    check_enum,
    to_numpy,
)
from .shapes import volume

_INDEX = (DataType.INT32, DataType.INT64)


#: the most elements a static LINSPACE fill is folded into at build time
_FOLD_MAX = 1 << 16


class FillLayer(Layer):
    """LINSPACE: ``out[i0, i1, ...] = alpha + beta[0] * i0 + beta[1] * i1 + ...``;
    RANDOM_UNIFORM: uniform in ``[alpha, beta]``; RANDOM_NORMAL: mean alpha, deviation beta.
    Input 0 (a 1-D shape tensor) overrides `shape`, inputs 1 and 2 override alpha and beta
    (LINSPACE: a 0-D start and a 1-D delta per axis). The static `alpha` and `beta` are
    numbers, set as TensorRT's binding sets them (an int: INT64 form; a float: double form;
    anything else is ignored). Output type `to_type` (FLOAT default)."""

    _type = LayerType.FILL
    check_at_creation = False
    shape_inputs = (0,)
    polymorphic = True

    def __init__(self, network, shape, op, to_type=DataType.FLOAT):
        super().__init__(network, [])
        self._shape = checked_dims(shape, self.what())
        self._op = check_enum(FillOperation, op, self.what())
        self.to_type = as_dtype(to_type)
        self._alpha, self._beta = 0.0, 1.0

    def max_inputs(self) -> int:
        return 3

    def _reset(self, i: int) -> None:
        if len(self.inputs) > i:
            self.inputs[i] = None

    @property
    def shape(self) -> Dims | None:
        return None if self.get_input(0) is not None else Dims(self._shape)

    @shape.setter
    def shape(self, dims) -> None:
        self._shape = checked_dims(dims, self.what())
        self._reset(0)
        self.network.touch()

    @property
    def operation(self) -> FillOperation:
        return self._op

    @operation.setter
    def operation(self, op) -> None:
        self._op = check_enum(FillOperation, op, self.what())
        self.network.touch()

    @property
    def alpha(self):
        return -1.0 if self.get_input(1) is not None else self._alpha

    @alpha.setter
    def alpha(self, v) -> None:
        self._set_param("_alpha", 1, v)

    @property
    def beta(self):
        return -1.0 if self.get_input(2) is not None else self._beta

    @beta.setter
    def beta(self, v) -> None:
        self._set_param("_beta", 2, v)

    def _set_param(self, attr: str, index: int, v) -> None:
        """TensorRT's binding: an int sets the INT64 form, a float the double form, and any
        other value (a list) is ignored."""
        if isinstance(v, bool | int | np.integer):
            value = int(v)
        elif isinstance(v, float | np.floating):
            value = float(v)
        else:
            return
        object.__setattr__(self, attr, value)
        other = "_beta" if attr == "_alpha" else "_alpha"
        kind = int if isinstance(value, int) else float
        object.__setattr__(self, other, kind(getattr(self, other)))
        self._reset(index)
        self.network.touch()

    def is_alpha_beta_int64(self) -> bool:
        return isinstance(self._alpha, int)

    def _alpha_value(self) -> float:
        return float(self._alpha)

    def _static_beta(self, rank: int) -> np.ndarray:
        """A static beta b is the delta ``[b]``: of the first axis (the others' are 0)."""
        beta = np.zeros(max(rank, 1), np.float64)
        beta[0] = float(self._beta)
        return beta

    def _out_shape(self) -> tuple[int, ...]:
        t = self.get_input(0)
        if t is None:
            return self._shape
        if t.compute_dtype not in _INDEX or len(t.shape) != 1 or t.shape[0] < 0:
            raise ModelError(f"{self.what()}: input 0 must be a 1-D INT32/INT64 shape tensor "
                             "of known length")
        c = t.const_value()
        return (-1,) * t.shape[0] if c is None else tuple(int(v) for v in c)

    def infer(self):
        to = as_dtype(self.to_type)
        a, b = self.get_input(1), self.get_input(2)
        if (a is None) != (b is None):
            raise ModelError(f"{self.what()}: alpha and beta (inputs 1 and 2) must both be "
                             "static or both be tensors")
        if self._op is FillOperation.LINSPACE:
            if to not in (DataType.FLOAT, DataType.INT32, DataType.INT64):
                raise ModelError(f"{self.what()}: LINSPACE makes FLOAT, INT32 or INT64, not "
                                 f"{to.name}")
        elif to not in (DataType.FLOAT, DataType.HALF):
            raise ModelError(f"{self.what()}: random fills make FLOAT or HALF, not {to.name}")
        shape = self._out_shape()
        const = None
        if self._op is FillOperation.LINSPACE and -1 not in shape and a is None \
                and volume(shape) <= _FOLD_MAX:  # a larger one is computed when run
            beta = self._static_beta(len(shape))
            grids = np.indices(shape) if shape else np.zeros((0,))
            val = np.full(shape, self._alpha_value())
            for k in range(len(shape)):
                val = val + beta[k] * grids[k]
            const = val.astype(to_numpy(to))
        return [(to, shape, const)]

    def lower(self, em):
        to = as_dtype(self.to_type)
        out = self.outputs[0]
        if out.const_value() is not None:
            return em.const(out.const_value())
        st = self.get_input(0)
        shape = em.ints(self._shape) if st is None else em.as_int64(st)
        rank = len(self._out_shape())
        a, b = self.get_input(1), self.get_input(2)
        F = DataType.FLOAT if to in FLOATS else DataType.INT64
        if a is None:
            alpha = em.const(np.array(self._alpha_value(), to_numpy(F)))
            beta = em.const(self._static_beta(rank).astype(to_numpy(F))
                            if self._op is FillOperation.LINSPACE
                            else np.array(float(self._beta), to_numpy(F)))  # a bound, a scale
        else:
            alpha = em.node("Cast", [em.value(a)], {"to": ONNX_TYPE[F]})
            beta = em.node("Cast", [em.value(b)], {"to": ONNX_TYPE[F]})
        if self._op is FillOperation.LINSPACE:
            val = em.node("Expand", [alpha, shape])
            for k in range(rank):
                n = em.node("Gather", [shape, em.scalar(k, DataType.INT64)], {"axis": 0})
                steps = em.node("Range", [em.scalar(0, DataType.INT64), n,
                                          em.scalar(1, DataType.INT64)])
                steps = em.node("Cast", [steps], {"to": ONNX_TYPE[F]})
                others = [i for i in range(rank) if i != k]
                if others:
                    steps = em.node("Unsqueeze", [steps, em.ints(others)])
                bk = em.node("Gather", [beta, em.scalar(k, DataType.INT64)], {"axis": 0})
                val = em.node("Add", [val, em.node("Mul", [steps, bk])])
            return em.node("Cast", [val], {"to": ONNX_TYPE[to]})
        # random: draw in [0, 1) or N(0, 1) of the run-time shape, then scale and shift
        if self._op is FillOperation.RANDOM_UNIFORM:
            u = em.node("RandomUniformLike", [em.node("ConstantOfShape", [shape])],
                        {"dtype": 1})
            span = em.node("Sub", [beta, alpha])
            val = em.node("Add", [em.node("Mul", [u, span]), alpha])
        else:
            u = em.node("RandomNormalLike", [em.node("ConstantOfShape", [shape])],
                        {"dtype": 1})
            val = em.node("Add", [em.node("Mul", [u, beta]), alpha])
        return em.node("Cast", [val], {"to": ONNX_TYPE[to]})


class PaddingLayer(Layer):
    """Zero padding of the last ``len(pre_padding)`` axes; negative amounts crop."""

    _type = LayerType.PADDING

    def __init__(self, network, x, pre, post):
        super().__init__(network, [x])
        self.pre_padding_nd = pre
        self.post_padding_nd = post

    @property
    def pre_padding_nd(self) -> Dims:
        return Dims(self._pre)

    @pre_padding_nd.setter
    def pre_padding_nd(self, v) -> None:
        self._pre = tuple(int(d) for d in v)
        self.network.touch()

    @property
    def post_padding_nd(self) -> Dims:
        return Dims(self._post)

    @post_padding_nd.setter
    def post_padding_nd(self, v) -> None:
        self._post = tuple(int(d) for d in v)
        self.network.touch()

    def infer(self):
        x = self.required_input(0)
        k = len(self._pre)
        if k != len(self._post) or k > len(x.shape):
            raise ModelError(f"{self.what()}: pre and post paddings must have the same length, "
                             f"at most the input rank {len(x.shape)}")
        shape = list(x.shape)
        for j in range(k):
            a = len(shape) - k + j
            if shape[a] >= 0:
                shape[a] += self._pre[j] + self._post[j]
                if shape[a] < 0:
                    raise ModelError(f"{self.what()}: cropping more than axis {a} holds")
        return [(x.compute_dtype, tuple(shape), None)]

    def lower(self, em):
        x = em.value(self.inputs[0])
        rank = len(self.inputs[0].shape)
        k = len(self._pre)
        axes = list(range(rank - k, rank))
        crop_pre = [max(-p, 0) for p in self._pre]
        crop_post = [max(-p, 0) for p in self._post]
        if any(crop_pre) or any(crop_post):
            ends = [-c if c else np.iinfo(np.int64).max for c in crop_post]
            x = em.node("Slice", [x, em.ints(crop_pre), em.ints(ends), em.ints(axes)])
        pads = [0] * (rank - k) + [max(p, 0) for p in self._pre] + [0] * (rank - k) + [
            max(p, 0) for p in self._post]
        if any(pads):
            x = em.node("Pad", [x, em.ints(pads)], {"mode": "constant"})
        return x if x is not em.value(self.inputs[0]) else em.node("Identity", [x])


class ResizeLayer(Layer):
    """ONNX Resize: to `shape` (or the shape tensor set as input 1), or by `scales` (or a
    float tensor set as input 1); `resize_mode`, `coordinate_transformation` (HALF_PIXEL with
    selector UPPER is ONNX's pytorch_half_pixel), `nearest_rounding`, `cubic_coeff`,
    `exclude_outside`."""

    _type = LayerType.RESIZE
    check_at_creation = False
    shape_inputs = (1,)

    def __init__(self, network, x):
        super().__init__(network, [x])
        self._out: tuple[int, ...] | None = None
        self._scales: tuple[float, ...] | None = None
        self.resize_mode = InterpolationMode.NEAREST
        self.coordinate_transformation = ResizeCoordinateTransformation.ASYMMETRIC
        self.selector_for_single_pixel = ResizeSelector.FORMULA
        self.nearest_rounding = ResizeRoundMode.FLOOR
        self.exclude_outside = False
        self.cubic_coeff = -0.75

    def max_inputs(self) -> int:
        return 2

    @property
    def shape(self) -> Dims | None:
        return None if self._out is None else Dims(self._out)

    @shape.setter
    def shape(self, v) -> None:
        self._out, self._scales = tuple(int(d) for d in v), None
        self.network.touch()

    @property
    def scales(self):
        return None if self._scales is None else list(self._scales)

    @scales.setter
    def scales(self, v) -> None:
        self._scales, self._out = tuple(float(s) for s in v), None
        self.network.touch()

    def infer(self):
        x = self.required_input(0)
        t = self.get_input(1)
        if t is not None:
            if len(t.shape) != 1 or t.shape[0] != len(x.shape):
                raise ModelError(f"{self.what()}: input 1 must be a 1-D tensor of "
                                 f"{len(x.shape)} entries")
            c = t.const_value()
            if t.compute_dtype in _INDEX:
                shape = (-1,) * len(x.shape) if c is None else tuple(int(v) for v in c)
            else:
                shape = tuple(-1 if c is None or d < 0 else int(np.floor(d * s))
                              for d, s in zip(x.shape, c if c is not None else x.shape))
        elif self._out is not None:
            shape = self._out
        elif self._scales is not None:
            if len(self._scales) != len(x.shape):
                raise ModelError(f"{self.what()}: {len(self._scales)} scales for rank "
                                 f"{len(x.shape)}")
            shape = tuple(-1 if d < 0 else int(np.floor(d * s))
                          for d, s in zip(x.shape, self._scales))
        else:
            shape = tuple(x.shape)  # TensorRT's default: the input's shape
        return [(x.compute_dtype, shape, None)]

    def lower(self, em):
        x = em.value(self.inputs[0])
        mode = check_enum(InterpolationMode, self.resize_mode, self.what())
        ct = check_enum(ResizeCoordinateTransformation, self.coordinate_transformation,
                        self.what())
        sel = check_enum(ResizeSelector, self.selector_for_single_pixel, self.what())
        ctm = {ResizeCoordinateTransformation.ALIGN_CORNERS: "align_corners",
               ResizeCoordinateTransformation.ASYMMETRIC: "asymmetric",
               ResizeCoordinateTransformation.HALF_PIXEL: "half_pixel"}[ct]
        if ct is ResizeCoordinateTransformation.HALF_PIXEL and sel is ResizeSelector.UPPER:
            ctm = "pytorch_half_pixel"
        rnd = {ResizeRoundMode.HALF_UP: "round_prefer_ceil",
               ResizeRoundMode.HALF_DOWN: "round_prefer_floor",
               ResizeRoundMode.FLOOR: "floor", ResizeRoundMode.CEIL: "ceil"}[
            check_enum(ResizeRoundMode, self.nearest_rounding, self.what())]
        attrs = {"mode": {InterpolationMode.NEAREST: "nearest", InterpolationMode.LINEAR:
                          "linear", InterpolationMode.CUBIC: "cubic"}[mode],
                 "coordinate_transformation_mode": ctm, "nearest_mode": rnd,
                 "cubic_coeff_a": float(self.cubic_coeff),
                 "exclude_outside": int(bool(self.exclude_outside))}
        t = self.get_input(1)
        if t is not None and t.compute_dtype in _INDEX:
            return em.node("Resize", [x, None, None, em.as_int64(t)], attrs)
        if t is not None:
            scales = em.node("Cast", [em.value(t)], {"to": 1})
            return em.node("Resize", [x, None, scales], attrs)
        if self._out is not None:
            return em.node("Resize", [x, None, None, em.ints(self._out)], attrs)
        scales = self._scales or (1.0,) * len(self.inputs[0].shape)
        return em.node("Resize", [x, None, em.const(np.array(scales, np.float32))], attrs)


class AssertionLayer(Layer):
    """Fails the run, with `message`, when any element of its BOOL input is false. It has no
    output: :mod:`.build` makes every network output wait for it."""

    _type = LayerType.ASSERTION
    _n_outputs = 0
    check_at_creation = False  # TensorRT reports a false constant condition when building

    def __init__(self, network, cond, message):
        super().__init__(network, [cond])
        self.message = str(message)

    def infer(self):
        c = self.required_input(0)
        if c.compute_dtype != DataType.BOOL:
            raise ModelError(f"{self.what()}: the condition must be BOOL, "
                             f"got {c.compute_dtype.name}")
        v = c.const_value()
        if v is not None and not np.all(v):
            raise ModelError(f"{self.what()}: the condition is false: {self.message}")
        return []

    def lower(self, em):
        """An INT64 zero whose computation fails when the condition has a false entry (a
        Gather at index 1 of a one-element tensor, named after the message)."""
        c = em.value(self.inputs[0])
        flat = em.node("Reshape", [c, em.ints([-1])])
        bad = em.node("Cast", [em.node("Not", [flat])], {"to": 7})
        # any false entry -> index 1; an empty condition is vacuously true
        idx = em.node("ReduceMax", [em.node("Concat", [bad, em.ints([0])], {"axis": 0}),
                                    em.ints([0])], {"keepdims": 0})
        saved = em.prefix
        em.prefix = f"assertion '{self.name}' failed: {self.message}"
        token = em.node("Gather", [em.ints([0]), idx], {"axis": 0})
        em.prefix = saved
        return token


class EinsumLayer(Layer):
    """ONNX Einsum with `equation` over its inputs."""

    _type = LayerType.EINSUM
    check_at_creation = False

    def __init__(self, network, inputs, equation):
        super().__init__(network, list(inputs))
        self.equation = str(equation)

    def infer(self):
        ts = [self.required_input(i) for i in range(len(self.inputs))]
        eq = self.equation.replace(" ", "")
        lhs, _, rhs = eq.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(ts):
            raise ModelError(f"{self.what()}: equation '{self.equation}' does not fit its "
                             f"{len(ts)} inputs")
        if "." in eq:  # ellipses: the shape from NumPy's einsum when the shapes are static
            if any(-1 in t.shape for t in ts):
                raise ModelError(f"{self.what()}: an equation with ellipses needs inputs of "
                                 "build-time shapes")
            try:
                out = np.einsum(eq, *(np.zeros(t.shape, np.float32) for t in ts))
            except ValueError as e:
                raise ModelError(f"{self.what()}: equation '{self.equation}': {e}") from None
            return [(ts[0].compute_dtype, out.shape, None)]
        sizes: dict[str, int] = {}
        for term, t in zip(terms, ts):
            if len(term) != len(t.shape) or t.compute_dtype != ts[0].compute_dtype:
                raise ModelError(f"{self.what()}: term '{term}' does not match input "
                                 f"{t.compute_dtype.name}{tuple(t.shape)}")
            for ch, d in zip(term, t.shape):
                if sizes.get(ch, -1) == -1:
                    sizes[ch] = d
        if "->" not in eq:
            rhs = "".join(sorted(ch for ch in sizes if lhs.count(ch) == 1))
        return [(ts[0].compute_dtype, tuple(sizes.get(ch, -1) for ch in rhs), None)]

    def lower(self, em):
        return em.node("Einsum", [em.value(t) for t in self.inputs],
                       {"equation": self.equation.replace(" ", "")})




class GridSampleLayer(Layer):
    """ONNX GridSample: `input` [N, C, H, W] sampled at `grid` [N, H', W', 2] (x, y in
    [-1, 1]); `interpolation_mode` (LINEAR default), `align_corners`, `sample_mode` (FILL:
    zeros outside, CLAMP: the border, REFLECT)."""

    _type = LayerType.GRID_SAMPLE

    def __init__(self, network, x, grid):
        super().__init__(network, [x, grid])
        self.interpolation_mode = InterpolationMode.LINEAR
        self.align_corners = False
        self.sample_mode = SampleMode.FILL

    def infer(self):
        x, g = self.required_input(0), self.required_input(1)
        if len(x.shape) != 4 or len(g.shape) != 4 or g.shape[-1] not in (2, -1):
            raise ModelError(f"{self.what()}: needs an input [N, C, H, W] and a grid "
                             "[N, H', W', 2]")
        if g.compute_dtype != x.compute_dtype:
            raise ModelError(f"{self.what()}: input and grid must have the same type")
        return [(x.compute_dtype, (x.shape[0], x.shape[1], g.shape[1], g.shape[2]), None)]

    def lower(self, em):
        mode = check_enum(InterpolationMode, self.interpolation_mode, self.what())
        sm = check_enum(SampleMode, self.sample_mode, self.what())
        padding = {SampleMode.FILL: "zeros", SampleMode.CLAMP: "border",
                   SampleMode.REFLECT: "reflection"}.get(sm)
        if padding is None:
            raise ModelError(f"{self.what()}: sample mode {sm.name} is not supported")
        out = em.node("GridSample", [em.value(t) for t in self.inputs],
                      {"mode": {InterpolationMode.NEAREST: "nearest",
                                InterpolationMode.LINEAR: "linear",
                                InterpolationMode.CUBIC: "cubic"}[mode],
                       "padding_mode": padding, "align_corners": int(bool(self.align_corners))})
        out.producer.version = 20  # the mode names above are GridSample-20's
        return out


__all__ = ["AssertionLayer", "EinsumLayer", "FillLayer", "GridSampleLayer", "PaddingLayer",
           "ResizeLayer"]
