"""Integer products of quantized codes through float BLAS (`semantics.exact_int`): each of the
three forms (one float32 product, A split into 4-bit halves, float64) against exact int64
products, and ``MatMulInteger`` / ``ConvInteger`` sized to take each form against ONNX
Runtime, with codes at the limits of their types (every product at its largest magnitude).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.semantics import exact_int
from onnx_builders import run_ort

rng = np.random.default_rng(11)
NP_T = {np.dtype(np.uint8): T.UINT8, np.dtype(np.int8): T.INT8}


def _oracle(a, za, b, zb):
    return ((a.astype(np.int64) - za) @ (b.astype(np.int64) - zb)).astype(np.int32)


def _spy(seen):
    def fn(x, w):
        seen.append((x.dtype, x.ndim))
        return np.matmul(x, w)

    return fn


# B's codes 0 and 255 (column 0 all 255): L1 = 255 K, so with |a - za| <= 255 one float32
# product is exact up to K = 257, the split up to K = 4111
@pytest.mark.parametrize("k,form", [(257, "float32"), (300, "split"), (4200, "float64")])
@pytest.mark.parametrize("a_type,za", [(np.uint8, 0), (np.uint8, 255), (np.int8, -128),
                                       (np.int8, 127)])
def test_each_form_is_exact_at_the_limits(k, form, a_type, za):
    lo, hi = np.iinfo(a_type).min, np.iinfo(a_type).max
    a = rng.choice(np.array([lo, hi], a_type), size=(2, 3, k))  # batch > 1
    b = rng.choice(np.array([0, 255], np.uint8), size=(k, 4))
    b[:, 0] = 255  # a column of L1 = 255 k
    zb = np.array([0, 255, 0, 255], np.uint8)  # per column
    op = exact_int.Operand(b, zb, (0,))
    assert op.l1 == 255 * k
    seen = []
    got = exact_int.product(_spy(seen), a, np.array(za, a_type), op)
    np.testing.assert_array_equal(got, _oracle(a, za, b, zb.astype(np.int64)))
    dtype, ndim = seen[0]
    assert (dtype, ndim) == {"float32": (np.float32, 3), "split": (np.float32, 4),
                             "float64": (np.float64, 3)}[form]


def test_int8_weights_and_per_row_zero_points():
    a = rng.integers(0, 256, (5, 700)).astype(np.uint8)
    za = rng.integers(0, 256, (5, 1)).astype(np.uint8)
    b = rng.choice(np.array([-128, 127], np.int8), size=(700, 6))
    op = exact_int.Operand(b, None, (0,))
    got = exact_int.product(np.matmul, a, za, op)
    np.testing.assert_array_equal(got, _oracle(a, za.astype(np.int64), b, 0))


def _model(nodes, feeds, consts, outputs):
    ins = [h.make_tensor_value_info(k, NP_T[v.dtype], list(v.shape)) for k, v in feeds.items()]
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    outs = [h.make_tensor_value_info(o, T.INT32, None) for o in outputs]
    return h.make_model(h.make_graph(nodes, "g", ins, outs, inits),
                        opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _extremes(shape, zero_point):
    """uint8 codes 0 and 255 only, against a zero point of 0 or 255: every centered code
    is +-255 or 0."""
    return rng.choice(np.array([0, 255], np.uint8), size=shape) if zero_point in (0, 255) \
        else rng.integers(0, 256, shape).astype(np.uint8)


@pytest.mark.parametrize("k", [64, 300, 4200])
@pytest.mark.parametrize("za,zb", [(0, 255), (255, 0), (7, 200)])
@pytest.mark.parametrize("const_b", [True, False])
def test_matmul_integer_against_onnx_runtime(k, za, zb, const_b):
    a = _extremes((2, 3, k), za)
    b = _extremes((k, 5), zb)
    bz = np.array([zb, 0, 255, zb, 128], np.uint8)  # per column
    feeds = {"a": a, **({} if const_b else {"b": b})}
    consts = {"az": np.array(za, np.uint8), "bz": bz, **({"b": b} if const_b else {})}
    m = _model([h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])], feeds, consts,
               ["y"])
    want = run_ort(m, feeds)["y"]
    sess = ig.load(m).compile("numpy")
    for _ in range(2):  # the second call reads the prepared B
        np.testing.assert_array_equal(sess.run(feeds)["y"], want)


@pytest.mark.parametrize("k", [128, 300])  # one float32 product / the split into halves
def test_matmul_integer_on_weight_blocks_against_onnx_runtime(monkeypatch, k):
    """A constant B kept as narrow column blocks (`semantics.int_blocks`, thresholds
    lowered to keep it small): the standalone int32 MatMulInteger, in the float32 form and
    with A split into 4-bit halves (a batch of two more), bitwise ONNX Runtime's."""
    from itergraph.semantics import int_blocks

    monkeypatch.setattr(int_blocks, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(int_blocks, "BLOCK_ELEMENTS", 64 * k)  # 64 columns a block
    calls = []
    blocked = int_blocks.IntBlocks.matmul
    monkeypatch.setattr(int_blocks.IntBlocks, "matmul",
                        lambda self, a: calls.append(a.ndim) or blocked(self, a))
    a = _extremes((2, 3, k), 7)
    b = _extremes((k, 2 * 64 + 17), 200)
    bz = rng.integers(0, 256, b.shape[1]).astype(np.uint8)  # per column
    b[:, 0], bz[0] = 255, 0  # L1 = 255 k: 248 * L1 >= 2**24 from k = 266 on (the split)
    feeds = {"a": a}
    m = _model([h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])], feeds,
               {"az": np.array(7, np.uint8), "bz": bz, "b": b}, ["y"])
    got = ig.load(m).run(feeds, backend="numpy")["y"]
    np.testing.assert_array_equal(got, run_ort(m, feeds)["y"])
    assert calls == [3 if k == 128 else 4]  # A [2, 3, k], or its halves [2, 2, 3, k]


@pytest.mark.parametrize("c,batch", [(4, 1), (40, 2), (470, 1)])
@pytest.mark.parametrize("zx,zw", [(0, 255), (255, 0), (90, 31)])
def test_conv_integer_against_onnx_runtime(c, batch, zx, zw):
    """K = 9 C: one float32 product (C = 4), the split (C = 40), float64 (C = 470); padding
    counts as the zero point."""
    x = _extremes((batch, c, 5, 6), zx)
    w = _extremes((3, c, 3, 3), zw)
    feeds = {"x": x}
    consts = {"w": w, "xz": np.array(zx, np.uint8), "wz": np.array(zw, np.uint8)}
    m = _model([h.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 0],
                            strides=[1, 2])], feeds, consts, ["y"])
    want = run_ort(m, feeds)["y"]
    np.testing.assert_array_equal(ig.load(m).run(feeds, backend="numpy")["y"], want)
