"""Each layer against a NumPy oracle of TensorRT's semantics, on itergraph and ONNX Runtime."""

from __future__ import annotations

import math

import numpy as np
import pytest
from net_helpers import assert_outputs, const, new_network, output, run, run_ort

import itergraph as ig
import itergraph.network as trt

E, A, U = trt.ElementWiseOperation, trt.ActivationType, trt.UnaryOperation
M, R = trt.MatrixOperation, trt.ReduceOperation
RNG = np.random.default_rng(0)
F = RNG.standard_normal((2, 3, 4)).astype(np.float32)
CASES = {}


def case(name):
    def deco(fn):
        CASES[name] = fn
        return fn

    return deco


def _single(feeds: dict, make, oracle):
    """A network of inputs named after `feeds`; make(net, *inputs) -> tensor; `oracle`."""
    net = new_network()
    ins = [net.add_input(k, v.dtype, v.shape) for k, v in feeds.items()]
    output(net, make(net, *ins), "y")
    return net, feeds, {"y": oracle(*feeds.values())}


def _floor_div(a, b):
    return np.floor_divide(a, b)


EW_ORACLE = {
    E.SUM: np.add, E.PROD: np.multiply, E.MAX: np.maximum, E.MIN: np.minimum,
    E.SUB: np.subtract, E.DIV: np.divide, E.POW: np.power, E.FLOOR_DIV: _floor_div,
    E.LESS: np.less, E.GREATER: np.greater, E.EQUAL: np.equal,
}
for _op, _fn in EW_ORACLE.items():
    def _make_ew(op=_op, fn=_fn):
        a = np.abs(F[:, :1, :]) + 0.5 if op is E.POW else F[:, :1, :]
        b = np.round(F * 3) / 2 if op is E.EQUAL else F + 0.1
        if op is E.EQUAL:
            a = np.round(a * 3) / 2
        return _single({"a": a.astype(np.float32), "b": b.astype(np.float32)},
                       lambda n, x, y: n.add_elementwise(x, y, op).get_output(0),
                       lambda x, y: fn(x, y).astype(bool if op in (E.LESS, E.GREATER, E.EQUAL)
                                                     else np.float32))
    case(f"elementwise_{_op.name}")(_make_ew)

for _op, _fn in {E.AND: np.logical_and, E.OR: np.logical_or, E.XOR: np.logical_xor}.items():
    case(f"elementwise_{_op.name}")(
        lambda op=_op, fn=_fn: _single(
            {"a": RNG.random((3, 1)) > 0.5, "b": RNG.random((1, 4)) > 0.5},
            lambda n, x, y: n.add_elementwise(x, y, op).get_output(0), fn))


@case("elementwise_int_floor_div_and_div")
def _int_div():
    a = np.array([[7, -7, 7, -7, 0, 9]], np.int32)
    b = np.array([[2, 2, -2, -2, 3, 3]], np.int32)

    def make(n, x, y):
        fd = n.add_elementwise(x, y, E.FLOOR_DIV).get_output(0)
        return n.add_concatenation([fd, n.add_elementwise(x, y, E.SUM).get_output(0)]) \
            .get_output(0)

    return _single({"a": a, "b": b}, make,
                   lambda x, y: np.concatenate([np.floor_divide(x, y), x + y], 0))


def _act(kind, alpha=0.0, beta=0.0):
    def make(n, x):
        layer = n.add_activation(x, kind)
        layer.alpha, layer.beta = alpha, beta
        assert layer.type is kind
        return layer.get_output(0)
    return make


def _erf(x):
    return np.vectorize(math.erf)(x)


