"""ONNX mask, index and window ops that OpenVINO has no one op for -> OpenVINO layers.

- ``Trilu``: the mask ``col - row >= k`` (``<= k`` for ``upper=0``) built from two ``Range``
  over the last two dims (``ShapeOf``/``Gather``), broadcast over the batch dims by
  ``Select`` (zeros of the input type elsewhere); ``k`` is 0 without the input, any sign,
  clamped to ``+-2**30`` (through ``f32`` when it is an input: OpenVINO's CPU plugin computes
  i64 in i32, where a larger ``k`` would wrap; no mask changes, dims being smaller). An input
  whose last two dims are statically 0 is returned as is (the plugin corrupts its heap on
  the empty static mask).
- ``Hardmax``: ``TopK-11`` (``k=1``, ``stable``: the first index among ties, as ONNX Runtime)
  along the axis, its indices one-hot (``OneHot-1``, 1/0 of the input type) along a new axis
  beside the kept one, which is then squeezed (the plugin takes no scalar indices, as a 1-D
  input would give). Before opset 13 the input is coerced to 2-D at ``axis`` (default 1):
  flattened to ``[prod(dims[:axis]), prod(dims[axis:])]``, hardmaxed over its second axis,
  reshaped back.
- ``EyeLike``: ``Eye-9`` with the input's dims as rows and columns and ``k`` as the diagonal,
  written in ``f32`` and converted to ``dtype`` (the input's type without it); ``k`` clamped
  to ``+-2**30`` as Trilu's.
- ``LpNormalization`` (``p`` 1 or 2, others refused): ``x / ReduceL1-4``/``ReduceL2-4`` over
  the axis (kept), with 0 where the norm is 0 (ONNX Runtime's value; 0/0 would be NaN).
- ``LpPool``: the window sums of ``|x|^p`` (``x*x`` for ``p=2``) by a ``Convolution`` with a
  kernel of ones on the input seen as ``[N*C, 1, spatial...]`` (so that zeros pad, every
  stride/dilation/``pads``/``auto_pad`` is the convolution's, and no average divisor is
  involved), reshaped back to ``[N, C, ...]``, then the ``1/p`` power (``Sqrt`` for ``p=2``).
  ``ceil_mode=1`` (applied by ONNX Runtime to explicit pads and ``VALID``, not to ``SAME_*``)
  makes ``ceil((in + pads - dk) / s) + 1`` windows, less a last one that would start in the
  end padding; the end padding is set (at run time where the spatial dims are unknown,
  through ``Pad-12``) so that the convolution makes exactly those windows. Any ``p`` of
  LpPool-1's float attribute is taken.
- ``InstanceNormalization``: ``MVN-6`` over axes ``2..rank-1`` (``inside_sqrt`` epsilon,
  variance normalised), times ``scale`` plus ``B`` reshaped to ``[C, 1, ...]``; the rank must
  be known and at least 3.
- ``Scatter`` (opsets 9-10, deprecated): ``ScatterElements`` without reduction
  (``ScatterElementsUpdate-12``, `write_same`).
- ``Upsample`` is read as the ``Resize`` of its meaning (`ir.legacy_forms`), written by
  `sampling.write`.

``ArgMax``/``ArgMin`` with ``select_last_index=1`` are written by `write` (the input
reversed along the axis, the first index ``i`` taken, ``n - 1 - i``).
"""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...elements import to_element_type, to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from .write import _dtype_from_onnx, const_value, rank
from .write_same import _scatter_elements

V1, V3, V4, V8 = "opset1", "opset3", "opset4", "opset8"
I64, BOOL = DataType.INT64, DataType.BOOL
_NUMPY = {"auto_broadcast": "numpy"}
_I64_MAX = np.iinfo(np.int64).max


def _s(v, default: str) -> str:
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


def _npdt(o: Out):
    return to_numpy(o.dtype) if o.dtype is not None else np.float32


def _shape_of(w: NetWriter, x: Out) -> Out:
    return w.one("ShapeOf", V3, [x], {"output_type": "i64"}, dtype=I64,
                 shape=(rank(x),) if rank(x) is not None else (None,))


def _dim(w: NetWriter, shape: Out, axis: int) -> Out:
    """Dim `axis` (negative counts from the end) of the i64 shape vector `shape`, a scalar."""
    return w.one("Gather", V8, [shape, w.i64(axis), w.i64(0)], {"batch_dims": 0}, dtype=I64,
                 shape=())


def _tail(w: NetWriter, shape: Out, start: int) -> Out:
    return w.one("Slice", V8, [shape, w.i64([start]), w.i64([_I64_MAX]), w.i64([1])],
                 dtype=I64, shape=(None,))


def _range(w: NetWriter, n: Out) -> Out:
    return w.one("Range", V4, [w.i64(0), n, w.i64(1)], {"output_type": "i64"}, dtype=I64,
                 shape=(None,))


