"""ONNX Runtime's quantization operators of the ``com.microsoft`` domain, for NumPy and
``jax.numpy`` alike (`xp`): the arithmetic of ONNX Runtime's CPU kernels (MLAS), in the order
they compute it, so that integer outputs agree exactly where ONNX Runtime is deterministic.

``rne`` is round half to even; every float operation is float32 unless said otherwise.

- *Dynamic quantization* (``DynamicQuantizeLinear``, ``DynamicQuantizeMatMul``, the input and
  hidden state of ``DynamicQuantizeLSTM``): ``lo = min(min(x), 0)``, ``hi = max(max(x), 0)``,
  ``scale = (hi - lo) / 255`` (1 where ``hi == lo``), ``zp = rne(clamp(0 - lo / scale, 0,
  255))`` as uint8, ``q = clamp(rne(x / scale) + zp, 0, 255)``.
- *Integer products to float* (``MatMulIntegerToFloat``, ``DynamicQuantizeMatMul``):
  ``acc = (a - a_zp) @ (b - b_zp)`` exactly in int32, ``y = float(acc) * (a_scale * b_scale)
  + bias`` (the multiplier per column where ``b_scale`` is ``[N]``). ONNX Runtime's uint8 x
  int8 products saturate int16 pair sums on x86 CPUs without VNNI (AVX2): there ONNX Runtime
  is not exact and itergraph keeps the exact sum.
- ``QLinearAdd``: with ``rA = sA / sC``, ``rB = sB / sC`` and ``fixed = zC - (rA * zA + rB *
  zB)`` (the bracket an ``fma``), ``c = rne(fma(a, rA, fma(b, rB, fixed)))`` saturated (MLAS's
  AVX2 kernel; where one input is constant along the innermost output axis, ONNX Runtime
  makes it MLAS's ``B``, swapping the operands throughout). ``fma`` is computed in float64
  and rounded once. Other CPUs (SSE, NEON) round some near-tie sums to the neighbouring
  code.
- ``QLinearMul``: with ``r = sA * sB / sC``, ``c = rne(float((a - zA) * (b - zB)) * r + zC)``
  saturated (the zero point added in float before rounding, as MLAS's x86 kernel).
- ``QLinearSigmoid``, ``QLinearLeakyRelu``: a table over the 256 input codes,
  ``quantize(f(float(code - zX) * sX), sY, zY)``, looked up (ONNX Runtime's sigmoid is
  MLAS's polynomial: a code whose value lies within an ulp of a rounding tie may differ by
  one).
- ``QLinearConcat``: each input requantized ``quantize(float(x - zX) * sX, sY, zY)`` unless
  its scale and zero point are the output's (then copied), then concatenated.
- ``QLinearGlobalAveragePool``: ``sum`` of the codes over the spatial axes in int32, ``c =
  rne(float(sum - zX * n) * (sX / (sY * n))) + zY`` saturated.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import MICROSOFT_DOMAIN
from . import exact_int

DOMAIN = MICROSOFT_DOMAIN

RANGES = exact_int.RANGES


def qrange(dtype) -> tuple[int, int]:
    return RANGES[np.dtype(dtype)]


def f32(xp, v):
    return xp.asarray(v).astype(np.float32)


def div(xp, a, b):
    """``a / b`` of float32 values, correctly rounded. XLA computes a float32 quotient
    through a reciprocal (an ulp off in about half the cases); on JAX the quotient is taken
    in float64 and rounded to float32, which is exact (53 >= 2 * 24 + 2 bits)."""
    if xp is np:
        return np.asarray(a, np.float32) / np.asarray(b, np.float32)
    return (xp.asarray(a).astype(np.float64) / xp.asarray(b).astype(np.float64)).astype(
        np.float32)


def quantize(xp, x, scale, zp, dtype):
    """``clamp(rne(x / scale) + zp)`` as `dtype` (MLAS's ``QuantizeLinear``)."""
    lo, hi = qrange(dtype)
    zpf = f32(xp, 0 if zp is None else zp)
    if xp is np:
        q = div(xp, x, scale)
        if q.__class__ is np.ndarray and q.ndim >= zpf.ndim \
                and np.broadcast_shapes(q.shape, zpf.shape) == q.shape:
            return _quantize_in_place(q, zpf, lo, hi, dtype)
        return np.clip(np.round(q) + zpf, lo, hi).astype(dtype)
    q = xp.round(div(xp, x, scale))
    return xp.clip(q + zpf, lo, hi).astype(dtype)


def _quantize_in_place(q: np.ndarray, zpf: np.ndarray, lo: int, hi: int, dtype):
    """`quantize` of the fresh float32 quotient `q`, in place: with one zero point the
    clamp comes first, to ``[lo - zp, hi - zp]``, and the zero point is added as the codes
    are written (the same codes: ``q`` is an integer or saturates either way, and ``lo -
    zp``, ``hi - zp`` and the sums are small integers, exact in float32)."""
    np.round(q, out=q)
    if zpf.ndim == 0:
        np.clip(q, np.float32(lo) - zpf, np.float32(hi) - zpf, out=q)
        return np.add(q, zpf, out=np.empty(q.shape, dtype), casting="unsafe")
    q += zpf
    return np.clip(q, lo, hi, out=q).astype(dtype)


def dequantize(xp, q, scale, zp):
    """``float(q - zp) * scale``."""
    z = 0 if zp is None else xp.asarray(zp).astype(np.int32)
    return (xp.asarray(q).astype(np.int32) - z).astype(np.float32) * f32(xp, scale)


def dynamic_params(xp, x):
    """ONNX Runtime's ``GetQuantizationParameter`` for uint8: ``(scale, zero_point)``, both
    0-d."""
    if xp is np:
        return _dynamic_params_np(x)
    x = f32(xp, x)
    lo = xp.minimum(xp.min(x), np.float32(0))
    hi = xp.maximum(xp.max(x), np.float32(0))
    scale = xp.where(hi == lo, np.float32(1), div(xp, hi - lo, np.float32(255)))
    zp = xp.round(xp.clip(np.float32(0) - div(xp, lo, scale), np.float32(0), np.float32(255)))
    return xp.asarray(scale, np.float32), xp.asarray(zp).astype(np.uint8)


def _dynamic_params_np(x):
    """`dynamic_params` on NumPy float32 scalars (the same operations, without the array
    round trips that dominate for the small tensors of a recurrent step)."""
    x = np.asarray(x, np.float32)
    zero = np.float32(0)
    lo = np.minimum(x.min(), zero)
    hi = np.maximum(x.max(), zero)
    scale = np.float32(1) if hi == lo else np.float32(hi - lo) / np.float32(255)
    # the clamp as two ufuncs on scalars (np.clip's wrappers cost more than the arithmetic)
    zp = np.round(np.minimum(np.maximum(zero - lo / scale, zero), np.float32(255)))
    return np.asarray(scale, np.float32), np.asarray(zp).astype(np.uint8)


#: why a scale that is not finite is refused: ONNX Runtime's zero point and codes are then a
#: NaN cast to an integer (undefined behaviour), and NaN inputs give it a range that depends
#: on where they lie (its vectorized min and max skip some)
NONFINITE = ("input 'x' holds a value that is not finite, so its quantization scale is not "
             "finite (ONNX Runtime's result is undefined there)")


def dynamic_quantize(xp, x):
    """``(y, y_scale, y_zero_point)`` of ``DynamicQuantizeLinear`` (uint8)."""
    scale, zp = dynamic_params(xp, x)
    return quantize(xp, x, scale, zp, np.uint8), scale, zp


def centered(xp, v, zp, dtype=np.float64):
    """``v - zp`` as float64 (exact: 8- and 16-bit codes), or as `dtype` (float32: exact for
    8-bit codes)."""
    v = xp.asarray(v).astype(dtype)
    return v if zp is None else v - xp.asarray(zp).astype(dtype)


def centered_weight(w: np.ndarray, zp, a_dtype, axes: tuple[int, ...]) -> np.ndarray:
    """A constant weight's ``w - zp``, computed once on the host, in float32 where its
    products with codes of `a_dtype`, summed over `axes`, are exact in float32
    (`exact_int.float32_exact`), else in float64."""
    op = exact_int.Operand(w, zp, axes)
    r = RANGES.get(np.dtype(a_dtype))
    span = float("inf") if r is None else float(r[1] - r[0])
    return op.f32 if exact_int.float32_exact(span, op) else op.f64()


def to_int32(xp, v):
    """An integer-valued float64 result as int32 (wrapping as int32 sums do)."""
    return v.astype(np.int64).astype(np.int32)


class Memo:
    """A constant operand (a weight, `const`: the node's initializer) prepared for
    `exact_int.product` once per zero point; any other array is prepared afresh."""

    __slots__ = ("const", "key", "value")

    def __init__(self, const=None):
        self.const = const
        self.key = None
        self.value = None

    def operand(self, v, zp, k_axes: tuple[int, ...]) -> exact_int.Operand:
        if self.const is None or v is not self.const \
                or not (zp is None or isinstance(zp, (np.ndarray, np.generic))):
            return exact_int.Operand(v, zp, k_axes)
        z = None if zp is None else (np.shape(zp), zp.dtype.str, np.asarray(zp).tobytes())
        if self.value is None or self.key != z:
            op = exact_int.Operand(v, zp, k_axes)
            op.keep_blocks()
            self.key, self.value = z, op
        return self.value


def a_row_zero_point(a, zp):
    """A's zero point shaped for broadcasting: per tensor, or per row (``[M]``)."""
    if zp is None or zp.ndim == 0 or zp.size == 1:
        return None if zp is None else zp.reshape(())
    return zp.reshape(-1, 1) if zp.ndim == 1 else zp


def channel_zero_point(w, zp):
    """W's zero point: per tensor, or per output channel (``[M]``)."""
    if zp is None or zp.ndim == 0 or zp.size == 1:
        return None if zp is None else zp.reshape(())
    return zp.reshape((-1,) + (1,) * (w.ndim - 1))


def int_matmul(xp, a, azp, b, bzp, memo: Memo | None = None, bc=None):
    """``(a - azp) @ (b - bzp)`` in int32, exactly (zero points broadcast: per tensor, or
    ``b``'s per column). `bc`, when given, is B already centered (`centered_weight`, in the
    float type its products are exact in). Else, on NumPy, `exact_int.product` (float32 BLAS
    where that is exact; `memo` keeps B's prepared form between calls); elsewhere one
    float64 matrix product: every partial sum of 8-bit products is an integer below 2**53,
    so it is exact."""
    if bc is not None:
        return to_int32(xp, xp.matmul(centered(xp, a, azp, bc.dtype), bc))
    if xp is np:
        k_axes = (max(np.ndim(b) - 2, 0),)
        op = memo.operand(b, bzp, k_axes) if memo is not None \
            else exact_int.Operand(b, bzp, k_axes)
        return exact_int.product(np.matmul, a, azp, op)
    return to_int32(xp, xp.matmul(centered(xp, a, azp), centered(xp, b, bzp)))


def product_multiplier(xp, a_scale, b_scale, y_scale):
    """ONNX Runtime's requantization multiplier of ``QLinearMatMul`` / ``QLinearConv``:
    ``fl(fl(a_scale * b_scale) / y_scale)`` in float32 (per column or output channel where
    ``b_scale`` is)."""
    return div(xp, f32(xp, a_scale) * f32(xp, b_scale), f32(xp, y_scale))


def requantize_product(xp, acc, multiplier, zp, dtype):
    """``clamp(rne(fl(float(acc) * multiplier)) + zp)`` as `dtype`: MLAS's requantization of
    an int32 product (the float32 product rounded once, to nearest even)."""
    lo, hi = qrange(dtype)
    v = xp.round(acc.astype(np.float32) * f32(xp, multiplier))
    return xp.clip(v + f32(xp, 0 if zp is None else xp.asarray(zp).astype(np.int32)),
                   lo, hi).astype(dtype)


def add(xp, a, b):
    """``a + b`` of float32 values, rounded once, and never contracted with the product that
    made `a` into one ``fma`` (XLA does that to ``x * m + b``; MLAS rounds twice): on JAX the
    sum is taken in float64, exact for operands within 2**29 of each other's magnitude."""
    if xp is np:
        return a + b
    return (a.astype(np.float64) + xp.asarray(b).astype(np.float64)).astype(np.float32)


def scaled(xp, acc, multiplier, bias):
    """MLAS's scale-bias output: ``float(acc) * multiplier + bias`` (two roundings)."""
    y = acc.astype(np.float32) * f32(xp, multiplier)
    return y if bias is None else add(xp, y, f32(xp, bias))


def fma(xp, a, b, c):
    """``a * b + c`` rounded once to float32 (float64 products of float32 are exact)."""
    return (xp.asarray(a).astype(np.float64) * xp.asarray(b).astype(np.float64)
            + xp.asarray(c).astype(np.float64)).astype(np.float32)


def inner_constant(shape, out_shape) -> bool:
    """Whether an input of `shape` is constant along the innermost output axis longer than 1
    (MLAS then treats it as a scalar per run)."""
    rank = len(out_shape)
    full = (1,) * (rank - len(shape)) + tuple(shape)
    for s, o in zip(reversed(full), reversed(out_shape)):
        if o != 1:
            return s == 1
    return True


def qlinear_add(xp, a, sa, za, b, sb, zb, sc, zc, dtype):
    sa, sb, sc = (f32(xp, v) for v in (sa, sb, sc))
    za, zb, zc = (f32(xp, 0 if v is None else xp.asarray(v).astype(np.int32))
                  for v in (za, zb, zc))
    ra, rb = div(xp, sa, sc), div(xp, sb, sc)
    fixed = zc - fma(xp, ra, za, rb * zb)
    af, bf = f32(xp, xp.asarray(a).astype(np.int32)), f32(xp, xp.asarray(b).astype(np.int32))
    out = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    if inner_constant(a.shape, out) and not inner_constant(b.shape, out):
        # ONNX Runtime swaps the operands so that the one constant per run is MLAS's B
        fixed = zc - fma(xp, rb, zb, ra * za)
        v = fma(xp, bf, rb, fma(xp, af, ra, fixed))
    else:
        v = fma(xp, af, ra, fma(xp, bf, rb, fixed))
    lo, hi = qrange(dtype)
    return xp.clip(xp.round(v), lo, hi).astype(dtype)


def qlinear_mul(xp, a, sa, za, b, sb, zb, sc, zc, dtype):
    ai = xp.asarray(a).astype(np.int32) - (0 if za is None else xp.asarray(za).astype(np.int32))
    bi = xp.asarray(b).astype(np.int32) - (0 if zb is None else xp.asarray(zb).astype(np.int32))
    ratio = div(xp, f32(xp, sa) * f32(xp, sb), sc)
    zcf = f32(xp, 0 if zc is None else xp.asarray(zc).astype(np.int32))
    v = xp.round(add(xp, (ai * bi).astype(np.float32) * ratio, zcf))
    lo, hi = qrange(dtype)
    return xp.clip(v, lo, hi).astype(dtype)


def lookup(xp, x, sx, zx, sy, zy, fn, dtype):
    """``quantize(fn(dequantize(x)), sy, zy)`` through a table over the 256 codes of `x`'s
    type (built from the codes, so a traced scale works too)."""
    lo, _ = qrange(x.dtype)
    codes = xp.asarray(np.arange(lo, lo + 256).astype(x.dtype))
    table = quantize(xp, fn(dequantize(xp, codes, sx, zx)), sy, zy, dtype)
    return xp.take(table, xp.asarray(x).astype(np.int32) - lo)


def requantize(xp, x, sx, zx, sy, zy):
    """`x` from ``(sx, zx)`` to ``(sy, zy)``: ``quantize(float(x - zx) * sx, sy, zy)``."""
    return quantize(xp, dequantize(xp, x, sx, zx), sy, zy, x.dtype)


def global_average_pool(xp, x, sx, zx, sy, zy, channels_last: bool):
    axes = tuple(range(1, x.ndim - 1)) if channels_last else tuple(range(2, x.ndim))
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    acc = xp.sum(xp.asarray(x).astype(np.int32), axis=axes, keepdims=True)
    zxi = 0 if zx is None else xp.asarray(zx).astype(np.int32)
    scale = div(xp, sx, f32(xp, sy) * np.float32(n))
    v = xp.round((acc - zxi * n).astype(np.float32) * scale)
    zyi = 0 if zy is None else xp.asarray(zy).astype(np.int32)
    lo, hi = qrange(x.dtype)
    return xp.clip(v.astype(np.int32) + zyi, lo, hi).astype(x.dtype)
