"""LRN against ONNX Runtime (the ``onnx.reference`` fallback it replaces miscomputed it)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import itergraph as ig


@pytest.mark.parametrize("size", [1, 3, 5])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_lrn_matches_onnxruntime(size, backend):
    g = h.make_graph([h.make_node("LRN", ["x"], ["y"], size=size, alpha=0.3, beta=0.6,
                                  bias=1.5)], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [2, 6, 3, 3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, 6, 3, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    x = np.random.default_rng(size).standard_normal((2, 6, 3, 3)).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(ig.load(m).run({"x": x}, backend=backend)["y"], want,
                               rtol=1e-5, atol=1e-6)
