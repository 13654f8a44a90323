"""Work that depends on constants alone is done once, on the host, when the JAX backend
compiles, not in every call: a node over large constants passed as arguments (a
DequantizeLinear of int8 weights) and a rule's preparation of a constant operand (the
centered weights of MatMulInteger, ConvInteger and DynamicQuantizeLSTM).

Results must not change: they are checked against the NumPy backend, ONNX Runtime, or a
plain int64 product. That the work is not redone is checked on the compiled program: the
arguments it takes (the prepared weight, not the raw one) and the trace count across calls.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from itergraph.backends import jax as jb
from itergraph.backends.jax import big_constants, jit_step
from itergraph.backends.numpy import run_graph as numpy_run
from itergraph.frontends.onnx import read
from itergraph.semantics import ms_quant as mq
from onnx_builders import run_ort

rng = np.random.default_rng(11)
MS = "com.microsoft"


@pytest.fixture
def as_arguments(monkeypatch):
    """Every constant of more than 64 elements is passed as an argument (as a model's
    weights are when they add up to more than `big_constants.EMBED_BYTES`)."""
    monkeypatch.setattr(big_constants, "BIG_CONSTANT", 64)
    monkeypatch.setattr(big_constants, "EMBED_BYTES", 0)


def model(nodes, inputs: dict, consts: dict, outputs: list[str]) -> onnx.ModelProto:
    types = {np.dtype(np.float32): T.FLOAT, np.dtype(np.uint8): T.UINT8,
             np.dtype(np.int8): T.INT8}
    ins = [h.make_tensor_value_info(k, types[v.dtype], list(v.shape)) for k, v in inputs.items()]
    outs = [h.make_value_info(o, h.make_empty_tensor_value_info(o).type) for o in outputs]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    g = h.make_graph(nodes, "g", ins, outs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)],
                        ir_version=8)


def compiled(m: onnx.ModelProto, feeds: dict):
    """The model compiled for the JAX backend and run three times on `feeds` (the results
    of the last run, which must equal the first's), and its prepared call."""
    cg = jb.compile_graph(read(m))
    first = cg.run(feeds)
    cg.run(feeds)
    out = cg.run(feeds)
    for k in first:
        np.testing.assert_array_equal(out[k], first[k])
    fast = cg.prepared_call(cg.signature(feeds, None))
    assert fast is not None  # one compiled program
    return out, cg, fast


def parameters(fast) -> list[str]:
    """The parameters of the compiled program, as XLA writes their types (``f32[96,40]``)."""
    entry = fast.compiled.as_text().split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    return re.findall(r"= (\w+\[[\d,]*\])\S* parameter\(", entry)


def test_dequantized_weight_is_computed_once(as_arguments):
    """DequantizeLinear of constant int8 weights feeding a MatMul: the program takes the
    float32 weights, computed on the host (exactly as the NumPy backend's), not the int8."""
    w = rng.integers(-128, 128, (300, 256)).astype(np.int8)
    x = rng.standard_normal((3, 300)).astype(np.float32)
    nodes = [h.make_node("DequantizeLinear", ["W", "s", "z"], ["Wf"], axis=1),
             h.make_node("MatMul", ["x", "Wf"], ["y"])]
    consts = {"W": w, "s": rng.uniform(0.01, 0.02, 256).astype(np.float32),
              "z": rng.integers(-3, 3, 256).astype(np.int8)}
    m = model(nodes, {"x": x}, consts, ["y"])
    out, cg, fast = compiled(m, {"x": x})
    assert "f32[300,256]" in parameters(fast) and "s8[300,256]" not in parameters(fast)
    assert [r for r in cg.explain() if "computed once" in r.reason]
    # the plain float64 product (ONNX Runtime is no oracle here: it rewrites DequantizeLinear
    # -> MatMul into a product of dynamically quantized x, 0.4 off)
    wf = (w.astype(np.float32) - consts["z"].astype(np.float32)) * consts["s"]
    np.testing.assert_allclose(out["y"], x.astype(np.float64) @ wf, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out["y"], numpy_run(read(m), {"x": x})["y"], rtol=1e-5,
                               atol=1e-4)


def test_constant_work_is_not_traced_per_call(as_arguments, monkeypatch):
    """The program is traced twice on the first call (the second time with the host results
    as arguments), and never again."""
    traces = []
    orig = jit_step.JitStep._fn
    monkeypatch.setattr(jit_step.JitStep, "_fn",
                        lambda self, *a: (traces.append(1), orig(self, *a))[1])
    w = rng.integers(-128, 128, (300, 256)).astype(np.int8)
    x = rng.standard_normal((2, 300)).astype(np.float32)
    nodes = [h.make_node("Cast", ["W"], ["Wf"], to=T.FLOAT),
             h.make_node("MatMul", ["x", "Wf"], ["y"])]
    m = model(nodes, {"x": x}, {"W": w}, ["y"])
    out, _, fast = compiled(m, {"x": x})
    assert len(traces) == 2
    assert parameters(fast) == ["f32[2,300]", "f32[300,256]"]
    np.testing.assert_allclose(out["y"], x.astype(np.float64) @ w, rtol=1e-5, atol=1e-3)


def _int_product(a, azp, b, bzp):
    """The plain int64 product, wrapped to int32 as the ops define."""
    p = (a.astype(np.int64) - np.int64(azp)) @ (b.astype(np.int64) - bzp.astype(np.int64))
    return p.astype(np.int32)


@pytest.mark.parametrize("spread,kind", [(20, "f32"), (128, "f64")])
def test_matmul_integer_weight_centered_once(as_arguments, spread, kind):
    """MatMulInteger with a constant uint8 B and per-column zero points: B - zp is an
    argument, in float32 when 255 * the largest column sum of |B - zp| is below 2**24, else
    float64 (a wide spread over 2048 rows); the int32 result is exact either way."""
    K, N = 2048, 24
    bzp = rng.integers(120, 136, N).astype(np.uint8)
    b = np.clip(bzp.astype(np.int64) + rng.choice([-spread, spread], (K, N)), 0, 255)
    b = b.astype(np.uint8)
    a = rng.integers(0, 256, (5, K)).astype(np.uint8)
    m = model([h.make_node("MatMulInteger", ["a", "B", "az", "bz"], ["y"])],
              {"a": a}, {"B": b, "az": np.uint8(131), "bz": bzp}, ["y"])
    out, _, fast = compiled(m, {"a": a})
    assert parameters(fast) == ["u8[5,2048]", f"{kind}[{K},{N}]"]
    np.testing.assert_array_equal(out["y"], _int_product(a, 131, b, bzp))


def test_conv_integer_weight_centered_once(as_arguments):
    """ConvInteger with constant uint8 weights: exact against ONNX Runtime, the weights
    centered once (a float32 argument, laid out as the column product reads it)."""
    x = rng.integers(0, 256, (1, 8, 12, 10)).astype(np.uint8)
    w = rng.integers(100, 160, (16, 8, 3, 3)).astype(np.uint8)
    node = h.make_node("ConvInteger", ["x", "W", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])
    m = model([node], {"x": x}, {"W": w, "xz": np.uint8(7), "wz": np.uint8(129)}, ["y"])
    out, _, fast = compiled(m, {"x": x})
    assert parameters(fast) == ["u8[1,8,12,10]", "f32[16,72]"]
    np.testing.assert_array_equal(out["y"], run_ort(m, {"x": x})["y"])


def test_dynamic_quantize_lstm_weights_centered_once(as_arguments):
    """DynamicQuantizeLSTM compiles; its int8 W and R are centered once (float32
    arguments: W one per direction, R one for both directions, which one scan steps
    together) and its outputs agree with ONNX Runtime's and the NumPy backend's."""
    seq, inp, H, dirs = 7, 24, 16, 2
    w = rng.integers(-63, 64, (dirs, inp, 4 * H)).astype(np.int8)
    r = rng.integers(-63, 64, (dirs, H, 4 * H)).astype(np.int8)
    consts = {"W": w, "R": r, "B": rng.standard_normal((dirs, 8 * H)).astype(np.float32) * .2,
              "ws": np.full(dirs, 0.01, np.float32), "wz": np.zeros(dirs, np.int8),
              "rs": np.full(dirs, 0.02, np.float32), "rz": np.zeros(dirs, np.int8)}
    x = rng.standard_normal((seq, 1, inp)).astype(np.float32)
    node = h.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "B", "", "", "", "", "ws", "wz",
                                               "rs", "rz"], ["Y", "Y_h", "Y_c"],
                       domain=MS, hidden_size=H, direction="bidirectional")
    m = model([node], {"x": x}, consts, ["Y", "Y_h", "Y_c"])
    out, _, fast = compiled(m, {"x": x})
    params = parameters(fast)
    assert params.count(f"f32[{inp},{4 * H}]") == dirs
    assert params.count(f"f32[{dirs},{H},{4 * H}]") == 1  # R: both directions, one scan
    assert not [p for p in params if p.startswith("s8[")]
    want = run_ort(m, {"x": x})
    ref = numpy_run(read(m), {"x": x})
    for k in want:
        np.testing.assert_allclose(out[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)
        np.testing.assert_allclose(out[k], ref[k], rtol=1e-6, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("dtype,limit", [(np.uint8, 255), (np.int8, 255),
                                         (np.int16, 65535)])
def test_centered_weight_type_bound(dtype, limit):
    """float32 exactly while span(a) * max column sum of |b| stays below 2**24."""
    n = (1 << 24) // limit  # span * n < 2**24 <= span * (n + 1)
    below = np.ones((n, 2))
    above = np.ones((n + 1, 2))
    assert mq.centered_weight(below, None, dtype, (-2,)).dtype == np.float32
    assert mq.centered_weight(above, None, dtype, (-2,)).dtype == np.float64
    assert mq.centered_weight(below, None, np.int32, (-2,)).dtype == np.float64  # not 8/16-bit


def test_conv_weights_laid_out_once(as_arguments):
    """A general convolution's constant weights, passed as an argument, are laid out
    spatial axes first (as XLA's CPU convolution reads them) on the host, once: the program
    takes them so, and agrees with the NumPy backend and ONNX Runtime."""
    x = rng.standard_normal((1, 40, 24, 32)).astype(np.float32)
    w = rng.standard_normal((24, 40, 3, 3)).astype(np.float32) * 0.1
    node = h.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1], strides=[2, 1])
    m = model([node], {"x": x}, {"W": w}, ["y"])
    out, _, fast = compiled(m, {"x": x})
    assert parameters(fast) == ["f32[1,40,24,32]", "f32[3,3,40,24]"]
    np.testing.assert_allclose(out["y"], run_ort(m, {"x": x})["y"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["y"], numpy_run(read(m), {"x": x})["y"], rtol=1e-5,
                               atol=1e-5)
