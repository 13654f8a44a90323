"""Layers that rearrange or pick parts of a tensor: shuffle, concatenation, slice, gather
(TensorRT's semantics).

Each class infers its outputs (`infer`: type, shape and, when every input is known before run
time, the folded value) and lowers itself to ONNX-standard IR nodes (`lower`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .core import Layer, Shape, Tensor, int_tuple
from .dims import Dims, Permutation
from .enums import (
    ONNX_TYPE,
    DataType,
    GatherMode,
    LayerType,
    SampleMode,
    check_enum,
    to_numpy,
)
from .shapes import broadcast, norm_axis, volume

INT64_MIN = np.iinfo(np.int64).min
_INDEX = (DataType.INT32, DataType.INT64)


def _entry(em, p, j: int):
    """Entry j of a slice parameter (a tuple or an integer tensor) as an INT64 scalar."""
    if isinstance(p, tuple):
        return em.scalar(p[j], DataType.INT64)
    return em.node("Gather", [em.as_int64(p), em.scalar(j, DataType.INT64)], {"axis": 0})


def _slice_sampled(layer, em, x, axes, params):
    """WRAP / CLAMP / FILL / REFLECT slices: one Gather per sliced axis at indices mapped
    back into the axis (FILL: out-of-range positions replaced by the fill value)."""
    mode = layer.mode
    rank = len(layer.inputs[0].shape)
    I64 = DataType.INT64
    zero, one = em.scalar(0, I64), em.scalar(1, I64)
    shape = em.node("Shape", [x])
    fill = None
    if mode is SampleMode.FILL:
        f = layer.get_input(4)
        dt = to_numpy(layer.inputs[0].compute_dtype)
        fill = (em.const(np.zeros((), dt)) if f is None
                else em.node("Cast", [em.value(f)],
                             {"to": ONNX_TYPE[layer.inputs[0].compute_dtype]}))
    start, size, stride = params
    for j, a in enumerate(axes):
        n = em.node("Gather", [shape, em.scalar(a, I64)], {"axis": 0})
        steps = em.node("Range", [zero, _entry(em, size, j), one])
        idx = em.node("Add", [_entry(em, start, j), em.node("Mul", [steps, _entry(em, stride, j)])])
        last = em.node("Sub", [n, one])
        clamped = em.node("Max", [em.node("Min", [idx, last]), zero])
        if mode is SampleMode.WRAP:
            use = em.node("Mod", [idx, n])
        elif mode is SampleMode.REFLECT:
            period = em.node("Max", [em.node("Mul", [last, em.scalar(2, I64)]), one])
            m = em.node("Mod", [idx, period])
            use = em.node("Where", [em.node("Less", [m, n]), m, em.node("Sub", [period, m])])
        else:
            use = clamped
        x = em.node("Gather", [x, use], {"axis": a})
        if fill is not None:
            inside = em.node("And", [em.node("GreaterOrEqual", [idx, zero]),
                                     em.node("Less", [idx, n])])
            others = [i for i in range(rank) if i != a]
            if others:
                inside = em.node("Unsqueeze", [inside, em.ints(others)])
            x = em.node("Where", [inside, x, fill])
    return x


def _perm(p, rank: int, what: str) -> tuple[int, ...]:
    """The first `rank` entries of permutation `p` (TensorRT's Permutation has 8 entries)."""
    p = tuple(range(rank)) if p is None else tuple(int(i) for i in p)
    if len(p) < rank or sorted(p[:rank]) != list(range(rank)):
        raise ModelError(f"{what}: {p} is not a permutation of {rank} axes")
    return p[:rank]


class ShuffleLayer(Layer):
    """Transpose (`first_transpose`), reshape (`reshape_dims` or the shape tensor set as input
    1; 0 copies the input dimension when `zero_is_placeholder`, -1 is inferred), transpose
    again (`second_transpose`)."""

    _type = LayerType.SHUFFLE
    check_at_creation = False
    shape_inputs = (1,)
    polymorphic = True

    def __init__(self, network, x):
        super().__init__(network, [x])
        self._first = None
        self._reshape_dims = None
        self._second = None
        self.zero_is_placeholder = True

    def max_inputs(self) -> int:
        return 2

    @property
    def first_transpose(self) -> Permutation:
        return Permutation(range(8) if self._first is None else self._first)

    @first_transpose.setter
    def first_transpose(self, p) -> None:
        self._first = None if p is None else int_tuple(self, p, "first_transpose")
        self.network.touch()

    @property
    def second_transpose(self) -> Permutation:
        return Permutation(range(8) if self._second is None else self._second)

    @second_transpose.setter
    def second_transpose(self, p) -> None:
        self._second = None if p is None else int_tuple(self, p, "second_transpose")
        self.network.touch()

    @property
    def reshape_dims(self) -> Dims | None:
        return None if self._reshape_dims is None else Dims(self._reshape_dims)

    @reshape_dims.setter
    def reshape_dims(self, dims) -> None:
        """Setting the dimensions drops a shape tensor set as input 1 (TensorRT)."""
        self._reshape_dims = None if dims is None else int_tuple(self, dims, "reshape_dims")
        if dims is not None and len(self.inputs) > 1:
            del self.inputs[1:]
        self.network.touch()

    def shape_input(self) -> Tensor | None:
        return self.inputs[1] if len(self.inputs) > 1 else None

    def target_dims(self) -> tuple[int, ...] | None:
        """The requested reshape (as given, with 0 / -1 placeholders), None if no reshape,
        or a tuple of -2 (unknown entries) of the shape tensor's length if it is dynamic."""
        st = self.shape_input()
        if st is not None:
            if st.compute_dtype not in _INDEX or len(st.shape) != 1:
                raise ModelError(
                    f"{self.what()}: the shape input must be a 1-D INT32/INT64 tensor, "
                    f"got {st.compute_dtype.name} {tuple(st.shape)}"
                )
            c = st.const_value()
            if c is not None:
                return tuple(int(v) for v in c)
            if st.shape[0] < 0:
                raise ModelError(f"{self.what()}: the shape input must have a known length")
            return (-2,) * st.shape[0]
        return self._reshape_dims

    def infer(self):
        x = self.required_input(0)
        first = _perm(self._first, len(x.shape), f"{self.what()} first_transpose")
        shape = tuple(x.shape[i] for i in first)
        target = self.target_dims()
        if target is not None:
            shape = self._reshape(shape, target)
        second = _perm(self._second, len(shape), f"{self.what()} second_transpose")
        shape = tuple(shape[i] for i in second)
        const = None
        cx = x.const_value()
        if cx is not None and -1 not in shape:
            const = np.transpose(cx, first)
            if target is not None:
                const = const.reshape(tuple(shape[i] for i in np.argsort(second)))
            const = np.transpose(const, second)
        return [(x.compute_dtype, shape, const)]

    def _reshape(self, shape: Shape, target: tuple[int, ...]) -> Shape:
        out = []
        for i, d in enumerate(target):
            if d == -2:
                out.append(-1)
            elif d == 0 and self.zero_is_placeholder:
                if i >= len(shape):
                    raise ModelError(f"{self.what()}: placeholder 0 at axis {i} has no input axis")
                out.append(shape[i])
            elif d < -1:
                raise ModelError(f"{self.what()}: bad reshape dimension {d}")
            else:
                out.append(d)
        if out.count(-1) > 1 and -2 not in target:
            raise ModelError(f"{self.what()}: at most one reshape dimension may be -1: {target}")
        if out.count(-1) == 1 and -2 not in target and -1 not in shape:
            rest = volume([d for d in out if d != -1])
            total = volume(shape)
            if rest == 0 or total % rest:
                raise ModelError(f"{self.what()}: cannot reshape {shape} into {target}")
            out[out.index(-1)] = total // rest
        if -1 not in out and -1 not in shape and volume(out) != volume(shape):
            raise ModelError(f"{self.what()}: cannot reshape {shape} into {tuple(out)}")
        return tuple(out)

    def lower(self, em):
        x_t = self.inputs[0]
        x = em.value(x_t)
        rank = len(x_t.shape)
        first = _perm(self._first, rank, self.what())
        if list(first) != list(range(rank)):
            x = em.node("Transpose", [x], {"perm": list(first)})
        target = self.target_dims()
        if target is not None:
            if -2 in target:
                shape = em.as_int64(self.shape_input())
            else:
                shape = em.ints(target)
            x = em.node("Reshape", [x, shape], {"allowzero": 0 if self.zero_is_placeholder else 1})
        out_rank = len(self.outputs[0].shape)
        second = _perm(self._second, out_rank, self.what())
        if list(second) != list(range(out_rank)):
            x = em.node("Transpose", [x], {"perm": list(second)})
        if x is em.value(x_t):
            x = em.node("Identity", [x])
        return x


class ConcatenationLayer(Layer):
    """Join inputs along `axis` (default: rank - 3, or 0 below rank 3, as in TensorRT)."""

    _type = LayerType.CONCATENATION
    check_at_creation = False
    polymorphic = True

    def __init__(self, network, inputs):
        super().__init__(network, list(inputs))
        if not inputs:
            raise ModelError(f"{self.what()}: needs at least one input")
        self.axis = max(len(inputs[0].shape) - 3, 0)

    def infer(self):
        ts = [self.required_input(i) for i in range(len(self.inputs))]
        rank = len(ts[0].shape)
        axis = norm_axis(self.axis, rank, self.what())
        for t in ts:
            if t.compute_dtype != ts[0].compute_dtype or len(t.shape) != rank:
                raise ModelError(
                    f"{self.what()}: inputs differ in type or rank: "
                    + ", ".join(f"{t.compute_dtype.name}{tuple(t.shape)}" for t in ts)
                )
        shape = []
        for i in range(rank):
            dims = [t.shape[i] for t in ts]
            if i == axis:
                shape.append(-1 if -1 in dims else sum(dims))
            else:
                known = {d for d in dims if d != -1}
                if len(known) > 1:
                    raise ModelError(
                        f"{self.what()}: inputs differ on axis {i}, which is not the "
                        f"concatenation axis {axis}: " + ", ".join(str(t.shape) for t in ts)
                    )
                shape.append(known.pop() if known else -1)
        consts = [t.const_value() for t in ts]
        const = None if any(c is None for c in consts) else np.concatenate(consts, axis=axis)
        return [(ts[0].compute_dtype, tuple(shape), const)]

    def lower(self, em):
        axis = norm_axis(self.axis, len(self.inputs[0].shape), self.what())
        return em.node("Concat", [em.value(t) for t in self.inputs], {"axis": axis})


class SliceLayer(Layer):
    """``out[i] = x[start + i * stride]`` per sliced axis for ``i < shape``.

    `start`, `shape`, `stride` (Python sequences or ``Dims``) may instead come from 1-D tensors
    set as inputs 1, 2, 3; `axes` (or input 5) restricts them to those axes, the others being
    taken whole. `mode` says what an index outside the axis reads: STRICT_BOUNDS (an error),
    WRAP (modulo the length), CLAMP (the nearest end), FILL (input 4, default 0), REFLECT
    (mirrored about the end elements). Setting a Python value drops the matching input.
    """

    _type = LayerType.SLICE
    check_at_creation = False
    shape_inputs = (1, 2, 3, 5)
    polymorphic = True

    def __init__(self, network, x, start, shape, stride):
        super().__init__(network, [x])
        self._params = {1: None, 2: None, 3: None, 5: None}
        self.start, self.shape, self.stride = start, shape, stride
        self._mode = SampleMode.STRICT_BOUNDS

    def max_inputs(self) -> int:
        return 6

    def _set(self, i: int, dims) -> None:
        attr = {1: "start", 2: "shape", 3: "stride", 5: "axes"}[i]
        self._params[i] = None if dims is None else int_tuple(self, dims, attr)
        if len(self.inputs) > i:
            self.inputs[i] = None
        self.network.touch()

    def _get(self, i: int) -> Dims | None:
        if self.get_input(i) is not None:
            return None  # TensorRT: an invalid Dims when the input is set
        p = self._params[i]
        return None if p is None else Dims(p)

    start = property(lambda self: self._get(1), lambda self, v: self._set(1, v))
    shape = property(lambda self: self._get(2), lambda self, v: self._set(2, v))
    stride = property(lambda self: self._get(3), lambda self, v: self._set(3, v))
    axes = property(lambda self: self._get(5), lambda self, v: self._set(5, v))

    @property
    def mode(self) -> SampleMode:
        return self._mode

    @mode.setter
    def mode(self, m) -> None:
        self._mode = check_enum(SampleMode, m, self.what())
        self.network.touch()

    def param(self, i: int) -> tuple[int, ...] | Tensor | None:
        """Input `i` (1 start, 2 shape, 3 stride, 5 axes): a tuple when known at build time."""
        t = self.get_input(i)
        if t is None:
            return self._params[i]
        if t.compute_dtype not in _INDEX or len(t.shape) != 1:
            raise ModelError(
                f"{self.what()}: input {i} must be a 1-D INT32/INT64 tensor, got "
                f"{t.compute_dtype.name} {tuple(t.shape)}"
            )
        c = t.const_value()
        return t if c is None else tuple(int(v) for v in c)

    def resolved(self):
        """(axes, start, shape, stride): the sliced axes (a tuple, every axis when `axes` is
        unset) and per-axis parameters (tuples, or tensors known only at run time)."""
        x = self.required_input(0)
        rank = len(x.shape)
        axes = self.param(5)
        if isinstance(axes, Tensor):
            raise ModelError(f"{self.what()}: the axes input must be a build-time constant")
        axes = tuple(range(rank)) if axes is None else tuple(
            norm_axis(a, rank, f"{self.what()} axes") for a in axes)
        if len(set(axes)) != len(axes):
            raise ModelError(f"{self.what()}: axes {axes} repeat an axis")
        params = []
        for i, name in ((1, "start"), (2, "shape"), (3, "stride")):
            p = self.param(i)
            if p is None:
                raise ModelError(f"{self.what()}: its {name} is not set")
            n = p.shape[0] if isinstance(p, Tensor) else len(p)
            if n != len(axes):
                raise ModelError(f"{self.what()}: {name} has {n} entries for "
                                 f"{len(axes)} sliced axes (input rank {rank})")
            params.append(p)
        return (axes, *params)

    def infer(self):
        x = self.required_input(0)
        rank = len(x.shape)
        axes, start, shape, stride = self.resolved()
        fill = self.get_input(4)
        if fill is not None and self._mode is not SampleMode.FILL:
            raise ModelError(f"{self.what()}: input 4 (the fill value) is only for "
                             "SampleMode.FILL")
        out_shape = list(x.shape)
        for j, a in enumerate(axes):
            out_shape[a] = -1 if isinstance(shape, Tensor) else shape[j]
        static = not any(isinstance(p, Tensor) for p in (start, shape, stride))
        strict = self._mode is SampleMode.STRICT_BOUNDS
        if static and strict:
            for j, a in enumerate(axes):
                n = x.shape[a]
                if shape[j] == 0 or n < 0:
                    continue
                first, last = start[j], start[j] + (shape[j] - 1) * stride[j]
                if not (0 <= first < n and 0 <= last < n):
                    raise ModelError(
                        f"{self.what()}: axis {a} reads indices {first}..{last} outside "
                        f"[0, {n})"
                    )
        const = None
        cx = x.const_value()
        if cx is not None and static and strict:
            idx = [np.arange(d) for d in cx.shape]
            for j, a in enumerate(axes):
                idx[a] = np.arange(shape[j]) * stride[j] + start[j]
            const = cx[np.ix_(*idx)] if rank else cx
        return [(x.compute_dtype, tuple(out_shape), const)]

    def lower(self, em):
        x_t = self.inputs[0]
        x = em.value(x_t)
        if not x_t.shape:
            return em.node("Identity", [x])
        axes, *params = self.resolved()
        if self.mode is not SampleMode.STRICT_BOUNDS:
            return _slice_sampled(self, em, x, axes, params)
        if all(isinstance(p, tuple) for p in params):
            start, shape, stride = params
            ends = []
            for s, n, d in zip(start, shape, stride):
                e = s + n * d
                ends.append(INT64_MIN if e < 0 else e)  # negative step down to index 0
            return em.node("Slice", [x, em.ints(start), em.ints(ends), em.ints(axes),
                                     em.ints(stride)])
        start, shape, stride = (
            em.ints(p) if isinstance(p, tuple) else em.as_int64(p) for p in params
        )
        raw = em.node("Add", [start, em.node("Mul", [shape, stride])])
        neg = em.node("Less", [raw, em.scalar(0, DataType.INT64)])
        ends = em.node("Where", [neg, em.scalar(INT64_MIN, DataType.INT64), raw])
        return em.node("Slice", [x, start, ends, em.ints(axes), stride])


class GatherLayer(Layer):
    """Gather by `mode` (TensorRT's IGatherLayer): DEFAULT ``take(data, indices, axis)``
    (ONNX Gather; with ``num_elementwise_dims = 1`` the leading axis of data and indices is
    a batch axis), ELEMENT (ONNX GatherElements on `axis`), ND (ONNX GatherND with
    ``num_elementwise_dims`` batch axes). A negative index counts from the back of an axis of
    build-time length (as TensorRT does); on an axis known only at run time (TensorRT:
    undefined) it is refused: at build time when the indices are constant, else by an
    out-of-range read at run time."""

    _type = LayerType.GATHER
    check_at_creation = False
    polymorphic = True

    def __init__(self, network, data, indices, axis, mode=GatherMode.DEFAULT):
        super().__init__(network, [data, indices])
        self.axis = int(axis)
        self.num_elementwise_dims = 0
        self._mode = check_enum(GatherMode, mode, self.what())

    @property
    def mode(self) -> GatherMode:
        return self._mode

    @mode.setter
    def mode(self, m) -> None:
        self._mode = check_enum(GatherMode, m, self.what())
        self.network.touch()

    def infer(self):
        data, idx = self.required_input(0), self.required_input(1)
        if idx.compute_dtype not in _INDEX:
            raise ModelError(f"{self.what()}: indices must be INT32/INT64, got "
                             f"{idx.compute_dtype.name}")
        ci = idx.const_value()
        nb = int(self.num_elementwise_dims)
        rank = len(data.shape)
        if ci is not None and np.any(ci < 0) and self._mode is GatherMode.DEFAULT:
            n = data.shape[norm_axis(self.axis, rank, self.what())]
            if n < 0:
                raise ModelError(f"{self.what()}: negative index {ci.min()} on an axis whose "
                                 "length is known only at run time (TensorRT: undefined)")
        if self._mode is GatherMode.ELEMENT:
            if nb or len(idx.shape) != rank:
                raise ModelError(f"{self.what()}: ELEMENT mode needs indices of the data's "
                                 f"rank {rank} and num_elementwise_dims 0")
            norm_axis(self.axis, rank, self.what())
            return [(data.compute_dtype, idx.shape, None)]
        if self._mode is GatherMode.ND:
            q = len(idx.shape)
            if q < 1 or idx.shape[-1] < 0:
                raise ModelError(f"{self.what()}: ND mode needs indices whose last "
                                 "dimension is known at build time")
            k = idx.shape[-1]
            if not 0 <= nb < rank or k > rank - nb:
                raise ModelError(f"{self.what()}: ND indices of depth {k} do not fit data "
                                 f"of rank {rank} with {nb} elementwise dims")
            return [(data.compute_dtype, idx.shape[:-1] + data.shape[nb + k:], None)]
        if nb not in (0, 1):
            raise ModelError(f"{self.what()}: num_elementwise_dims must be 0 or 1 in DEFAULT "
                             f"mode, got {nb}")
        axis = norm_axis(self.axis, rank, self.what())
        if nb:
            if axis == 0 or not idx.shape:
                raise ModelError(f"{self.what()}: with an elementwise dim the axis must be "
                                 "> 0 and the indices must have rank >= 1")
            lead = broadcast([data.shape[:1], idx.shape[:1]], self.what())
            shape = lead + data.shape[1:axis] + idx.shape[1:] + data.shape[axis + 1:]
            return [(data.compute_dtype, shape, None)]
        shape = data.shape[:axis] + idx.shape + data.shape[axis + 1 :]
        cd = data.const_value()
        const = None
        if cd is not None and ci is not None:
            n = cd.shape[axis]
            if np.any((ci >= n) | (ci < -n)):
                raise ModelError(f"{self.what()}: index out of range for axis size {n}")
            const = np.take(cd, ci, axis=axis)
        return [(data.compute_dtype, shape, const)]

    def lower(self, em):
        data_t, idx_t = self.inputs[0], self.inputs[1]
        data, idx = em.value(data_t), em.value(idx_t)
        dynamic_axis = self.mode is GatherMode.DEFAULT and data_t.shape[
            norm_axis(self.axis, len(data_t.shape), self.what())] < 0
        if idx_t.const_value() is None and dynamic_axis:
            # a negative index reads past the end (an error) instead of counting from the back
            neg = em.node("Less", [idx, em.scalar(0, idx_t.compute_dtype)])
            big = em.node("Cast", [em.node("Size", [data])], {"to": ONNX_TYPE[idx_t.compute_dtype]})
            idx = em.node("Where", [neg, big, idx])
        nb = int(self.num_elementwise_dims)
        rank = len(data_t.shape)
        if self.mode is GatherMode.ELEMENT:
            axis = norm_axis(self.axis, rank, self.what())
            return em.node("GatherElements", [data, idx], {"axis": axis})
        if self.mode is GatherMode.ND:
            if idx_t.compute_dtype != DataType.INT64:
                idx = em.node("Cast", [idx], {"to": 7})
            return em.node("GatherND", [data, idx], {"batch_dims": nb})
        axis = norm_axis(self.axis, rank, self.what())
        if not nb:
            return em.node("Gather", [data, idx], {"axis": axis})
        # one elementwise (batch) axis: gather row by row, as GatherND with a batch dim
        if idx_t.compute_dtype != DataType.INT64:
            idx = em.node("Cast", [idx], {"to": 7})
        perm = [0, axis, *[i for i in range(1, rank) if i != axis]]
        moved = em.node("Transpose", [data], {"perm": perm}) if axis != 1 else data
        out = em.node("GatherND", [moved, em.node("Unsqueeze", [idx, em.ints([-1])])],
                      {"batch_dims": 1})
        q = len(idx_t.shape)
        rest = rank - 2  # data axes other than the batch and the gathered one
        back = [0]
        # GatherND gives [batch, index axes (q - 1), data axes of perm[2:]]; TensorRT puts the
        # index axes where `axis` was
        before = [q + k for k in range(axis - 1)]
        after = [q + k for k in range(axis - 1, rest)]
        back += before + list(range(1, q)) + after
        if back != list(range(len(back))):
            out = em.node("Transpose", [out], {"perm": back})
        return out