def _bin(w: NetWriter, op: str, a: Out, b: Out, dtype=None, shape=None) -> Out:
    return w.one(op, V1, [a, b], _NUMPY, dtype=dtype or a.dtype, shape=shape)


# -- Trilu -------------------------------------------------------------------------------------


# |k| beyond the matrix dims changes no mask: k is kept within i32, as OpenVINO's CPU plugin
# computes i64 tensors in i32 (a larger k would wrap)
_K_LIMIT = 2 ** 30


def _trilu_k(w: NetWriter, node: Node, k_in: Out | None) -> Out:
    if k_in is None:
        return w.i64(0)
    c = const_value(node, 1)
    if c is not None:
        return w.i64(int(np.clip(np.asarray(c, np.int64).reshape(()), -_K_LIMIT, _K_LIMIT)))
    # the plugin reads an i64 input into f32 exactly enough; clamped there, then made i64
    kf = w.one("Convert", V1, [w.scalar(k_in)], {"destination_type": "f32"},
               dtype=DataType.FLOAT32, shape=())
    kf = w.one("Clamp", V1, [kf], {"min": float(-_K_LIMIT), "max": float(_K_LIMIT)},
               dtype=DataType.FLOAT32, shape=())
    return w.one("Convert", V1, [kf], {"destination_type": "i64"}, dtype=I64, shape=())


@exporter("Trilu", since=14)
def _trilu(w: NetWriter, node: Node, ins):
    x = ins[0]
    if rank(x) is not None and rank(x) < 2:
        raise UnsupportedError(f"{where(node)}: Trilu needs an input of rank 2 or more")
    if x.shape is not None and 0 in x.shape[-2:]:
        # empty: OpenVINO 2026.4's CPU plugin corrupts its heap on the empty static mask
        return x
    k_in = ins[1] if len(ins) > 1 else None
    k = _trilu_k(w, node, k_in)
    shape = _shape_of(w, x)
    rows = w.one("Unsqueeze", V1, [_range(w, _dim(w, shape, -2)), w.i64([1])], dtype=I64,
                 shape=(None, 1))
    cols = _range(w, _dim(w, shape, -1))
    diag = _bin(w, "Subtract", cols, rows, shape=(None, None))  # col - row, [N, M]
    op = "GreaterEqual" if attr_or_default(node, "upper") else "LessEqual"
    keep = _bin(w, op, diag, k, dtype=BOOL, shape=(None, None))
    zero = w.const(np.zeros((), _npdt(x)), x.dtype)
    return w.one("Select", V1, [keep, x, zero], _NUMPY, dtype=x.dtype, shape=x.shape)


# -- Hardmax -----------------------------------------------------------------------------------


def _hardmax(w: NetWriter, x: Out, axis: int) -> Out:
    """1 at the first maximum along `axis` of `x`, 0 elsewhere."""
    idx = w.layer("TopK", "opset11", [x, w.i64(1)],
                  {"axis": axis, "mode": "max", "sort": "value", "index_element_type": "i64",
                   "stable": True}, [(x.dtype, None), (I64, None)])[1]
    depth = _dim(w, _shape_of(w, x), axis)
    on = w.const(np.ones((), _npdt(x)), x.dtype)
    off = w.const(np.zeros((), _npdt(x)), x.dtype)
    # one-hot along a new axis beside the kept one of TopK, which is then squeezed: the CPU
    # plugin takes no scalar indices (a 1-D input)
    y = w.one("OneHot", V1, [idx, depth, on, off], {"axis": axis}, dtype=x.dtype)
    return w.one("Squeeze", V1, [y, w.i64([axis + 1 if axis >= 0 else axis - 1])],
                 dtype=x.dtype, shape=x.shape)


def _hardmax_tr(legacy: bool):
    def tr(w: NetWriter, node: Node, ins):
        x = ins[0]
        axis = int(node.attrs.get("axis", 1 if legacy else -1))
        r = rank(x)
        if r is not None and not -r <= axis < r:
            raise UnsupportedError(f"{where(node)}: axis {axis} out of range for rank {r}")
        if not legacy or axis == -1 or (r is not None and axis == r - 1):
            return _hardmax(w, x, axis)
        # coerced to 2-D: [prod(dims[:axis]), prod(dims[axis:])]
        shape = _shape_of(w, x)
        if axis == 0 or (r is not None and axis == -r):
            pattern = w.i64([1, -1])
        else:
            head = w.one("Slice", V8, [shape, w.i64([0]), w.i64([axis]), w.i64([1])],
                         dtype=I64, shape=(None,))
            prod = w.one("ReduceProd", V1, [head, w.i64([0])], {"keep_dims": True}, dtype=I64,
                         shape=(1,))
            pattern = w.one("Concat", V1, [prod, w.i64([-1])], {"axis": 0}, dtype=I64,
                            shape=(2,))
        flat = w.one("Reshape", V1, [x, pattern], {"special_zero": False}, dtype=x.dtype,
                     shape=(None, None))
        y = _hardmax(w, flat, 1)
        return w.one("Reshape", V1, [y, shape], {"special_zero": False}, dtype=x.dtype,
                     shape=x.shape)

    return tr


