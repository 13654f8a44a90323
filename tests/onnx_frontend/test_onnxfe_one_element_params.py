"""A Loop body that declares its iteration number or condition as a one-element tensor
(``int64[1]``, ``bool[1]``): ONNX Runtime feeds them with that shape on every iteration, so
the shapes of what the body computes from them follow. The NumPy and JAX backends and the
written ONNX file (run by ONNX Runtime) give ONNX Runtime's outputs, shapes included."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig


def _model(iter_shape, cond_shape, scan_from: str) -> onnx.ModelProto:
    scan = (h.make_node("Identity", ["fi"], ["scan"]) if scan_from == "iteration" else
            h.make_node("Cast", ["cond_in"], ["scan"], to=T.FLOAT))
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Add", ["s_in", "fi"], ["s_out"]), scan],
        "body",
        [h.make_tensor_value_info("i", T.INT64, iter_shape),
         h.make_tensor_value_info("cond_in", T.BOOL, cond_shape),
         h.make_tensor_value_info("s_in", T.FLOAT, [1])],
        [h.make_tensor_value_info("cond_out", T.BOOL, cond_shape),
         h.make_tensor_value_info("s_out", T.FLOAT, [1]),
         h.make_tensor_value_info("scan", T.FLOAT, None)])
    g = h.make_graph([h.make_node("Loop", ["n", "", "s0"], ["s", "ys"], body=body)], "g",
                     [h.make_tensor_value_info("n", T.INT64, []),
                      h.make_tensor_value_info("s0", T.FLOAT, [1])],
                     [h.make_tensor_value_info("s", T.FLOAT, None),
                      h.make_tensor_value_info("ys", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


CASES = [([1], [], "iteration"), ([1, 1], [], "iteration"), ([], [1], "condition"),
         ([1], [1], "condition"), ([], [], "iteration")]


@pytest.mark.parametrize("iter_shape,cond_shape,scan_from", CASES)
def test_one_element_iteration_and_condition(iter_shape, cond_shape, scan_from, tmp_path):
    m = _model(iter_shape, cond_shape, scan_from)
    feeds = {"n": np.array(4, np.int64), "s0": np.array([1.0], np.float32)}
    want = ort.InferenceSession(m.SerializeToString()).run(None, feeds)
    model = ig.load(m)
    for backend in ("numpy", "jax"):
        got = list(model.run(feeds, backend=backend).values())
        for g, w in zip(got, want):
            assert np.shape(g) == w.shape, (backend, np.shape(g), w.shape)
            np.testing.assert_allclose(g, w)
    model.save(tmp_path / "m.onnx")
    written = onnx.load(tmp_path / "m.onnx")
    onnx.checker.check_model(written, full_check=True)
    got = ort.InferenceSession(written.SerializeToString()).run(None, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w)
