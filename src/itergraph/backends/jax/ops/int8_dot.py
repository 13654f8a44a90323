"""``(a - za) @ (b - zb)`` in int32 for 8-bit codes and a large constant ``b``, as one
int8 x int8 -> int32 product.

XLA's CPU code runs an int8 product with int32 results through YNNPACK's integer kernel:
about 1.5-3x faster than the exact float32 product of the same codes (`quant_int`) once the
weight is large (a ``[20,1024] x [1024,8210]`` product: 3.5 against 6.3 ms on one thread),
and the weight is kept at a quarter of its float32 size. Both operands must be int8, so codes
are shifted into int8 (``a' = a - ca``, ``b' = b - cb``; ``ca``, ``cb`` are 128 for uint8, 0
for int8) and the shift is undone by sums that are exact in int32::

    (a - za) @ (b - zb) = a' @ b' + rowsum(a') * d + (ca - za) * C
    d = cb - zb,  C = colsum(b') + K * d              (d, C: per column, made on the host)

Every term is an integer computed in int32, so the result is the exact int32 sum (wrapping
as ONNX Runtime's int32 accumulator wraps). ``b'`` is stored transposed, ``[N, K]``: both
operands then contract their last axis, the layout the integer kernel is fastest in.

``ConvInteger`` with such a weight is the same product over its column matrix
(`quant_int`): on few output positions and many channels (``[256, 64, 3, 3]`` over 8x20)
it runs 2x faster than the float32 convolution; on many positions and few channels the
column matrix costs more than the product saves (24 -> 24 channels over 32x80: 2.4x slower),
which `MIN_WEIGHT` and `MIN_CONV_TERMS` keep out.

Measured on one thread of an AMD EPYC (Zen 4, AVX-512 VNNI), where ONNX Runtime's u8s8
kernels are still 4-6x faster than either XLA product: XLA's integer kernel does not reach
VNNI's rate.
"""

from __future__ import annotations

import numpy as np

MIN_WEIGHT = 1 << 16  # weights with fewer elements keep the float32 product (no faster here)
#: ... and so do products of fewer multiply-adds: ``[20,256] x [256,256]`` ran 40 us slower
#: as int8, ``[4,512] x [512,512]`` no faster; from about 2**23 on (``[20,256] x [256,4096]``,
#: ``[4,2048] x [2048,2048]``, a 3x3 convolution 48 -> 192 over 16x40 as its column product)
#: the int8 product ran 1.2-3.5x faster, except where the float32 product is as fast (160 x 576
#: x 256: the same time)
MIN_PRODUCT = 1 << 23
#: a convolution's column product also needs this many terms per output (input channels x
#: taps): the column matrix costs more below it (3x3 convolutions with int8 as against float32,
#: one thread: 24 -> 96 channels over 32x80 4.3x slower, 48 -> 192 over 16x40 the same time;
#: 64 -> 256 over 8x20 2.2x, 96 -> 192 over 16x32 1.2x, 128 -> 256 over 16x16 1.3x, 256 ->
#: 256 over 8x8 1.4x faster)
MIN_CONV_TERMS = 512
_SHIFT = {np.dtype(np.uint8): 128, np.dtype(np.int8): 0}


def eight_bit(*values) -> bool:
    return all(np.dtype(v.dtype) in _SHIFT for v in values)


def applies(a, b, bzp) -> bool:
    """Is ``a @ b`` (MatMulInteger's operands) one for `product`: 8-bit codes, a 2-D `b` of
    at least `MIN_WEIGHT` elements and a zero point of B known while tracing?"""
    return (eight_bit(a, b) and b.ndim == 2 and a.ndim >= 1 and worth(a.size, b.shape)
            and known_zero_point(bzp, b.shape[1]))


def worth(a_size: int, b_shape) -> bool:
    """Is a product of `a_size` codes of A by a ``[K, N]`` weight one the int8 kernel runs
    faster (`MIN_WEIGHT`, `MIN_PRODUCT`)?"""
    k, n = b_shape
    return k * n >= MIN_WEIGHT and a_size * n >= MIN_PRODUCT


def known_zero_point(zp, n: int) -> bool:
    """Is `zp` absent, or a constant per tensor or per one of `n` columns?"""
    return zp is None or (isinstance(zp, np.ndarray) and zp.size in (1, n))


def _column_zero_point(bzp, n: int) -> np.ndarray:
    return np.zeros(n, np.int64) if bzp is None else np.broadcast_to(
        bzp.astype(np.int64).reshape(-1), (n,))


def weight_parts(b: np.ndarray, bzp) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(b'ᵀ [N, K] int8, d [N] int32, C [N] int32)`` of a constant weight (module doc)."""
    k, n = b.shape
    cb = _SHIFT[b.dtype]
    shifted = (b.astype(np.int16) - cb).astype(np.int8)
    d = cb - _column_zero_point(bzp, n)
    c = shifted.sum(axis=0, dtype=np.int64) + k * d
    return (np.ascontiguousarray(shifted.T), d.astype(np.int32),
            c.astype(np.int64).astype(np.int32))


def product(cx, a, azp, b, bzp, layout=None):
    """The int32 product (module doc); `azp` as `ms_quant.a_row_zero_point` shapes it.
    `layout` (a name, and a function of the constant `b`) makes the ``[K, N]`` matrix of a
    constant held otherwise (a convolution's weights). None when `b` is not a constant
    (`OpContext.prepared`)."""
    import jax.numpy as jnp
    from jax import lax

    name, lay = layout or ("matrix", lambda v: v)
    tag = ("int8-dot", name,
           None if bzp is None else (bzp.shape, bzp.dtype.str, bzp.tobytes()))
    made: dict = {}  # the three parts come from one pass over the weight

    def part(v, i):
        if "parts" not in made:
            made["parts"] = weight_parts(lay(v), bzp)
        return made["parts"][i]

    parts = [cx.prepared(b, (*tag, i), lambda v, i=i: part(v, i)) for i in range(3)]
    if any(p is None for p in parts):
        return None
    bt, d, c = parts
    n, k = bt.shape
    ca = _SHIFT[np.dtype(a.dtype)]
    shifted = a if ca == 0 else (a.astype(jnp.int16) - ca).astype(jnp.int8)
    acc = lax.dot_general(shifted.reshape(-1, k), bt, (((1,), (1,)), ((), ())),
                          preferred_element_type=jnp.int32)
    acc = acc.reshape((*a.shape[:-1], n))
    if not (np.dtype(b.dtype) == np.int8 and (bzp is None or not bzp.any())):  # d == 0
        acc = acc + shifted.astype(jnp.int32).sum(axis=-1, keepdims=True) * d
    za = 0 if azp is None else azp.astype(jnp.int32)
    return acc + (ca - za) * c
