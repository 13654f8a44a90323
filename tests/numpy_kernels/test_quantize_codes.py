"""`semantics.ms_quant.quantize` on NumPy (``clamp(rne(x / scale) + zp)``, computed in place
with the clamp first where the zero point is one value): the same codes as the formula
written out, for uint8 and int8, every zero point, values that saturate either way,
infinities, and ONNX Runtime's ``DynamicQuantizeLinear`` on inputs of one sign."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig
from itergraph.semantics import ms_quant as mq


def _written_out(x, scale, zp, dtype):
    lo, hi = mq.qrange(dtype)
    q = np.round(np.float32(x) / np.float32(scale)) + np.float32(zp)
    return np.clip(q, lo, hi).astype(dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_codes_match_the_formula(dtype):
    rng = np.random.default_rng(4)
    lo, hi = mq.qrange(dtype)
    x = (rng.standard_normal(400) * 300).astype(np.float32)
    x[:3] = [np.inf, -np.inf, 0.5]
    for zp in range(lo, hi + 1, 17):
        for scale in (np.float32(0.5), np.float32(3.0)):
            z = np.array(zp).astype(dtype)
            got = mq.quantize(np, x, scale, z, dtype)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, _written_out(x, scale, zp, dtype))


@pytest.mark.parametrize("sign", [1, -1, 0])
def test_dynamic_quantize_linear_matches_onnx_runtime(sign):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 50)).astype(np.float32)
    x = np.abs(x) * sign if sign else x
    graph = h.make_graph([h.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"])], "dql",
                         [h.make_tensor_value_info("x", T.FLOAT, [3, 50])],
                         [h.make_tensor_value_info(n, t, None)
                          for n, t in (("q", T.UINT8), ("s", T.FLOAT), ("z", T.UINT8))])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    got = ig.load(model).run({"x": x}, backend="numpy")
    expect = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for name, e in zip(("q", "s", "z"), expect):
        np.testing.assert_array_equal(got[name], e)
