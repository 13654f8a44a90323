"""Kernel results keep ONNX's element types and are always arrays (0-d included).

Oracles: onnx.reference for element types and values, ONNX Runtime for the integer
division semantics (C-style truncation) and the Mod variants.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from kernel_helpers import call, reference
from onnx import helper as h

from onnx_builders import model, run_ig, run_ort

FLOATS = [np.float16, np.float32, np.float64, ml_dtypes.bfloat16]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _same(got, want, rtol=1e-3, atol=1e-6):
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol)


# ----------------------------------------------------------------------------- element types

@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op,attrs", [
    ("Relu", {}), ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Selu", {}),
    ("Sigmoid", {}), ("HardSigmoid", {}), ("HardSwish", {}), ("Softplus", {}),
    ("Softsign", {}), ("Celu", {"alpha": 1.5}), ("ThresholdedRelu", {"alpha": 0.3}),
    ("Mish", {}), ("Softmax", {}),
    ("LogSoftmax", {"axis": 0}), ("Erf", {}), ("Tanh", {}), ("Exp", {}),
])
def test_float_activations_keep_their_type(op, attrs, dtype):
    x = np.linspace(-3, 3, 12).reshape(3, 4).astype(dtype)
    _same(call(op, x, **attrs), reference(op, x, **attrs), rtol=2e-2 if dtype != np.float64
          else 1e-6)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_keeps_its_type(approximate, dtype):
    x = np.linspace(-3, 3, 12).astype(dtype)
    x64 = x.astype(np.float64)
    if approximate == "none":
        want = 0.5 * x64 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x64]))
    else:
        want = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    _same(call("Gelu", x, approximate=approximate), want.astype(dtype), rtol=2e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Max", "Min", "Sum", "MatMul"])
def test_binary_ops_keep_their_type(op, dtype):
    a = (np.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)
    b = (np.arange(12).reshape(4, 3) % 3 + 1).astype(dtype) if op == "MatMul" else \
        (np.arange(4) % 3 + 1).astype(dtype)
    _same(call(op, a, b), reference(op, a, b))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.int64, np.uint8])
def test_reductions_keep_their_type(dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    axes = np.array([1], dtype=np.int64)
    x64 = x.astype(np.float64)
    oracle = {  # computed in float64, then brought to the input's type as ONNX requires
        "ReduceSum": x64.sum(1), "ReduceMean": x64.mean(1), "ReduceMax": x64.max(1),
        "ReduceMin": x64.min(1), "ReduceProd": x64.prod(1), "ReduceL1": np.abs(x64).sum(1),
        "ReduceSumSquare": (x64 * x64).sum(1),
    }
    for op, want in oracle.items():
        _same(call(op, x, axes, keepdims=0), want.astype(dtype))


def test_pow_keeps_the_base_type():
    base = np.array([1.5, 2.0, 3.0], dtype=np.float32)
    for exp in (np.array([2, 3, 1], dtype=np.int64), np.array(2.0, dtype=np.float64)):
        got = call("Pow", base, exp)
        _same(got, reference("Pow", base, exp))
        assert got.dtype == np.float32
    ibase = np.array([2, -3, 4], dtype=np.int32)
    _same(call("Pow", ibase, np.array([3, 2, 0], dtype=np.int32)),
          np.array([8, 9, 1], dtype=np.int32))


def test_bool_logic_and_comparisons():
    a = np.array([True, False, True])
    b = np.array([True, True, False])
    for op in ["And", "Or", "Xor"]:
        _same(call(op, a, b), reference(op, a, b))
    x = np.array([1, 5, 3], dtype=np.int16)
    y = np.array([2, 5, 1], dtype=np.int16)
    for op in ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]:
        got = call(op, x, y)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, reference(op, x, y))


def test_cast_round_trips_and_strings():
    x = np.array([1.5, -2.25, 3.0], dtype=np.float32)
    for to in [1, 2, 3, 6, 7, 9, 10, 11, 16]:  # FLOAT, UINT8, INT8, INT32, INT64, BOOL, ...
        _same(call("Cast", x, to=to), reference("Cast", x, to=to))
    s = call("Cast", x, to=8)  # STRING
    np.testing.assert_array_equal(s, reference("Cast", x, to=8).astype(object))
    back = call("Cast", s, to=1)
    _same(back, x)


_SPECIAL = [math.nan, math.inf, -math.inf, 3.7, -3.7, 300.5, -300.5, 70000.5, -70000.5, 3e9,
            -3e9, 5e9, 1e19, -1e19, 2.0**63, 2.0**64, 1.5e19, 1e30, -1e30, 65504.0]


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64])
def test_cast_of_nan_inf_and_out_of_range_floats_matches_onnxruntime(src, backend):
    """One rule for float -> integer on both backends (`backends.common.cast.float_to_int`):
    ONNX Runtime's, NumPy's on x86 (INT64_MIN for +inf, not XLA's saturation)."""
    with np.errstate(over="ignore"):  # float16 holds the large ones as inf
        x = np.array(_SPECIAL, np.float64).astype(src)
    elem = h.np_dtype_to_tensor_dtype(np.dtype(src))
    targets = [2, 3, 4, 5, 6, 7, 12, 13]  # UINT8, INT8, UINT16, INT16, INT32, INT64, UINT32/64
    m = model([h.make_node("Cast", ["x"], [f"y{t}"], to=t) for t in targets],
              [h.make_tensor_value_info("x", elem, [len(x)])],
              [h.make_tensor_value_info(f"y{t}", t, [len(x)]) for t in targets])
    want = run_ort(m, {"x": x})
    got = run_ig(m, {"x": x}, backend=backend)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    assert got["y7"][1] == np.iinfo(np.int64).min  # +inf


@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_cast_of_finite_floats_to_wide_integers_matches_onnxruntime(src):
    """Finite values within the target's range take NumPy's cast directly (the quantized
    biases ONNX Runtime's quantizer casts); the range's two ends, and a value just past
    it among in-range ones, agree with ONNX Runtime too."""
    rng = np.random.default_rng(0)
    body = (rng.standard_normal(64) * 1e5).astype(src)
    elem = h.np_dtype_to_tensor_dtype(np.dtype(src))
    for to, bits in ((6, 31), (7, 63)):  # INT32, INT64
        top = src(2.0**bits)
        hi = np.nextafter(top, src(0))  # the largest value of `src` below 2**bits
        for extra in ([], [top]):  # all in range / one value past it
            x = np.concatenate([body, np.array([-top, hi, -0.99, 0.99, *extra], src)])
            m = model([h.make_node("Cast", ["x"], ["y"], to=to)],
                      [h.make_tensor_value_info("x", elem, [len(x)])],
                      [h.make_tensor_value_info("y", to, [len(x)])])
            want = run_ort(m, {"x": x})["y"]
            got = run_ig(m, {"x": x}, backend="numpy")["y"]
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"to={to} extra={extra}")