exporter("Hardmax", since=1)(_hardmax_tr(legacy=True))
exporter("Hardmax", since=13)(_hardmax_tr(legacy=False))


# -- EyeLike -----------------------------------------------------------------------------------


@exporter("EyeLike", since=9)
def _eye_like(w: NetWriter, node: Node, ins):
    x = ins[0]
    if rank(x) is not None and rank(x) != 2:
        raise UnsupportedError(f"{where(node)}: EyeLike needs a 2-D input")
    dt = _dtype_from_onnx(node, node.attrs["dtype"]) if "dtype" in node.attrs else x.dtype
    if dt is None:
        raise UnsupportedError(f"{where(node)}: the element type of EyeLike's output is "
                               "unknown")
    to_element_type(dt, where(node))  # refuses a type OpenVINO has not
    shape = _shape_of(w, x)
    k = w.i64(int(np.clip(int(attr_or_default(node, "k")), -_K_LIMIT, _K_LIMIT)))
    out_shape = x.shape
    eye = w.one("Eye", "opset9", [_dim(w, shape, 0), _dim(w, shape, 1), k],
                {"output_type": "f32"}, dtype=DataType.FLOAT32, shape=out_shape)
    if dt == DataType.FLOAT32:
        return eye
    return w.one("Convert", V1, [eye], {"destination_type": to_element_type(dt, where(node))},
                 dtype=dt, shape=out_shape)


# -- LpNormalization ---------------------------------------------------------------------------


@exporter("LpNormalization", since=1)
def _lp_normalization(w: NetWriter, node: Node, ins):
    x = ins[0]
    p = int(attr_or_default(node, "p"))
    if p not in (1, 2):
        raise UnsupportedError(f"{where(node)}: LpNormalization p={p} (ONNX allows 1 or 2)")
    axis = int(attr_or_default(node, "axis"))
    norm = w.one(f"ReduceL{p}", V4, [x, w.i64([axis])], {"keep_dims": True}, dtype=x.dtype)
    y = _bin(w, "Divide", x, norm, shape=x.shape)
    zero = w.const(np.zeros((), _npdt(x)), x.dtype)
    null = _bin(w, "Equal", norm, zero, dtype=BOOL)
    return w.one("Select", V1, [null, zero, y], _NUMPY, dtype=x.dtype, shape=x.shape)


# -- LpPool ------------------------------------------------------------------------------------

_AUTO = {"NOTSET": "explicit", "VALID": "valid", "SAME_UPPER": "same_upper",
         "SAME_LOWER": "same_lower"}


