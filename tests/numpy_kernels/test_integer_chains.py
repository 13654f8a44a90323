"""``ConvInteger``/``MatMulInteger`` -> [``Add`` int32 bias] -> ``Cast`` to float -> [``Mul``
scale] as ONNX Runtime's dynamic quantizer writes them, run as one kernel by the NumPy plan
(`backends.numpy.integer_chains`): bitwise ONNX Runtime's outputs, with the input quantized
at run time (`DynamicQuantizeLinear`), in the float32 form and in the forms that fall back
to the int32 product (a bias too large for float32, weights too wide for a float32
product); the profile names the absorbed nodes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.backends.numpy import integer_chains
from itergraph.inspect.profile import profile


def _model(op, w, bias, with_mul, x_shape, silu=False):
    """x -> DynamicQuantizeLinear -> op(codes, w, zp) [-> Add bias] -> Cast [-> Mul scale]
    [-> Mul(t, Sigmoid(t))]."""
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"])]
    if op == "ConvInteger":
        nodes.append(h.make_node("ConvInteger", ["q", "w", "z"], ["acc"], pads=[1, 1, 1, 1]))
    else:
        nodes.append(h.make_node("MatMulInteger", ["q", "w", "z"], ["acc"]))
    inits = [numpy_helper.from_array(w, "w")]
    last = "acc"
    if bias is not None:
        inits.append(numpy_helper.from_array(bias, "bias"))
        nodes.append(h.make_node("Add", ["acc", "bias"], ["biased"]))
        last = "biased"
    nodes.append(h.make_node("Cast", [last], ["f"], to=T.FLOAT))
    out = "f"
    if with_mul:
        nodes.append(h.make_node("Mul", ["f", "s"], ["y"]))  # the scale of the input
        out = "y"
    if silu:
        nodes += [h.make_node("Sigmoid", [out], ["g"]), h.make_node("Mul", [out, "g"], ["act"])]
        out = "act"
    graph = h.make_graph(nodes, "qchain", [h.make_tensor_value_info("x", T.FLOAT, x_shape)],
                         [h.make_tensor_value_info(out, T.FLOAT, None)], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    return model, out


CASES = [
    # op, weight dtype and range, bias range (None: no Add), with the Mul
    ("ConvInteger", np.int8, 127, 1000, True),
    ("ConvInteger", np.uint8, 255, None, True),
    ("ConvInteger", np.int8, 127, 2 ** 30, True),  # bias beyond float32: the int32 form
    ("MatMulInteger", np.int8, 127, 5000, False),
    ("MatMulInteger", np.uint8, 255, None, True),
]


@pytest.mark.parametrize("op, wtype, wmax, bias_max, with_mul", CASES)
def test_integer_chain_matches_onnx_runtime(op, wtype, wmax, bias_max, with_mul):
    rng = np.random.default_rng(5)
    lo = 0 if wtype == np.uint8 else -wmax
    if op == "ConvInteger":
        x_shape, w = [1, 4, 6, 7], rng.integers(lo, wmax + 1, (8, 4, 3, 3)).astype(wtype)
        b_shape = (8, 1, 1)
    else:
        x_shape, w = [5, 16], rng.integers(lo, wmax + 1, (16, 12)).astype(wtype)
        b_shape = (12,)
    bias = None if bias_max is None else \
        rng.integers(-bias_max, bias_max, b_shape).astype(np.int32)
    model, out = _model(op, w, bias, with_mul, x_shape)
    x = rng.standard_normal(x_shape).astype(np.float32)
    got = ig.load(model).run({"x": x}, backend="numpy")[out]
    expect = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("silu", [False, True])
def test_integer_chain_is_one_kernel_and_profiled_as_such(silu):
    """With a written-out SiLU after it, the activation is computed in the chain's output
    (`epilogues`), within float32 rounding of ONNX Runtime's sigmoid."""
    rng = np.random.default_rng(1)
    w = rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)
    bias = rng.integers(-1000, 1000, (8, 1, 1)).astype(np.int32)
    model, out = _model("ConvInteger", w, bias, True, [1, 4, 6, 7], silu)
    x = rng.standard_normal((1, 4, 6, 7)).astype(np.float32)
    prof = profile(model, {"x": x})
    ops = [s.op for s in prof.nodes]
    assert "ConvInteger+Add+Cast+Mul" + ("+Sigmoid+Mul" if silu else "") in ops, ops
    expect = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(ig.load(model).run({"x": x}, backend="numpy")[out], expect,
                               rtol=1e-5, atol=1e-5)


def test_wide_weights_fall_back_to_the_int32_product():
    """Weights whose sums exceed float32's exact range: no float form, the same result."""
    w = np.full((1, 4096, 1, 1), 127, np.int8)
    fn = integer_chains._FLOAT_FORMS["ConvInteger"]
    node = ig.load(_model("ConvInteger", w, None, False, [1, 4096, 1, 1])[0]).graph
    conv = next(n for n in node.nodes if n.op_type == "ConvInteger")
    q = np.full((1, 4096, 1, 1), 255, np.uint8)
    assert fn(conv)(q, w, np.uint8(0)) is None


@pytest.mark.parametrize("wtype, held", [(np.int8, np.int8), (np.uint8, np.int16)])
def test_large_constant_weights_in_narrow_blocks_match_onnx_runtime(monkeypatch, wtype, held):
    """A constant B of a MatMulInteger with many columns is kept as int8 (int16 where the
    centered codes need it) column blocks (`kernels.int_blocks`), the last one partial;
    bitwise ONNX Runtime's result, A batched. The size thresholds are lowered to keep the
    model small."""
    from itergraph.semantics import int_blocks

    k = int_blocks.MIN_K
    monkeypatch.setattr(int_blocks, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(int_blocks, "BLOCK_ELEMENTS", 64 * k)  # blocks of 64 columns
    made = []
    monkeypatch.setattr(int_blocks.IntBlocks, "__init__", _recording(made))
    rng = np.random.default_rng(7)
    lo, hi = np.iinfo(wtype).min, np.iinfo(wtype).max
    w = rng.integers(lo, hi + 1, (k, 2 * 64 + 17)).astype(wtype)
    w[:, 0] = lo  # the codes at both ends of their type
    w[:, 1] = hi
    model, out = _model("MatMulInteger", w, rng.integers(-5000, 5000, (w.shape[1],)).astype(
        np.int32), True, [2, 5, k])
    x = rng.standard_normal((2, 5, k)).astype(np.float32)
    got = ig.load(model).run({"x": x}, backend="numpy")[out]
    expect = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, expect)
    assert [(b.dtype, b.shape[1]) for _, b in made[0].blocks] == \
        [(np.dtype(held), 64)] * 2 + [(np.dtype(held), 17)]


def _recording(made):
    from itergraph.semantics import int_blocks

    init = int_blocks.IntBlocks.__init__

    def record(self, f32):
        init(self, f32)
        made.append(self)

    return record
