"""ONNX quantization ops -> OpenVINO layers, with ONNX Runtime's integer results exactly.

OpenVINO's CPU plugin computes a float ``Divide`` as a product with the reciprocal, an ``i32``
``MatMul`` or ``ReduceSum`` in f32, and drops a ``Convert`` to f16 and back; its f32 ``Add``,
``Subtract``, ``Multiply``, ``Floor``, ``Round`` and comparisons, and its i32 ``Add`` and
``Multiply``, are exact. The translators rest on those alone where a result must be exact:

- ``QuantizeLinear`` (opsets 10 to 28): ``y = clamp(rne(fl(x / y_scale)) + y_zero_point)``
  in f32, as ONNX Runtime computes it (also for float16/bfloat16 ``x``). The quotient is taken
  as ``x * (1 / y_scale)``, rounded, then corrected exactly: whether ``fl(x / y_scale)``
  reaches the half-integer next to it is decided by the sign of ``x - M * y_scale`` (``M`` the
  rounding threshold, from a small table), summed exactly from products with ``y_scale`` cut
  into pieces of a few bits (its binary exponent found by ``Log`` and checked against a table of
  powers of two). Per-tensor, per-axis (1-D scale along ``axis``, negative allowed) and blocked
  (``block_size``: the scale repeated along ``axis`` by ``Gather``) scales, constant or
  computed; outputs uint8, int8, uint16, int16, uint4, int4. ``precision`` float16 (8-bit
  outputs) casts ``x`` and the scale to float16 and rounds the float16 quotient, as ONNX does.
  Refused, naming the node: float8/float4/float6 outputs, 2-bit outputs, ``precision`` other
  than float32/float16.
- ``DequantizeLinear``: ``(x - x_zero_point) * x_scale`` in f32 (int32 ``x`` subtracts its zero
  point in i32 first), converted to ``output_dtype`` or the scale's type; the same per-axis and
  blocked forms. Constant weights whose scale varies along another axis than the last are
  written dequantized (OpenVINO's compressed weights in front of a ``MatMul`` scale the inner
  dimension wrongly); other constant weights stay compressed. 4-bit, float8 (e4m3fn, e5m2)
  and float4 (e2m1) inputs, constant or computed; the fnuz float8 types and 2-bit inputs are
  refused.
- ``MatMulInteger``, ``ConvInteger``: ``(a - a_zero_point)`` and ``(b - b_zero_point)`` as
  integer-valued f32 and one f32 ``MatMul``/``Convolution`` where no partial sum can pass 2**24
  (the bound from the types and zero points and, for a constant ``b``/``w``, its values);
  otherwise ``b`` (and, if still needed, ``a``) is cut into 4-bit halves, ``b = 16 * bh + bl``,
  and the two (four) products, each exact in f32, are combined in i32. Refused: sums that
  would still not be exact (more than 65536 products per output), or an unknown inner
  dimension where the bound needs it. Per-row ``a_zero_point`` (1-D ``[M]``), per-column
  ``b_zero_point`` (``[N]``) and per-output-channel ``w_zero_point`` are kept. These are the
  exact products: ONNX Runtime's own uint8 x int8 kernels saturate on CPUs without VNNI.
- ``QLinearMatMul``, ``QLinearConv``: the integer product as above (plus the int32 bias of
  ``QLinearConv``), then ``clamp(rne(fl(float(acc) * m)) + y_zero_point)`` with
  ``m = fl(fl(a_scale * b_scale) / y_scale)`` in f32, ONNX Runtime's requantization; ``m`` is
  computed here when the scales are constants, else by an exact long division (24 steps on
  the scale tensors). Float16 scales are widened to f32, as ONNX Runtime does.
- ``DynamicQuantizeLinear``: ``y_scale = fl((max(x, 0) - min(x, 0)) / 255)`` (exact long
  division; 1 where the range is 0, as ONNX Runtime), ``y_zero_point`` and ``y`` through the
  exact quantizing above.

Limits: scales must be positive normal floats; NaN inputs give an unspecified integer; the
f32 ``MatMul``/``Convolution`` are exact only when the CPU plugin runs them in f32
(``INFERENCE_PRECISION_HINT`` f32, the default on CPUs without bf16/f16 arithmetic).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from .....errors import ModelError, UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...elements import to_element_type
from ...export_table import exporter
from ...net_writer import NetWriter, Out, value_shape
from ..basic.write import V1, V3, V5, V8, const_value, rank
from ..conv.write import _spatial, _static, _window

F32, F16, I32, I64, BOOL = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT32,
                            DataType.INT64, DataType.BOOL)
_RANGES = {DataType.UINT8: (0, 255), DataType.INT8: (-128, 127),
           DataType.UINT16: (0, 65535), DataType.INT16: (-32768, 32767),
           DataType.UINT4: (0, 15), DataType.INT4: (-8, 7), DataType.UINT2: (0, 3),
           DataType.INT2: (-2, 1)}
_QUANT_OUT = (DataType.UINT8, DataType.INT8, DataType.UINT16, DataType.INT16, DataType.UINT4,
              DataType.INT4)
_FLOAT_IN = (DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16)
_EXACT = float(2 ** 24)  # f32 holds every integer up to this magnitude
#: the inner dimension an integer product is written for when it is known only at run time:
#: the four-way 4-bit split sums up to 2**16 products exactly, twice the 33,025 products of
#: 8-bit values that ONNX Runtime's own int32 accumulator holds in the worst case
_UNKNOWN_TERMS = 2 ** 16


# -- small layer helpers ---------------------------------------------------------------------
def _broadcast(a: tuple | None, b: tuple | None) -> tuple | None:
    """The numpy broadcast of two port shapes (None: unknown rank; None dims unknown), stated
    on the ports so that a reader of the IR sees the ranks (a port without dims is a scalar)."""
    if a is None or b is None:
        return None
    a, b = (1,) * (len(b) - len(a)) + tuple(a), (1,) * (len(a) - len(b)) + tuple(b)
    return tuple(y if x == 1 else x if y == 1 else x if x == y else None
                 for x, y in zip(a, b))


def _bin(w: NetWriter, op: str, a: Out, b: Out, dt: DataType | None = None) -> Out:
    return w.one(op, V1, [a, b], {"auto_broadcast": "numpy"}, dtype=dt or a.dtype,
                 shape=_broadcast(a.shape, b.shape))


def _cvt(w: NetWriter, o: Out, dt: DataType) -> Out:
    if o.dtype == dt:
        return o
    return w.one("Convert", V1, [o], {"destination_type": to_element_type(dt)}, dtype=dt,
                 shape=o.shape)


def _f(w: NetWriter, value) -> Out:
    return w.const(np.asarray(value, np.float32))


def _un(w: NetWriter, op: str, o: Out, data: dict | None = None, version: str = V1) -> Out:
    return w.one(op, version, [o], data, dtype=o.dtype, shape=o.shape)


def _round(w: NetWriter, o: Out) -> Out:
    return _un(w, "Round", o, {"mode": "half_to_even"}, V5)


def _clamp(w: NetWriter, o: Out, lo: float, hi: float) -> Out:
    return _un(w, "Clamp", o, {"min": float(lo), "max": float(hi)})


def _flag(w: NetWriter, b: Out) -> Out:
    """A boolean as 0.0/1.0."""
    return _cvt(w, b, F32)


def _gather(w: NetWriter, table: np.ndarray, idx_f: Out) -> Out:
    """``table[idx]`` for an integer-valued f32 index tensor."""
    idx = _cvt(w, idx_f, I32)
    return w.one("Gather", V8, [w.const(table), idx, w.i64(0)], {"batch_dims": 0},
                 dtype=DataType.from_numpy(table.dtype), shape=idx.shape)


_POW2 = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)


def _pow2(w: NetWriter, e: Out) -> Out:
    """``2**e`` exactly for an integer-valued f32 `e` in [-149, 127]."""
    return _gather(w, _POW2, _bin(w, "Add", _clamp(w, e, -149, 127), _f(w, 149)))


def _exponent(w: NetWriter, v: Out) -> Out:
    """``floor(log2(v))`` exactly for positive normal f32 `v` (``Log``, then checked against
    the exact powers of two on either side)."""
    lg = _bin(w, "Multiply", _un(w, "Log", v), _f(w, 1 / math.log(2)))
    e0 = _clamp(w, _un(w, "Floor", lg), -126, 127)
    p = _pow2(w, e0)
    below = _flag(w, _bin(w, "Less", v, p, BOOL))
    above = _flag(w, _bin(w, "GreaterEqual", v, _bin(w, "Multiply", p, _f(w, 2)), BOOL))
    return _bin(w, "Add", _bin(w, "Subtract", e0, below), above)


def _normalized(w: NetWriter, v: Out) -> tuple[Out, Out, Out]:
    """``(v * 2**-e, 2**-e, e)`` with ``e = floor(log2(v))``: the first in [1, 2)."""
    e = _exponent(w, v)
    inv = _pow2(w, _un(w, "Negative", e))
    return _bin(w, "Multiply", v, inv), inv, e


def _pieces(w: NetWriter, s: Out, bits: int) -> list[Out]:
    """`s` in [1, 2) as a sum of pieces of at most `bits` significant bits each, exactly."""
    out, prev, k = [], None, 1
    while k * bits < 24:
        sc = float(2 ** (k * bits - 1))
        t = _bin(w, "Multiply", _un(w, "Floor", _bin(w, "Multiply", s, _f(w, sc))),
                 _f(w, 1 / sc))
        out.append(t if prev is None else _bin(w, "Subtract", t, prev))
        prev, k = t, k + 1
    out.append(s if prev is None else _bin(w, "Subtract", s, prev))
    return out


def _to_f16(w: NetWriter, v: Out) -> Out:
    """f32 `v` rounded to the nearest float16 value, kept in f32 (OpenVINO drops a Convert to
    f16 and back as a no-op): significand rounded half to even at the f16 exponent."""
    e = _bin(w, "Maximum", _exponent(w, _un(w, "Abs", v)), _f(w, -14.0))
    r = _bin(w, "Multiply", _round(w, _bin(w, "Multiply", v, _pow2(w, _bin(
        w, "Subtract", _f(w, 10.0), e)))), _pow2(w, _bin(w, "Subtract", e, _f(w, 10.0))))
    big = _bin(w, "Greater", _un(w, "Abs", r), _f(w, 65504.0), BOOL)
    inf = _bin(w, "Multiply", _un(w, "Sign", v), _f(w, np.inf))
    return w.one("Select", V1, [big, inf, r], {"auto_broadcast": "numpy"}, dtype=F32)


# -- exact quantizing ------------------------------------------------------------------------
def _bits(n: float) -> int:
    """Significant bits of the dyadic number `n`."""
    if n == 0:
        return 0
    m, _ = math.frexp(abs(n))
    b = 0
    while m != int(m):
        m *= 2
        b += 1
    return max(b, 1)


def _most_bits(a: np.ndarray) -> int:
    """The most significant bits (`_bits`) of any of the dyadic numbers in `a`."""
    m, _ = np.frexp(np.abs(a.astype(np.float64)))
    k = (m * 2.0 ** 53).astype(np.uint64)[m != 0]  # m = k / 2**53 exactly
    if k.size == 0:
        return 0
    low = k & (~k + np.uint64(1))  # the lowest set bit of each
    return max(int(53 - np.log2(low.astype(np.float64)).min()), 1)


@cache
def _round_tables(span: int, precision: str):
    """For ``j`` in ``[-span, span]``: ``delta[j]`` and ``incl[j]`` such that
    ``rne(fl_P(t)) >= j`` iff ``t > c + delta`` or (``t == c + delta`` and ``incl``), where
    ``c = j - 0.5`` and ``fl_P`` rounds to `precision` (float32 or float16); and the most
    significant bits of any ``delta`` (`_bits`). Built once per span and precision (an int16
    span has 131,075 entries; a quantized encoder quantizes dozens of times)."""
    dt = np.dtype(precision)
    js = np.arange(-span, span + 1, dtype=np.float64)
    c = js - 0.5
    down, up = np.full(js.shape, -np.inf, dt), np.full(js.shape, np.inf, dt)
    v = c.astype(dt)  # becomes the smallest P value that rounds to j or more
    for _ in range(8):
        prev = np.nextafter(v, down)
        move = np.rint(prev.astype(np.float64)) >= js
        v = np.where(move, prev, v)
    for _ in range(8):
        move = np.rint(v.astype(np.float64)) < js
        v = np.where(move, np.nextafter(v, up), v)
    if np.any(np.rint(v.astype(np.float64)) < js) or \
            np.any(np.rint(np.nextafter(v, down).astype(np.float64)) >= js):
        raise ModelError("internal: rounding thresholds not found")
    m = (v.astype(np.float64) + np.nextafter(v, down).astype(np.float64)) / 2
    delta = m - c
    if np.any(delta.astype(np.float32).astype(np.float64) != delta):
        raise ModelError("internal: rounding threshold not exact in f32")
    bits = v.view(np.uint16 if dt == np.float16 else np.uint32)
    incl = (bits % 2 == 0).astype(np.float32)  # a tie at m rounds to the even neighbour
    delta = delta.astype(np.float32)
    for t in (delta, incl):
        t.setflags(write=False)
    return delta, incl, _most_bits(delta)


def _quantize(w: NetWriter, x: Out, s: Out, zp: Out | None, lo: int, hi: int,
              precision: np.dtype = np.float32) -> Out:
    """``clamp(rne(fl_P(x / s)) + zp, lo, hi)`` exactly, as integer-valued f32; `x`, `s`, `zp`
    f32 and broadcastable, `s` positive normal."""
    span = hi - lo + 2
    q0 = _clamp(w, _bin(w, "Multiply", x, _bin(w, "Divide", _f(w, 1.0), s)), -span, span)
    r0 = _round(w, q0)
    # the true rounding is r0 or its neighbour across the half-integer q0 lies next to:
    # rne(.) = j - 1 + [rne(.) >= j] with j = r0 + [q0 >= r0]
    j = _bin(w, "Add", r0, _flag(w, _bin(w, "GreaterEqual", q0, r0, BOOL)))
    c = _bin(w, "Subtract", j, _f(w, 0.5))
    delta_t, incl_t, dbits = _round_tables(span + 1, np.dtype(precision).name)
    idx = _bin(w, "Add", j, _f(w, span + 1))
    delta, incl = _gather(w, delta_t, idx), _gather(w, incl_t, idx)
    # sign of x - (c + delta) * s, exactly: scaled by 2**-e(s), s cut into pieces so that
    # every product with c or delta is exact
    sn, inv, _ = _normalized(w, s)
    e = _bin(w, "Multiply", x, inv)
    cbits = _bits(2 * span + 1)
    pieces = _pieces(w, sn, 24 - max(cbits, dbits))
    for piece in pieces:
        e = _bin(w, "Subtract", e, _bin(w, "Multiply", c, piece))
    for piece in [sn] if dbits == 1 else pieces:  # a power of two times sn is exact
        e = _bin(w, "Subtract", e, _bin(w, "Multiply", delta, piece))
    reached = _beyond(w, e, _f(w, 0.0), incl)
    r = w.one("Select", V1, [reached, j, _bin(w, "Subtract", j, _f(w, 1.0))],
              {"auto_broadcast": "numpy"}, dtype=F32)
    if zp is not None:
        r = _bin(w, "Add", r, zp)
    return _clamp(w, r, lo, hi)


def _beyond(w: NetWriter, a: Out, b: Out, tie: Out) -> Out:
    """``a > b``, or ``a == b`` where `tie` (0 or 1) is 1: a rounding decision at a tie."""
    return w.one("LogicalOr", V1, [
        _bin(w, "Greater", a, b, BOOL),
        w.one("LogicalAnd", V1, [_bin(w, "Equal", a, b, BOOL),
                                 _bin(w, "Greater", tie, _f(w, 0.5), BOOL)],
              {"auto_broadcast": "numpy"}, dtype=BOOL)], {"auto_broadcast": "numpy"},
        dtype=BOOL)


def _exact_div(w: NetWriter, u: Out, v: Out) -> Out:
    """``fl(u / v)`` in f32 exactly (normal operands and result), by long division of the
    significands; meant for scale tensors, not activations (some 200 small layers)."""
    au, av = _un(w, "Abs", u), _un(w, "Abs", v)
    un, _, eu = _normalized(w, au)
    vn, _, ev = _normalized(w, av)
    lt = _flag(w, _bin(w, "Less", un, vn, BOOL))
    rem = _bin(w, "Multiply", un, _bin(w, "Add", lt, _f(w, 1.0)))
    exp = _bin(w, "Subtract", _bin(w, "Subtract", eu, ev), lt)
    q = None
    two = _f(w, 2.0)
    for i in range(24):
        if i:
            rem = _bin(w, "Multiply", rem, two)
        bit = _bin(w, "GreaterEqual", rem, vn, BOOL)
        rem = w.one("Select", V1, [bit, _bin(w, "Subtract", rem, vn), rem],
                    {"auto_broadcast": "numpy"}, dtype=F32)
        # Select (which OpenVINO's CPU plugin does not fuse into its generated eltwise kernels)
        # keeps each step's kernel small: one long fused chain runs out of registers
        q = _flag(w, bit) if q is None else w.one(
            "Select", V1, [bit, _bin(w, "Add", _bin(w, "Multiply", q, two), _f(w, 1.0)),
                           _bin(w, "Multiply", q, two)], {"auto_broadcast": "numpy"}, dtype=F32)
    rem = _bin(w, "Multiply", rem, two)  # twice the remainder, against the divisor
    odd = _bin(w, "Subtract", q, _bin(w, "Multiply", _un(w, "Floor", _bin(
        w, "Multiply", q, _f(w, 0.5))), two))
    up = _beyond(w, rem, vn, odd)
    q = _bin(w, "Add", q, _flag(w, up))
    # q * 2**(exp - 23), in two exact steps (the result may be near either end of the range)
    half = _un(w, "Floor", _bin(w, "Multiply", exp, _f(w, 0.5)))
    t = _bin(w, "Multiply", _bin(w, "Multiply", q, _pow2(w, _bin(w, "Subtract", half,
                                                                   _f(w, 23.0)))),
             _pow2(w, _bin(w, "Subtract", exp, half)))
    sign = _bin(w, "Multiply", _un(w, "Sign", u), _un(w, "Sign", v))
    return _bin(w, "Multiply", t, sign)


# -- operands ---------------------------------------------------------------------------------
def _in(ins, i: int) -> Out | None:
    return ins[i] if i < len(ins) else None


def _const(node: Node, i: int) -> np.ndarray | None:
    c = const_value(node, i)
    return None if c is None else np.asarray(c)


def _axis(node: Node, x: Out) -> int:
    """``axis`` (default 1), made non-negative where the rank of `x` is known."""
    axis = int(node.attrs.get("axis", 1))
    r = rank(x)
    if r is None:
        return axis
    if not -r <= axis < max(r, 1):
        raise ModelError(f"{where(node)}: axis {axis} out of range for rank {r}")
    return axis + r if axis < 0 else axis


def _broadcastable(w: NetWriter, node: Node, p: Out | None, x: Out, block: int) -> Out | None:
    """A scale or zero point shaped to broadcast against `x`: a scalar as is, a 1-D tensor
    along ``axis``, a blocked one repeated ``block_size`` times along ``axis``."""
    if p is None:
        return None
    pr = rank(p)
    if block > 0:
        axis = _axis(node, x)
        if pr is not None and rank(x) is not None and pr != rank(x):
            raise ModelError(f"{where(node)}: a blocked scale has the input's rank "
                             f"({rank(x)}), not {pr}")
        d = x.shape[axis] if x.shape is not None else None
        if isinstance(d, int):
            idx = w.i64(np.arange(d) // block)
        else:
            size = w.one("Gather", V8, [w.one("ShapeOf", V3, [x], {"output_type": "i64"},
                                              dtype=I64), w.i64(axis), w.i64(0)],
                         {"batch_dims": 0}, dtype=I64, shape=())
            rng = w.one("Range", "opset4", [w.i64(0), size, w.i64(1)],
                        {"output_type": "i64"}, dtype=I64, shape=(None,))
            idx = w.one("Divide", V1, [rng, w.i64(block)],
                        {"auto_broadcast": "numpy", "m_pythondiv": True}, dtype=I64)
        return w.one("Gather", V8, [p, idx, w.i64(axis)], {"batch_dims": 0}, dtype=p.dtype)
    if pr == 0:
        return p
    if pr is not None and pr != 1:
        raise UnsupportedError(f"{where(node)}: a scale of rank {pr} without block_size")
    if pr == 1 and p.shape[0] == 1 or rank(x) == 0:
        return w.scalar(p)  # one element: per tensor
    # per axis (a scalar of unknown rank is reshaped the same way, to ones)
    r, axis = rank(x), int(node.attrs.get("axis", 1))
    if pr is None and r is not None and not -r <= axis < r:
        return w.scalar(p)  # only a per-tensor scale fits
    axis = _axis(node, x)
    if rank(x) is not None or axis < 0:
        tail = rank(x) - axis - 1 if axis >= 0 else -axis - 1
        if tail == 0 and pr == 1:
            return p
        target = w.i64([-1] + [1] * tail)
    else:
        r = w.one("ShapeOf", V3, [w.one("ShapeOf", V3, [x], {"output_type": "i64"},
                                        dtype=I64)], {"output_type": "i64"}, dtype=I64)
        count = _bin(w, "Subtract", r, w.i64([axis + 1]))
        ones = w.one("Broadcast", V3, [w.i64([1]), count], {"mode": "numpy"}, dtype=I64)
        target = w.one("Concat", V1, [w.i64([-1]), ones], {"axis": 0}, dtype=I64)
    return w.one("Reshape", V1, [p, target], {"special_zero": False}, dtype=p.dtype)


def _f32(w: NetWriter, node: Node, o: Out, what: str) -> Out:
    if o.dtype is not None and o.dtype not in (*_FLOAT_IN, DataType.INT32, *_RANGES):
        raise UnsupportedError(f"{where(node)}: {what} of type {o.dtype}")
    return _cvt(w, o, F32)


def _quant_type(node: Node, zp: Out | None) -> DataType:
    if zp is not None and zp.dtype is not None:
        return zp.dtype
    return _onnx_type(node, "output_dtype") or DataType.UINT8


def _onnx_type(node: Node, attr: str) -> DataType | None:
    code = int(node.attrs.get(attr, 0) or 0)
    try:
        return DataType.from_onnx(code)
    except KeyError:
        raise UnsupportedError(f"{where(node)}: {attr} {code} has no OpenVINO type") from None


def _precision(node: Node) -> np.dtype:
    dt = _onnx_type(node, "precision")
    if dt in (None, F32):
        return np.dtype(np.float32)
    if dt == F16:
        return np.dtype(np.float16)
    raise UnsupportedError(f"{where(node)}: the OpenVINO writer computes the quotient in "
                           f"float32 or float16, not in precision {dt}")


# -- translators ------------------------------------------------------------------------------
@exporter("QuantizeLinear", since=10)
def _quantize_linear(w: NetWriter, node: Node, ins):
    x, s, zp = ins[0], ins[1], _in(ins, 2)
    out = _quant_type(node, zp)
    if out not in _QUANT_OUT:
        # OpenVINO 2026.4's Convert to f8e4m3/f8e5m2 rounds twice (-50.0008 -> -48, where
        # round-to-nearest-even gives -52) and gives NaN or inf where ONNX saturates
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer quantizes to uint8, int8, "
                               f"uint16, int16, uint4 and int4 only, not to {out} (OpenVINO's "
                               "Convert to float8 neither rounds to nearest even nor "
                               "saturates)")
    prec = _precision(node)
    lo, hi = _RANGES[out]
    if prec == np.float16 and hi - lo > 255:
        raise UnsupportedError(f"{where(node)}: precision float16 with a 16-bit output")
    block = int(attr_or_default(node, "block_size") or 0)
    xs = _f32(w, node, x, "input")
    ss = _f32(w, node, _broadcastable(w, node, s, x, block), "scale")
    if prec == np.float16:  # ONNX casts both operands to the precision first
        xs, ss = _to_f16(w, xs), _to_f16(w, ss)
    zs = _broadcastable(w, node, zp, x, block)
    zs = None if zs is None else _cvt(w, zs, F32)
    y = _quantize(w, xs, ss, zs, lo, hi, prec)
    return w.one("Convert", V1, [y], {"destination_type": to_element_type(out)}, dtype=out,
                 shape=x.shape)


_DEQUANT_IN = (DataType.UINT8, DataType.INT8, DataType.UINT16, DataType.INT16,
               DataType.INT32, DataType.UINT4, DataType.INT4, DataType.FLOAT8E4M3FN,
               DataType.FLOAT8E5M2, DataType.FLOAT4E2M1)


@exporter("DequantizeLinear", since=10)
def _dequantize_linear(w: NetWriter, node: Node, ins):
    x, s, zp = ins[0], ins[1], _in(ins, 2)
    if x.dtype not in _DEQUANT_IN:
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer dequantizes 8-, 16- and "
                               f"32-bit integers, 4-bit integers, float8 e4m3fn/e5m2 and "
                               f"float4 e2m1, not {x.dtype}")
    out = _onnx_type(node, "output_dtype") or s.dtype or F32
    block = int(attr_or_default(node, "block_size") or 0)
    folded = _folded_weights(node, block, out)
    if folded is not None:
        return w.const(folded, out)
    zs = _broadcastable(w, node, zp, x, block)
    if x.dtype == DataType.INT32:
        v = _cvt(w, x, I32)
        if zs is not None:
            v = _bin(w, "Subtract", v, _cvt(w, zs, I32))
        v = _cvt(w, v, F32)
    else:
        v = _cvt(w, x, F32)
        if zs is not None:
            v = _bin(w, "Subtract", v, _cvt(w, zs, F32))
    ss = _cvt(w, _broadcastable(w, node, s, x, block), F32)
    y = _bin(w, "Multiply", v, ss)
    return _cvt(w, y, out)


def _folded_weights(node: Node, block: int, out: DataType) -> np.ndarray | None:
    """The dequantized constant, where `x`, the scale and zero point are constants and the
    scale varies along another axis than the last: OpenVINO's CPU plugin, which keeps such
    weights compressed in front of a ``MatMul``, applies a scale along the inner dimension to
    the wrong elements."""
    x, s = _const(node, 0), _const(node, 1)
    has_zp = len(node.inputs) > 2 and node.inputs[2] is not None
    z = _const(node, 2) if has_zp else None
    if x is None or s is None or has_zp and z is None or x.ndim < 2 or s.size == 1:
        return None
    axis = int(node.attrs.get("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    if block == 0 and axis == x.ndim - 1:
        return None

    def spread(p):
        if block > 0:
            return np.take(p, np.arange(x.shape[axis]) // block, axis=axis)
        return p.reshape([-1] + [1] * (x.ndim - axis - 1))

    if x.dtype == np.int32:
        v = x.astype(np.int64) - (spread(z).astype(np.int64) if has_zp else 0)
        v = v.astype(np.float32)
    else:
        v = x.astype(np.float32) - (spread(z).astype(np.float32) if has_zp else np.float32(0))
    return (v * spread(s).astype(np.float32)).astype(out.numpy)


# -- exact integer products -------------------------------------------------------------------
def _centered(w: NetWriter, node: Node, v: Out, zp: Out | None, what: str) -> Out:
    """``v - zp`` as integer-valued f32."""
    if v.dtype not in (DataType.UINT8, DataType.INT8):
        raise UnsupportedError(f"{where(node)}: {what} of type {v.dtype} (uint8 or int8 "
                               "expected)")
    f = _cvt(w, v, F32)
    return f if zp is None else _bin(w, "Subtract", f, _cvt(w, zp, F32))


def _magnitude(dt: DataType, zp: np.ndarray | None, has_zp: bool) -> int:
    """Largest ``|v - zp|`` for `v` of type `dt` (8-bit)."""
    lo, hi = _RANGES[dt]
    if not has_zp:
        return max(-lo, hi)
    if zp is None:
        return hi - lo
    z = np.asarray(zp, np.int64)
    return int(max(np.max(z - lo), np.max(hi - z)))


def _split(w: NetWriter, v: Out) -> tuple[Out, Out]:
    """Integer-valued f32 ``v = 16 * h + l`` with ``0 <= l < 16``."""
    h = _un(w, "Floor", _bin(w, "Multiply", v, _f(w, 1 / 16)))
    return h, _bin(w, "Subtract", v, _bin(w, "Multiply", h, _f(w, 16.0)))


def _split_np(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = np.floor(v / 16)
    return h, v - 16 * h


def _combine(w: NetWriter, terms: list[tuple[int, Out]]) -> Out:
    """``sum(k * t)`` in i32, each `t` an integer-valued f32 below 2**24."""
    acc = None
    for k, t in terms:
        ti = _cvt(w, t, I32)
        if k != 1:
            ti = _bin(w, "Multiply", ti, w.const(np.int32(k)))
        acc = ti if acc is None else _bin(w, "Add", acc, ti)
    return acc


def _exact_product(w: NetWriter, node: Node, op, a: Out, b: Out, amax: int,
                   bsum: tuple[float, float, float] | None, bmax: int, terms: int | None):
    """``op(a, b)`` (a MatMul or convolution of integer-valued f32 operands, `terms` products
    summed per output) exactly, as i32. `bsum`: for a constant `b`, the largest sum of ``|b|``,
    ``|bh|``, ``|bl|`` that one output reads; else the bound comes from `bmax` and `terms`
    (`_UNKNOWN_TERMS` when neither is known)."""
    if terms is None and bsum is None:
        terms = _UNKNOWN_TERMS

    def bound(scale_a: float, which: int) -> float:
        if bsum is not None:
            return scale_a * bsum[which]
        per = (bmax, 16, 15)[which]
        return scale_a * per * terms

    if bound(amax, 0) <= _EXACT:
        return _combine(w, [(1, op(a, b))])
    bh, bl = _split(w, b)
    if max(bound(amax, 1), bound(amax, 2)) <= _EXACT:
        return _combine(w, [(16, op(a, bh)), (1, op(a, bl))])
    if max(bound(16, 1), bound(16, 2)) <= _EXACT:
        ah, al = _split(w, a)
        return _combine(w, [(256, op(ah, bh)), (16, op(ah, bl)), (16, op(al, bh)),
                            (1, op(al, bl))])
    raise UnsupportedError(f"{where(node)}: the OpenVINO writer cannot sum this integer "
                           "product exactly (more than 65536 products per output)")


def _bsum(b: np.ndarray | None, axes: tuple[int, ...]):
    if b is None:
        return None
    h, lo = _split_np(b.astype(np.float64))
    return tuple(float(np.max(np.sum(np.abs(v), axis=axes))) if v.size else 0.0
                 for v in (b.astype(np.float64), h, lo))


def _centered_const(node: Node, i: int, zi: int, zp_shape=None) -> np.ndarray | None:
    """Constant input `i` minus its zero point (input `zi`, rearranged by `zp_shape`), or
    ``None`` when either is computed at run time."""
    v = _const(node, i)
    if v is None:
        return None
    has = zi < len(node.inputs) and node.inputs[zi] is not None
    z = _const(node, zi) if has else np.zeros((), v.dtype)
    if z is None:
        return None
    z = np.asarray(z, np.float64)
    if zp_shape is not None:
        z = zp_shape(z)
    return v.astype(np.float64) - z


def _zp_info(node: Node, i: int, zi: int, dt: DataType) -> int:
    has = zi < len(node.inputs) and node.inputs[zi] is not None
    return _magnitude(dt, _const(node, zi) if has else None, has)


def _row_zp(w: NetWriter, zp: Out | None, a: Out) -> Out | None:
    """A 1-D ``a_zero_point`` is per row: ``[M] -> [M, 1]``."""
    if zp is None or rank(zp) != 1 or rank(a) == 1:
        return zp
    if zp.shape[0] == 1:
        return w.scalar(zp)
    return w.one("Reshape", V1, [zp, w.i64([-1, 1])], {"special_zero": False}, dtype=zp.dtype)


def _int_matmul(w: NetWriter, node: Node, a: Out, azp: Out | None, b: Out, bzp: Out | None,
                ia: int, iaz: int, ib: int, ibz: int) -> Out:
    azp = _row_zp(w, azp, a)
    af = _centered(w, node, a, azp, "A")
    bf = _centered(w, node, b, bzp, "B")
    amax = _zp_info(node, ia, iaz, a.dtype)
    bmax = _zp_info(node, ib, ibz, b.dtype)
    dims = [a.shape[-1] if rank(a) else None,
            b.shape[-2 if rank(b) > 1 else 0] if rank(b) else None]
    k = next((d for d in dims if isinstance(d, int)), None)
    bc = _centered_const(node, ib, ibz)
    bsum = _bsum(bc, (-2 if bc.ndim > 1 else 0,)) if bc is not None else None

    def op(x: Out, y: Out) -> Out:
        return w.one("MatMul", V1, [x, y], {"transpose_a": False, "transpose_b": False},
                     dtype=F32)

    return _exact_product(w, node, op, af, bf, amax, bsum, bmax, k)


@exporter("MatMulInteger", since=10)
def _matmul_integer(w: NetWriter, node: Node, ins):
    return _int_matmul(w, node, ins[0], _in(ins, 2), ins[1], _in(ins, 3), 0, 2, 1, 3)


def _requantize(w: NetWriter, node: Node, acc: Out, mult: Out, yzp: Out | None,
                out: DataType) -> Out:
    """``clamp(rne(fl(float(acc) * mult)) + yzp)`` as `out`."""
    if out not in _RANGES or out in (DataType.INT2, DataType.UINT2, DataType.INT4,
                                     DataType.UINT4):
        raise UnsupportedError(f"{where(node)}: output type {out}")
    lo, hi = _RANGES[out]
    v = _round(w, _bin(w, "Multiply", _cvt(w, acc, F32), mult))
    if yzp is not None:
        v = _bin(w, "Add", v, _cvt(w, yzp, F32))
    v = _clamp(w, v, lo, hi)
    return w.one("Convert", V1, [v], {"destination_type": to_element_type(out)}, dtype=out)


def _multiplier(w: NetWriter, node: Node, ins, ia: int, ib: int, iy: int) -> Out:
    """``fl(fl(a_scale * b_scale) / y_scale)`` in f32, exactly."""
    consts = [_const(node, i) for i in (ia, ib, iy)]
    if all(c is not None for c in consts):
        a, b, y = (np.asarray(c).astype(np.float32) for c in consts)
        with np.errstate(all="ignore"):
            return w.const((a * b / y).astype(np.float32))
    a, b, y = (_cvt(w, ins[i], F32) for i in (ia, ib, iy))
    return _exact_div(w, _bin(w, "Multiply", a, b), y)


@exporter("QLinearMatMul", since=10)
def _qlinear_matmul(w: NetWriter, node: Node, ins):
    a, b = ins[0], ins[3]
    acc = _int_matmul(w, node, a, ins[2], b, ins[5], 0, 2, 3, 5)
    mult = _multiplier(w, node, ins, 1, 4, 6)
    out = ins[7].dtype if _in(ins, 7) is not None else a.dtype
    return _requantize(w, node, acc, mult, _in(ins, 7), out)


@exporter("DynamicQuantizeLinear", since=11)
def _dynamic_quantize_linear(w: NetWriter, node: Node, ins):
    x = _f32(w, node, ins[0], "input")
    flat_x = w.one("Reshape", V1, [x, w.i64([-1])], {"special_zero": False}, dtype=F32)
    zero = _f(w, 0.0)
    mn = _bin(w, "Minimum", w.one("ReduceMin", V1, [flat_x, w.i64(0)], {"keep_dims": False},
                                  dtype=F32, shape=()), zero)
    mx = _bin(w, "Maximum", w.one("ReduceMax", V1, [flat_x, w.i64(0)], {"keep_dims": False},
                                  dtype=F32, shape=()), zero)
    rng = _bin(w, "Subtract", mx, mn)
    flat = _bin(w, "Equal", rng, zero, BOOL)
    # the long division needs a positive dividend: 1 stands in for an empty range
    safe = w.one("Select", V1, [flat, _f(w, 1.0), rng], {"auto_broadcast": "numpy"},
                 dtype=F32, shape=())
    scale = w.one("Select", V1, [flat, _f(w, 1.0), _exact_div(w, safe, _f(w, 255.0))],
                  {"auto_broadcast": "numpy"}, dtype=F32, shape=())
    zp = _quantize(w, _un(w, "Negative", mn), scale, None, 0, 255)
    y = _quantize(w, x, scale, zp, 0, 255)
    u8 = DataType.UINT8

    def as_u8(v: Out, shape) -> Out:
        return w.one("Convert", V1, [v], {"destination_type": "u8"}, dtype=u8, shape=shape)

    return [as_u8(y, ins[0].shape), scale, as_u8(zp, ())]


# -- convolutions -----------------------------------------------------------------------------
def _conv_core(w: NetWriter, node: Node, x: Out, xzp: Out | None, wt: Out, wzp: Out | None,
               ix: int, ixz: int, iw: int, iwz: int) -> Out:
    n = _spatial(node, [x, wt], True)
    group = int(node.attrs.get("group", 1))
    data = _window(node, n)
    if xzp is not None and rank(xzp) == 1:
        xzp = w.scalar(xzp)
    if wzp is not None and rank(wzp) == 1:
        wzp = w.one("Reshape", V1, [wzp, w.i64([-1] + [1] * (n + 1))], {"special_zero": False},
                    dtype=wzp.dtype, shape=(wzp.shape[0],) + (1,) * (n + 1))
    xf = _centered(w, node, x, xzp, "x")
    wf = _centered(w, node, wt, wzp, "w")
    shape = _static(wt, node, "weight")
    terms = int(np.prod(shape[1:]))
    xmax = _zp_info(node, ix, ixz, x.dtype)
    wmax = _zp_info(node, iw, iwz, wt.dtype)
    wc = _centered_const(node, iw, iwz, lambda z: z.reshape(-1, *[1] * (len(shape) - 1))
                         if z.ndim == 1 else z)
    bsum = _bsum(wc, tuple(range(1, len(shape)))) if wc is not None else None

    out = value_shape(node.outputs[0])

    def op(xv: Out, wv: Out) -> Out:
        if group == 1:
            return w.one("Convolution", V1, [xv, wv], data, dtype=F32, shape=out)
        grouped = [group, shape[0] // group, *shape[1:]]
        wg = w.one("Reshape", V1, [wv, w.i64(grouped)], {"special_zero": False}, dtype=F32,
                   shape=tuple(grouped))
        return w.one("GroupConvolution", V1, [xv, wg], data, dtype=F32, shape=out)

    return _exact_product(w, node, op, xf, wf, xmax, bsum, wmax, terms)


@exporter("ConvInteger", since=10)
def _conv_integer(w: NetWriter, node: Node, ins):
    return _conv_core(w, node, ins[0], _in(ins, 2), ins[1], _in(ins, 3), 0, 2, 1, 3)


@exporter("QLinearConv", since=10)
def _qlinear_conv(w: NetWriter, node: Node, ins):
    x, wt = ins[0], ins[3]
    acc = _conv_core(w, node, x, ins[2], wt, ins[5], 0, 2, 3, 5)
    n = len(_static(wt, node, "weight")) - 2
    bias = _in(ins, 8)
    if bias is not None:
        bias = w.one("Reshape", V1, [_cvt(w, bias, I32), w.i64([1, -1] + [1] * n)],
                     {"special_zero": False}, dtype=I32)
        acc = _bin(w, "Add", acc, bias)
    mult = _multiplier(w, node, ins, 1, 4, 6)
    if max(rank(ins[i]) or 0 for i in (1, 4, 6)) == 1:  # per output channel
        mult = w.one("Reshape", V1, [mult, w.i64([1, -1] + [1] * n)], {"special_zero": False},
                     dtype=F32)
    out = ins[7].dtype if _in(ins, 7) is not None else x.dtype
    return _requantize(w, node, acc, mult, _in(ins, 7), out)
