"""ONNX ``Cast`` on NumPy arrays, every element type included, shared by both backends.

Between the ordinary NumPy types a cast is ``astype``. Casts that involve the ``ml_dtypes``
types (bfloat16, float8, float4, int4, ...) follow the ONNX reference rules (``saturate`` for
float8, ``round_mode`` for float8e8m0). Casting to string gives NumPy's text form of each
element; casting from strings parses them (through float32 for the ``ml_dtypes`` types).
The NumPy backend's ``Cast``/``CastLike`` kernels use it, and the JAX backend for the casts
XLA has no type for, when their input is known at trace time.

**Float to integer**, on both backends (`float_to_int`, written for NumPy and for
``jax.numpy`` alike): the C cast of x86-64, which is what NumPy does there and what ONNX
Runtime does (a ``static_cast``), made the same on every machine and in XLA (which would
saturate, and NaN would give 0). Values are truncated toward zero; a target of 32 or 64 bits
gives its minimum for NaN, infinities and values out of its range (the "integer indefinite"
of ``cvttss2si``/``cvttsd2si``: ``Cast(+inf -> int64)`` is INT64_MIN); a narrower target is
the int32 result wrapped to its width (``300.5 -> int8`` is 44, NaN is 0); an unsigned target
of 32 or 64 bits converts values from half its range up after subtracting that half (NaN,
``-inf`` and too-negative values give ``2**(bits-1)``, ``+inf`` and too-large values 0,
negative values in range wrap), except that float16 to uint32 is the int64 result wrapped
to 32 bits (NaN and ``-inf`` give 0), as NumPy and ONNX Runtime both do. Sources narrower
than float32 (float16, bfloat16, float8) are widened to float32 first, which is exact.
"""

from __future__ import annotations

import numpy as np

from ...ir.attributes import attr, attr_str

_PLAIN = frozenset("biufc")


def _plain(dt: np.dtype) -> bool:
    return dt.kind in _PLAIN and dt.type.__module__ == "numpy"


def is_float_to_int(src: np.dtype, to: np.dtype) -> bool:
    """Does a cast from `src` to `to` follow `float_to_int` (a float of any width, NumPy's or
    ``ml_dtypes``', to one of NumPy's integer types)?"""
    return src.name.startswith(("float", "bfloat")) and to.kind in "iu" and _plain(to)


def float_to_int(x, to: np.dtype, xp=np):
    """The float array `x` (NumPy or JAX) cast to the integer type `to` by the rule of the
    module docstring; `xp` is the array module of `x`."""
    to = np.dtype(to)
    bits = to.itemsize * 8
    half_float = x.dtype == np.float16
    work = np.dtype(np.float64 if x.dtype.itemsize >= 8 else np.float32)
    if x.dtype != work:
        x = x.astype(work)
    if bits < 32:
        return _truncate(x, np.dtype(np.int32), xp).astype(to)
    if half_float and to == np.uint32:
        return _truncate(x, np.dtype(np.int64), xp).astype(to)
    signed = np.dtype(f"int{bits}")
    low = _truncate(x, signed, xp)
    if to.kind == "i":
        return low
    half = work.type(2.0 ** (bits - 1))
    high = xp.bitwise_xor(_truncate(x - half, signed, xp), signed.type(np.iinfo(signed).min))
    return xp.where(x >= half, high, low).astype(to)


def _truncate(x, signed: np.dtype, xp):
    """`x` truncated toward zero into `signed` (32 or 64 bits); NaN, infinities and values
    out of its range give its minimum."""
    least = signed.type(np.iinfo(signed).min)
    lo = x.dtype.type(float(least))  # -2**(bits-1) and 2**(bits-1): exact in float32
    ok = (x >= lo) & (x < -lo)
    return xp.where(ok, xp.where(ok, x, x.dtype.type(0)).astype(signed), least)


def cast(x: np.ndarray, to: np.dtype, saturate: bool = True, round_mode: str = "up"):
    """`x` cast to `to` as ONNX ``Cast`` does (see the module docstring)."""
    if x.dtype == to:
        return x
    if is_float_to_int(x.dtype, to):
        return float_to_int(x, to)
    if to.kind == "O":
        return x.astype(np.str_).astype(object)
    if x.dtype.kind == "O":
        if not _plain(to):
            x = x.astype(np.float32)
        else:
            return x.astype(to)
    if _plain(x.dtype) and _plain(to):
        return x.astype(to)
    from onnx.helper import np_dtype_to_tensor_dtype
    from onnx.reference.ops.op_cast import cast_to

    try:
        return cast_to(x, np_dtype_to_tensor_dtype(to), saturate, round_mode)
    except TypeError:
        return cast_to(x, np_dtype_to_tensor_dtype(to), saturate)


def cast_options(node) -> tuple[bool, str]:
    """(saturate, round_mode) of a ``Cast``/``CastLike`` node (defaults: True, "up")."""
    return bool(attr(node, "saturate", 1)), attr_str(node, "round_mode", "up")
