"""Declared shapes that ONNX Runtime reads otherwise than they say.

A Loop body that declares its iteration number or condition with a rank above 0 (``int64[1]``,
``bool[1]``) gets them as ``[1]`` from ONNX Runtime on every iteration, so the shapes of what
the body computes from them follow; a Scan-8 state declared without its batch axis is run with
it. The NumPy and JAX backends and the written ONNX file (run by ONNX Runtime) give ONNX
Runtime's outputs, shapes included."""

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


@pytest.mark.parametrize("declared", [[2], [3, 2], None])
def test_scan8_state_declared_without_batch_axis(declared, tmp_path):
    """A Scan-8 whose graph output for the final state is declared without the batch axis
    (ONNX Runtime runs it, ignoring the declaration): itergraph runs it, and the written file
    passes ONNX's full check and runs in ONNX Runtime to the same outputs."""
    body = h.make_graph(
        [h.make_node("Add", ["s", "x"], ["s2"]), h.make_node("Identity", ["s2"], ["y"])], "body",
        [h.make_tensor_value_info("s", T.FLOAT, [2]), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("s2", T.FLOAT, [2]),
         h.make_tensor_value_info("y", T.FLOAT, [2])])
    scan = h.make_node("Scan", ["", "s0", "xs"], ["sf", "ys"], num_scan_inputs=1, body=body)
    g = h.make_graph([scan], "g", [h.make_tensor_value_info("s0", T.FLOAT, [3, 2]),
                                   h.make_tensor_value_info("xs", T.FLOAT, [3, 4, 2])],
                     [h.make_tensor_value_info("sf", T.FLOAT, declared),
                      h.make_tensor_value_info("ys", T.FLOAT, [3, 4, 2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 8)], ir_version=3)
    feeds = {"s0": np.ones((3, 2), np.float32),
             "xs": np.arange(24, dtype=np.float32).reshape(3, 4, 2)}
    want = ort.InferenceSession(m.SerializeToString()).run(None, feeds)
    model = ig.load(m)
    for g_, w in zip(model.run(feeds, backend="numpy").values(), want):
        np.testing.assert_array_equal(g_, w)
    model.save(tmp_path / "m.onnx")
    written = onnx.load(tmp_path / "m.onnx")
    onnx.checker.check_model(written, full_check=True)
    for g_, w in zip(ort.InferenceSession(written.SerializeToString()).run(None, feeds), want):
        np.testing.assert_array_equal(g_, w)