ACT_ORACLE = {
    (A.RELU, 0, 0): lambda x: np.maximum(x, 0),
    (A.SIGMOID, 0, 0): lambda x: 1 / (1 + np.exp(-x)),
    (A.TANH, 0, 0): np.tanh,
    (A.LEAKY_RELU, 0.1, 0): lambda x: np.where(x >= 0, x, 0.1 * x),
    (A.ELU, 0.7, 0): lambda x: np.where(x >= 0, x, 0.7 * (np.exp(x) - 1)),
    (A.SELU, 1.67, 1.05): lambda x: np.where(x > 0, 1.05 * x, 1.05 * (1.67 * np.exp(x) - 1.67)),
    (A.SOFTSIGN, 0, 0): lambda x: x / (1 + np.abs(x)),
    (A.SOFTPLUS, 2.0, 0.5): lambda x: 2.0 * np.log(np.exp(0.5 * x) + 1),
    (A.CLIP, -0.5, 0.75): lambda x: np.clip(x, -0.5, 0.75),
    (A.HARD_SIGMOID, 0.2, 0.5): lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    (A.SCALED_TANH, 1.5, 0.5): lambda x: 1.5 * np.tanh(0.5 * x),
    (A.THRESHOLDED_RELU, 0.3, 0): lambda x: np.where(x > 0.3, x, 0),
    (A.GELU_ERF, 0, 0): lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
    (A.GELU_TANH, 0, 0): lambda x: 0.5 * x * (
        1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
}
for (_k, _a, _b), _fn in ACT_ORACLE.items():
    case(f"activation_{_k.name}")(
        lambda k=_k, a=_a, b=_b, fn=_fn: _single(
            {"x": F}, _act(k, a, b), lambda x: fn(x.astype(np.float64)).astype(np.float32)))

POS = np.abs(F) + 0.2
UNIT = np.clip(F / 4, -0.9, 0.9).astype(np.float32)
UNARY_ORACLE = {
    U.EXP: (np.exp, F), U.LOG: (np.log, POS), U.SQRT: (np.sqrt, POS),
    U.RECIP: (np.reciprocal, POS), U.ABS: (np.abs, F), U.NEG: (np.negative, F),
    U.SIN: (np.sin, F), U.COS: (np.cos, F), U.TAN: (np.tan, UNIT), U.SINH: (np.sinh, F),
    U.COSH: (np.cosh, F), U.ASIN: (np.arcsin, UNIT), U.ACOS: (np.arccos, UNIT),
    U.ATAN: (np.arctan, F), U.ASINH: (np.arcsinh, F), U.ACOSH: (np.arccosh, POS + 1),
    U.ATANH: (np.arctanh, UNIT), U.CEIL: (np.ceil, F), U.FLOOR: (np.floor, F),
    U.ERF: (_erf, F), U.SIGN: (np.sign, F), U.ROUND: (np.round, F * 2),
    U.ISINF: (np.isinf, np.array([1, np.inf, -np.inf, np.nan], np.float32)),
    U.ISNAN: (np.isnan, np.array([1, np.inf, -np.inf, np.nan], np.float32)),
    U.NOT: (np.logical_not, np.array([True, False])),
}
for _op, (_fn, _x) in UNARY_ORACLE.items():
    case(f"unary_{_op.name}")(
        lambda op=_op, fn=_fn, x=_x: _single(
            {"x": x.astype(x.dtype)}, lambda n, t: n.add_unary(t, op).get_output(0),
            lambda v: fn(v).astype(v.dtype if op not in (U.ISINF, U.ISNAN) else bool)))


def _mm_operand(x, op):
    return np.swapaxes(x, -1, -2) if op is M.TRANSPOSE else x


MM = [
    (M.NONE, (2, 3, 4), M.NONE, (2, 4, 5)),
    (M.TRANSPOSE, (2, 4, 3), M.NONE, (1, 4, 5)),
    (M.NONE, (1, 3, 4), M.TRANSPOSE, (2, 5, 4)),
    (M.TRANSPOSE, (4, 3), M.TRANSPOSE, (5, 4)),
    (M.VECTOR, (2, 4), M.NONE, (2, 4, 5)),
    (M.NONE, (2, 3, 4), M.VECTOR, (2, 4)),
    (M.VECTOR, (3, 4), M.VECTOR, (3, 4)),
    (M.VECTOR, (4,), M.TRANSPOSE, (5, 4)),
]
for _i, (_o0, _s0, _o1, _s1) in enumerate(MM):
    def _make_mm(o0=_o0, s0=_s0, o1=_o1, s1=_s1):
        a = RNG.standard_normal(s0).astype(np.float32)
        b = RNG.standard_normal(s1).astype(np.float32)

        def oracle(x, y):
            x2 = x[..., None, :] if o0 is M.VECTOR else _mm_operand(x, o0)
            y2 = y[..., :, None] if o1 is M.VECTOR else _mm_operand(y, o1)
            out = np.matmul(x2, y2)
            if o1 is M.VECTOR:
                out = out[..., 0]
            if o0 is M.VECTOR:
                out = out[..., 0, :] if o1 is not M.VECTOR else out[..., 0]
            return out.astype(np.float32)

        return _single({"a": a, "b": b},
                       lambda n, x, y: n.add_matrix_multiply(x, o0, y, o1).get_output(0), oracle)
    case(f"matmul_{_i}_{_o0.name}_{_o1.name}")(_make_mm)

for _op, _fn in {R.SUM: np.sum, R.PROD: np.prod, R.MAX: np.max, R.MIN: np.min,
                 R.AVG: np.mean}.items():
    for _mask, _keep in ((0b101, False), (0b010, True), (0, False)):
        def _make_reduce(op=_op, fn=_fn, mask=_mask, keep=_keep):
            axes = tuple(i for i in range(3) if mask >> i & 1)
            return _single({"x": F}, lambda n, x: n.add_reduce(x, op, mask, keep).get_output(0),
                           lambda x: (fn(x, axis=axes, keepdims=keep) if axes else x)
                           .astype(np.float32))
        case(f"reduce_{_op.name}_{_mask}_{_keep}")(_make_reduce)


@case("shuffle_transpose_reshape_transpose")
def _shuffle():
    def make(n, x):
        s = n.add_shuffle(x)
        s.first_transpose = (2, 0, 1)  # (4, 2, 3)
        s.reshape_dims = (0, -1)  # 0 copies 4 -> (4, 6)
        s.second_transpose = (1, 0)
        return s.get_output(0)
    return _single({"x": F}, make, lambda x: np.transpose(x, (2, 0, 1)).reshape(4, 6).T)


@case("shuffle_dynamic_shape_tensor")
def _shuffle_dyn():
    def make(n, x, shp):
        s = n.add_shuffle(x)
        s.set_input(1, shp)
        return s.get_output(0)
    return _single({"x": F, "shp": np.array([3, 8], np.int32)}, make,
                   lambda x, shp: x.reshape(3, 8))


@case("concatenation_default_and_axis")
def _concat():
    a = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)

    def make(n, x):
        layer = n.add_concatenation([x, x])
        assert layer.axis == 1  # rank - 3
        layer2 = n.add_concatenation([layer.get_output(0), layer.get_output(0)])
        layer2.axis = -1
        return layer2.get_output(0)
    return _single({"x": a}, make,
                   lambda x: np.concatenate([np.concatenate([x, x], 1)] * 2, -1))


