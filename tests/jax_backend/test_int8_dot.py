"""``MatMulInteger`` with a large constant weight runs as one int8 x int8 -> int32 product on
JAX (`backends.jax.ops.int8_dot`): exact, for every pairing of uint8/int8 codes and of zero
points (none, per tensor, per row of A, per column of B), against the plain int64 product and
ONNX Runtime; with the weight embedded and passed as an argument."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.backends.jax import big_constants
from itergraph.backends.jax.ops import int8_dot
from onnx_builders import run_ort

rng = np.random.default_rng(5)
NP_T = {np.dtype(np.uint8): T.UINT8, np.dtype(np.int8): T.INT8}
K, N = 256, 256  # int8_dot.MIN_WEIGHT elements


@pytest.fixture
def taken(monkeypatch):
    """Counts the products `int8_dot` builds; small products take it too (`MIN_PRODUCT`)."""
    monkeypatch.setattr(int8_dot, "MIN_PRODUCT", 0)
    calls = []
    real = int8_dot.product

    def product(*args):
        y = real(*args)
        calls.append(y is not None)
        return y

    monkeypatch.setattr(int8_dot, "product", product)
    return calls


def _codes(dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def _model(a, b, azp, bzp):
    names = ["a", "b", "" if azp is None else "az", "" if bzp is None else "bz"]
    while names[-1] == "":
        names.pop()
    inits = [numpy_helper.from_array(b, "b")]
    inits += [numpy_helper.from_array(v, k) for k, v in (("az", azp), ("bz", bzp))
              if v is not None]
    g = h.make_graph([h.make_node("MatMulInteger", names, ["y"])], "g",
                     [h.make_tensor_value_info("a", NP_T[a.dtype], list(a.shape))],
                     [h.make_tensor_value_info("y", T.INT32, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _oracle(a, azp, b, bzp):
    za = 0 if azp is None else (azp.astype(np.int64).reshape(-1, 1) if azp.ndim else
                                np.int64(azp))
    zb = 0 if bzp is None else bzp.astype(np.int64)
    return ((a.astype(np.int64) - za) @ (b.astype(np.int64) - zb)).astype(np.int32)


CASES = [  # (A codes, B codes, A's zero point, B's zero point, A's shape)
    (np.uint8, np.int8, "tensor", "tensor", (20, K)),
    (np.uint8, np.int8, "tensor", None, (2, 3, K)),
    (np.uint8, np.uint8, "tensor", "column", (5, K)),
    (np.int8, np.int8, None, "column", (4, K)),
    (np.int8, np.uint8, "row", "tensor", (6, K)),
    (np.uint8, np.int8, "row", "column", (1, K)),
]


@pytest.mark.parametrize("a_t,b_t,az_kind,bz_kind,shape", CASES)
def test_int8_product_exact(taken, a_t, b_t, az_kind, bz_kind, shape):
    a, b = _codes(a_t, shape), _codes(b_t, (K, N))
    azp = {None: None, "tensor": _codes(a_t, ()), "row": _codes(a_t, (shape[-2],))}[az_kind]
    bzp = {None: None, "tensor": _codes(b_t, ()), "column": _codes(b_t, (N,))}[bz_kind]
    m = _model(a, b, azp, bzp)
    sess = ig.load(m).compile("jax")
    want = _oracle(a, azp, b, bzp)
    for _ in range(2):  # the first run, then the prepared call
        np.testing.assert_array_equal(sess.run({"a": a})["y"], want)
    assert taken == [True]
    if az_kind != "row" and (a_t, b_t) != (np.int8, np.uint8):  # what ONNX Runtime runs
        np.testing.assert_array_equal(run_ort(m, {"a": a})["y"], want)


def test_int8_product_weight_as_argument(taken, monkeypatch):
    """A weight passed as an argument (`big_constants`) is prepared on the host as well."""
    monkeypatch.setattr(big_constants, "EMBED_BYTES", 0)
    a, b = _codes(np.uint8, (3, K)), _codes(np.int8, (K, N))
    azp, bzp = np.uint8(117), np.int8(-3)
    m = _model(a, b, np.array(azp), np.array(bzp))
    got = ig.load(m).compile("jax").run({"a": a})["y"]
    np.testing.assert_array_equal(got, _oracle(a, np.array(azp), b, np.array(bzp)))
    assert taken and all(taken)  # traced twice: the second time with the prepared parts


CONV_CASES = [  # (X codes, W codes, W's zero point, pads, strides, dilations, auto_pad)
    (np.uint8, np.uint8, "tensor", [1, 1, 1, 1], [1, 1], [1, 1], None),
    (np.uint8, np.uint8, "channel", [0, 1, 2, 0], [2, 1], [1, 1], None),
    (np.uint8, np.int8, None, [1, 0, 1, 2], [1, 2], [2, 1], None),
    (np.int8, np.int8, "channel", None, [2, 2], [1, 1], "SAME_UPPER"),
]


@pytest.mark.parametrize("x_t,w_t,wz_kind,pads,strides,dilations,auto_pad", CONV_CASES)
def test_int8_conv_exact(taken, x_t, w_t, wz_kind, pads, strides, dilations, auto_pad):
    """ConvInteger over its column matrix: padded positions count as X's zero point; the
    same int32 output as the NumPy backend's (itself ONNX Runtime's bit for bit) and as
    ONNX Runtime where it runs the types."""
    C, O = 64, 128  # a [128, 64, 3, 3] weight: int8_dot.MIN_WEIGHT elements and more
    x, w = _codes(x_t, (1, C, 6, 7)), _codes(w_t, (O, C, 3, 3))
    xzp = _codes(x_t, ())
    wzp = {None: None, "tensor": _codes(w_t, ()), "channel": _codes(w_t, (O,))}[wz_kind]
    attrs = {"strides": strides, "dilations": dilations}
    attrs |= {"auto_pad": auto_pad} if auto_pad else {"pads": pads}
    names = ["x", "w", "xz"] + ([] if wzp is None else ["wz"])
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(xzp, "xz")]
    inits += [] if wzp is None else [numpy_helper.from_array(wzp, "wz")]
    g = h.make_graph([h.make_node("ConvInteger", names, ["y"], **attrs)], "g",
                     [h.make_tensor_value_info("x", NP_T[x.dtype], list(x.shape))],
                     [h.make_tensor_value_info("y", T.INT32, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    want = ig.load(m).run({"x": x}, backend="numpy")["y"]
    sess = ig.load(m).compile("jax")
    for _ in range(2):
        np.testing.assert_array_equal(sess.run({"x": x})["y"], want)
    assert taken == [True]
    if (x_t, w_t, wz_kind) == (np.uint8, np.uint8, "tensor"):  # what ONNX Runtime runs
        np.testing.assert_array_equal(run_ort(m, {"x": x})["y"], want)


@pytest.mark.parametrize("op", ["DynamicQuantizeMatMul", "MatMulIntegerToFloat"])
def test_int8_product_in_contrib_ops(taken, op):
    """ONNX Runtime's fused dynamic-quantization products take the same int8 product: the
    float outputs agree with ONNX Runtime's to float32 rounding."""
    a = rng.standard_normal((3, K)).astype(np.float32)
    b = _codes(np.int8, (K, N))
    bs = (rng.random(N) * 0.01 + 0.001).astype(np.float32)
    bias = rng.standard_normal(N).astype(np.float32)
    consts = {"b": b, "bs": bs, "bz": np.zeros(N, np.int8), "bias": bias}
    if op == "DynamicQuantizeMatMul":
        names, feeds = ["a", "b", "bs", "bz", "bias"], {"a": a}
    else:
        names, feeds = ["a", "b", "as", "bs", "az", "bz", "bias"], {"a": _codes(np.uint8, (3, K))}
        consts |= {"as": np.float32(0.02), "az": np.uint8(121)}
    in_t = T.FLOAT if op == "DynamicQuantizeMatMul" else T.UINT8
    g = h.make_graph([h.make_node(op, names, ["y"], domain="com.microsoft")], "g",
                     [h.make_tensor_value_info("a", in_t, [3, K])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                     ir_version=8)
    got = ig.load(m).run(feeds, backend="jax")["y"]
    np.testing.assert_allclose(got, run_ort(m, feeds)["y"], rtol=1e-5, atol=1e-4)
    assert taken and all(taken)


def test_small_products_keep_the_float_product(monkeypatch):
    """Below `MIN_PRODUCT` multiply-adds (here 3 x 256 x 256) the float32 product stays: the
    int8 kernel is no faster there."""
    calls = []
    real = int8_dot.product
    monkeypatch.setattr(int8_dot, "product", lambda *a: calls.append(1) or real(*a))
    a, b = _codes(np.uint8, (3, K)), _codes(np.int8, (K, N))
    got = ig.load(_model(a, b, None, None)).compile("jax").run({"a": a})["y"]
    np.testing.assert_array_equal(got, _oracle(a, None, b, None))
    assert not calls