# ----------------------------------------------------------------------------- 0-d inputs

@pytest.mark.parametrize("op,inputs,attrs", [
    ("Add", (np.array(2.0, np.float32), np.array(3.0, np.float32)), {}),
    ("Div", (np.array(7, np.int32), np.array(-2, np.int32)), {}),
    ("Mul", (np.array(2, np.int64), np.array(3, np.int64)), {}),
    ("Sqrt", (np.array(4.0, np.float32),), {}),
    ("Neg", (np.array(4, np.int8),), {}),
    ("Relu", (np.array(-1.0, np.float32),), {}),
    ("Sigmoid", (np.array(0.5, np.float64),), {}),
    ("Not", (np.array(True),), {}),
    ("Equal", (np.array(1, np.int64), np.array(1, np.int64)), {}),
    ("Where", (np.array(True), np.array(1.0, np.float32), np.array(2.0, np.float32)), {}),
    ("Clip", (np.array(5.0, np.float32), np.array(0.0, np.float32), np.array(1.0, np.float32)),
     {}),
    ("Max", (np.array(1, np.int32), np.array(4, np.int32), np.array(2, np.int32)), {}),
    ("Pow", (np.array(2.0, np.float32), np.array(3, np.int64)), {}),
    ("Mod", (np.array(-7, np.int32), np.array(3, np.int32)), {}),
    ("ReduceSum", (np.arange(6, dtype=np.float32).reshape(2, 3),), {"keepdims": 0}),
    ("ReduceMax", (np.arange(6, dtype=np.int32),), {"keepdims": 0}),
    ("ArgMax", (np.array([1.0, 3.0, 2.0], np.float32),), {"keepdims": 0}),
    ("Gather", (np.array([1.0, 3.0, 2.0], np.float32), np.array(1, np.int64)), {}),
    ("Squeeze", (np.ones((1, 1), np.float32),), {}),
    ("Size", (np.ones((2, 3), np.float32),), {}),
    ("MatMul", (np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32)), {}),
    ("Range", (np.array(0, np.int64), np.array(5, np.int64), np.array(2, np.int64)), {}),
])
def test_zero_d_results_are_arrays_of_the_right_type(op, inputs, attrs):
    got = call(op, *inputs, **attrs)
    want = reference(op, *inputs, **attrs)
    assert type(got) is np.ndarray, f"{op} returned {type(got).__name__}"
    _same(got, np.asarray(want))


# ----------------------------------------------------------------------------- integer division

@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_div_and_mod_match_onnxruntime(dtype):
    a = np.array([7, -7, 7, -7, 0, 9, -9, 1], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, 3, -4, -5], dtype=dtype)
    elem = {np.int32: 6, np.int64: 7}[dtype]
    nodes = [h.make_node("Div", ["a", "b"], ["q"]),
             h.make_node("Mod", ["a", "b"], ["m0"], fmod=0),
             h.make_node("Mod", ["a", "b"], ["m1"], fmod=1)]
    m = model(nodes, [h.make_tensor_value_info(n, elem, [8]) for n in "ab"],
              [h.make_tensor_value_info(n, elem, [8]) for n in ("q", "m0", "m1")], opset=13)
    want = run_ort(m, {"a": a, "b": b})
    got = run_ig(m, {"a": a, "b": b})
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    # truncation toward zero, as in C (NumPy's // floors)
    np.testing.assert_array_equal(got["q"], np.trunc(a / b).astype(dtype))
