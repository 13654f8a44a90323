"""``ScatterND`` and ``GatherND`` natively on both backends (`backends.common.nd_index`; the
NumPy backend ran them through onnx.reference, and JAX could not lower ScatterND, which
decoder loops write their caches with), against ONNX Runtime, errors included."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig


def _compare(m, feeds, compiles: bool = True):
    try:
        want = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    except Exception:
        want = None
    for backend in ("numpy", "jax"):
        model = ig.load(m)
        if want is None:  # ORT refuses these indices: so do both backends, naming the node
            with pytest.raises(ig.ExecutionError, match="index out of range"):
                model.run(feeds, backend=backend)
            continue
        got = model.run(feeds, backend=backend)["y"]
        assert got.shape == want.shape, backend
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=backend)
        if backend == "jax" and compiles:
            assert all(r.compiles for r in model._jax.explain())


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("indices", [[[0, 1], [-1, 2]], [[0, 1], [4, 2]], [[3, 0], [1, 1]]])
def test_scatter_nd(reduction, indices):
    g = h.make_graph([h.make_node("ScatterND", ["d", "i", "u"], ["y"], reduction=reduction)],
                     "g", [h.make_tensor_value_info("d", T.FLOAT, [4, 3, 2]),
                           h.make_tensor_value_info("i", T.INT64, [2, 2]),
                           h.make_tensor_value_info("u", T.FLOAT, [2, 2])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    rng = np.random.default_rng(0)
    _compare(m, {"d": rng.standard_normal((4, 3, 2)).astype(np.float32),
                 "i": np.array(indices, np.int64),
                 "u": rng.standard_normal((2, 2)).astype(np.float32)})


@pytest.mark.parametrize("batch_dims,indices", [(0, [[0, 1], [-1, 2]]), (1, [[1], [0], [2], [-1]]),
                                                (0, [[3], [0], [1]]), (0, [[5], [0]]),
                                                (1, [[0, 1], [1, 0], [2, 1], [0, 0]])])
def test_gather_nd(batch_dims, indices):
    idx = np.array(indices, np.int64)
    g = h.make_graph([h.make_node("GatherND", ["d", "i"], ["y"], batch_dims=batch_dims)], "g",
                     [h.make_tensor_value_info("d", T.FLOAT, [4, 3, 2]),
                      h.make_tensor_value_info("i", T.INT64, list(idx.shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    _compare(m, {"d": np.random.default_rng(1).standard_normal((4, 3, 2)).astype(np.float32),
                 "i": idx})


def test_scatter_nd_cache_update_in_a_loop_compiles():
    """A decoder's preallocated cache: ``cache[i] = f(i)`` by ScatterND each iteration."""
    body = h.make_graph(
        [h.make_node("Unsqueeze", ["i", "ax"], ["i1"]),
         h.make_node("Unsqueeze", ["i1", "ax"], ["idx"]),
         h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Mul", ["row", "fi"], ["upd0"]),
         h.make_node("Unsqueeze", ["upd0", "ax"], ["upd"]),
         h.make_node("ScatterND", ["c_in", "idx", "upd"], ["c_out"]),
         h.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("cond", T.BOOL, []),
                 h.make_tensor_value_info("c_in", T.FLOAT, [6, 3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("c_out", T.FLOAT, [6, 3])],
        [h.make_tensor("ax", T.INT64, [1], [0])])
    g = h.make_graph([h.make_node("Loop", ["n", "", "c0"], ["c"], body=body)], "g",
                     [h.make_tensor_value_info("n", T.INT64, []),
                      h.make_tensor_value_info("c0", T.FLOAT, [6, 3]),
                      h.make_tensor_value_info("row", T.FLOAT, [3])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    g.output[0].name = "c"
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.graph.output[0].name = "y"
    m.graph.node[0].output[0] = "y"
    _compare(m, {"n": np.array(4, np.int64), "c0": np.zeros((6, 3), np.float32),
                 "row": np.arange(3, dtype=np.float32)})


def test_gather_nd_of_constant_indices_compiles():
    """Constant indices into a computed tensor (the dynamo exporter's attention-mask
    gather in BERT, GPT-2, Llama, T5): checked when tracing, not refused by the tracer."""
    idx = np.array([[[0, 1], [1, 3]], [[1, 0], [0, -1]]], np.int64)
    g = h.make_graph([h.make_node("Cast", ["d"], ["b"], to=T.BOOL),
                      h.make_node("GatherND", ["b", "i"], ["y"])], "g",
                     [h.make_tensor_value_info("d", T.INT64, [2, 4])],
                     [h.make_tensor_value_info("y", T.BOOL, None)],
                     [numpy_helper.from_array(idx, "i")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    _compare(m, {"d": np.array([[1, 0, 1, 1], [0, 1, 1, 0]], np.int64)})