@case("slice_strides")
def _slice():
    def make(n, x):
        return n.add_slice(x, (1, 2, 0), (1, 3, 2), (1, -1, 3)).get_output(0)
    return _single({"x": F}, make, lambda x: x[1:2, 2::-1, 0:4:3])


@case("slice_dynamic_start")
def _slice_dyn():
    def make(n, x, st):
        layer = n.add_slice(x, (0, 0, 0), (2, 2, 2), (1, 1, 2))
        layer.set_input(1, st)
        return layer.get_output(0)
    return _single({"x": F, "st": np.array([0, 1, 0], np.int32)}, make,
                   lambda x, st: x[0:2, 1:3, 0:4:2])


@case("gather_select_cast_identity_shape_softmax")
def _misc():
    idx = np.array([[2, 0], [1, 1]], np.int32)

    def make(n, x):
        g = n.add_gather(x, const(n, idx), 2).get_output(0)  # (2,3,2,2)
        flat = n.add_shuffle(g)
        flat.reshape_dims = (2, 3, 4)
        gx = n.add_identity(flat.get_output(0)).get_output(0)
        cond = n.add_elementwise(x, gx, E.GREATER).get_output(0)
        sel = n.add_select(cond, x, gx).get_output(0)
        sm = n.add_softmax(sel)
        sm.axes = 1 << 2
        shp = n.add_cast(n.add_shape(sm.get_output(0)).get_output(0), trt.float32).get_output(0)
        shp3 = n.add_shuffle(shp)
        shp3.reshape_dims = (1, 3, 1)
        return n.add_elementwise(sm.get_output(0), shp3.get_output(0), E.PROD).get_output(0)

    def oracle(x):
        gx = np.take(x, idx, axis=2).reshape(2, 3, 4)
        sel = np.where(x > gx, x, gx)
        e = np.exp(sel - sel.max(axis=2, keepdims=True))
        sm = e / e.sum(axis=2, keepdims=True)
        return (sm * np.array([2, 3, 4], np.float32).reshape(1, 3, 1)).astype(np.float32)
    return _single({"x": F}, make, oracle)


@case("if_conditional_top_level")
def _if():
    def make(n, x, p):
        c = n.add_if_conditional()
        c.set_condition(p)
        xin = c.add_input(x).get_output(0)
        t = n.add_unary(xin, U.EXP).get_output(0)
        return c.add_output(t, xin).get_output(0)
    return _single({"x": F, "p": np.array(True)}, make, lambda x, p: np.exp(x) if p else x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_numpy(name):
    net, feeds, want = CASES[name]()
    assert_outputs(run(net, feeds), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_onnxruntime(name):
    net, feeds, want = CASES[name]()
    assert_outputs(run_ort(net, feeds), want, rtol=1e-5, atol=1e-5)


def test_constant_folding_gives_static_shapes():
    net = new_network()
    x = net.add_input("x", trt.float32, (4, 6))
    shape = net.add_shape(x).get_output(0)
    half = net.add_elementwise(shape, const(net, np.array([2, 3], np.int64)), E.DIV).get_output(0)
    s = net.add_shuffle(x)
    s.set_input(1, half)  # (2, 2) does not hold 24 elements
    with pytest.raises(ig.ModelError, match="cannot reshape"):
        _ = s.get_output(0).shape
    s.set_input(1, net.add_elementwise(half, const(net, np.array([3, 2], np.int64)), E.PROD)
                .get_output(0))
    assert s.get_output(0).shape == (6, 4)


def test_weights_and_dtypes():
    net = new_network()
    c = net.add_constant((2, 2), trt.Weights(np.arange(4, dtype=np.float16)))
    assert c.get_output(0).dtype == trt.DataType.HALF == trt.float16
    assert net.add_input("i", np.int64, (3,)).dtype is trt.int64
    assert trt.nptype(trt.float32) is np.float32
    assert net.num_layers == 1 and net.get_layer(0) == c and net.num_inputs == 1
    t = c.get_output(0)
    assert not t.is_network_input and not t.is_network_output
    net.mark_output(t)
    assert t.is_network_output and net.num_outputs == 1