def _ceil_pads_end(w: NetWriter, x: Out, n: int, dk, s, pb, pe):
    """The end pads that make a floor-mode window count equal ONNX Runtime's ``ceil_mode``
    count: ``ceil((in + pb + pe - dk) / s) + 1`` windows, less the last one where it would
    start in the end padding. A list where the spatial dims are static, else an i64 port."""
    dims = None if x.shape is None else list(x.shape[2:])
    if dims is not None and len(dims) == n and all(isinstance(d, int) for d in dims):
        out = []
        for i in range(n):
            span = dims[i] + pb[i] + pe[i] - dk[i]
            o = -(-span // s[i]) + 1
            if (o - 1) * s[i] >= dims[i] + pb[i]:
                o -= 1
            out.append((o - 1) * s[i] + dk[i] - dims[i] - pb[i])
        return out
    size = _tail(w, _shape_of(w, x), 2)
    vec = w.i64
    start_bound = _bin(w, "Add", size, vec(pb))
    span = _bin(w, "Subtract", _bin(w, "Add", start_bound, vec(pe)), vec(dk))
    # ceil(span / s) as floor((span + s - 1) / s): python division floors
    o = w.one("Divide", V1, [_bin(w, "Add", span, vec([v - 1 for v in s])), vec(s)],
              {"auto_broadcast": "numpy", "m_pythondiv": True}, dtype=I64)
    last = _bin(w, "Multiply", o, vec(s))  # start of window number o + 1 (0-based o)
    drop = _bin(w, "GreaterEqual", last, start_bound, dtype=BOOL)
    o = w.one("Select", V1, [drop, _bin(w, "Subtract", o, vec(1)), o], _NUMPY, dtype=I64)
    return _bin(w, "Subtract", _bin(w, "Add", _bin(w, "Multiply", o, vec(s)), vec(dk)),
                start_bound)


@exporter("LpPool", since=1)
def _lp_pool(w: NetWriter, node: Node, ins):
    a = node.attrs
    x = ins[0]
    if "kernel_shape" not in a:
        raise UnsupportedError(f"{where(node)}: LpPool without kernel_shape")
    kernel = [int(v) for v in a["kernel_shape"]]
    n = len(kernel)
    strides = [int(v) for v in a.get("strides") or [1] * n]
    dil = [int(v) for v in a.get("dilations") or [1] * n]
    pads = [int(v) for v in a.get("pads") or [0] * (2 * n)]
    auto_name = _s(a.get("auto_pad"), "NOTSET")
    if auto_name not in _AUTO:
        raise UnsupportedError(f"{where(node)}: auto_pad '{auto_name}'")
    auto = _AUTO[auto_name]
    pb, pe = pads[:n], pads[n:]
    if auto != "explicit":
        pb, pe = [0] * n, [0] * n
    p = float(a.get("p", 2))
    if p <= 0:
        raise UnsupportedError(f"{where(node)}: LpPool p={p}")
    npdt = _npdt(x)
    if p == 2:
        powed = _bin(w, "Multiply", x, x, shape=x.shape)
    else:
        powed = w.one("Abs", V1, [x], dtype=x.dtype, shape=x.shape)
        if p != 1:
            powed = _bin(w, "Power", powed, w.const(np.array(p, npdt), x.dtype), shape=x.shape)
    shape = _shape_of(w, x)
    flat_shape = w.one("Concat", V1, [w.i64([-1, 1]), _tail(w, shape, 2)], {"axis": 0},
                       dtype=I64, shape=(n + 2,))
    flat = w.one("Reshape", V1, [powed, flat_shape], {"special_zero": False}, dtype=x.dtype)
    if a.get("ceil_mode", 0) and auto in ("explicit", "valid"):
        dk = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
        ends = _ceil_pads_end(w, x, n, dk, strides, pb, pe)
        auto = "explicit"
        if isinstance(ends, list) and min(ends) >= 0:
            pe = ends
        else:  # zeros padded (or the end cropped) before the convolution
            end = w.i64(ends) if isinstance(ends, list) else ends
            end = w.one("Concat", V1, [w.i64([0, 0]), end], {"axis": 0}, dtype=I64,
                        shape=(n + 2,))
            flat = w.one("Pad", "opset12", [flat, w.i64([0, 0] + pb), end,
                                            w.const(np.zeros((), npdt), x.dtype)],
                         {"pad_mode": "constant"}, dtype=x.dtype)
            pb, pe = [0] * n, [0] * n
    ones = w.const(np.ones([1, 1, *kernel], npdt), x.dtype)
    sums = w.one("Convolution", V1, [flat, ones],
                 {"strides": strides, "dilations": dil, "pads_begin": pb, "pads_end": pe,
                  "auto_pad": auto}, dtype=x.dtype)
    out_shape = w.one("Concat", V1, [
        w.one("Slice", V8, [shape, w.i64([0]), w.i64([2]), w.i64([1])], dtype=I64, shape=(2,)),
        _tail(w, _shape_of(w, sums), 2)], {"axis": 0}, dtype=I64, shape=(n + 2,))
    sums = w.one("Reshape", V1, [sums, out_shape], {"special_zero": False}, dtype=x.dtype)
    if p == 1:
        return sums
    if p == 2:
        return w.one("Sqrt", V1, [sums], dtype=x.dtype)
    return _bin(w, "Power", sums, w.const(np.array(1.0 / p, npdt), x.dtype))


# -- InstanceNormalization ---------------------------------------------------------------------


@exporter("InstanceNormalization", since=1)
def _instance_norm(w: NetWriter, node: Node, ins):
    x, scale, bias = ins[:3]
    r = rank(x)
    if r is None or r < 3:
        raise UnsupportedError(f"{where(node)}: InstanceNormalization needs an input of known "
                               "rank, 3 or more")
    eps = float(attr_or_default(node, "epsilon"))
    y = w.one("MVN", "opset6", [x, w.i64(list(range(2, r)))],
              {"normalize_variance": True, "eps": eps, "eps_mode": "inside_sqrt"},
              dtype=x.dtype, shape=x.shape)
    per_channel = w.i64([-1] + [1] * (r - 2))
    s = w.one("Reshape", V1, [scale, per_channel], {"special_zero": False}, dtype=scale.dtype)
    b = w.one("Reshape", V1, [bias, per_channel], {"special_zero": False}, dtype=bias.dtype)
    return _bin(w, "Add", _bin(w, "Multiply", y, s, shape=x.shape), b, shape=x.shape)


# -- Scatter -----------------------------------------------------------------------------------

exporter("Scatter", since=9)(_scatter_elements)
