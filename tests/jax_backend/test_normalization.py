"""LpNormalization, GroupNormalization (opsets 18 and 21), MeanVarianceNormalization,
GlobalLpPool, LpPool and ReverseSequence compile on JAX (no NumPy step) with ONNX Runtime's
outputs."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from onnx_builders import run_ort

rng = np.random.default_rng(3)


def _check(node, x, consts=None, opset=18):
    inits = [numpy_helper.from_array(v, k) for k, v in (consts or {}).items()]
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    model = ig.load(m)
    got = model.run({"x": x}, backend="jax")["y"]
    np.testing.assert_allclose(got, run_ort(m, {"x": x})["y"], rtol=1e-5, atol=1e-5)
    assert all(r.compiles for r in model._jax.explain())


@pytest.mark.parametrize("axis,p", [(1, 2), (-1, 1), (0, 2)])
def test_lp_normalization(axis, p):
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    _check(h.make_node("LpNormalization", ["x"], ["y"], axis=axis, p=p), x)


@pytest.mark.parametrize("opset,groups,shape", [(21, 4, (2, 8, 5, 3)), (18, 2, (1, 6, 7)),
                                                (21, 1, (2, 4, 3, 3))])
def test_group_normalization(opset, groups, shape):
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    n = shape[1] if opset >= 21 else groups  # opset 18: scale and bias per group
    consts = {"s": rng.standard_normal(n).astype(np.float32),
              "b": rng.standard_normal(n).astype(np.float32)}
    node = h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups,
                       epsilon=1e-3)
    _check(node, x, consts, opset)


@pytest.mark.parametrize("axes", [None, [1, 2]])
def test_mean_variance_normalization(axes):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    attrs = {} if axes is None else {"axes": axes}
    _check(h.make_node("MeanVarianceNormalization", ["x"], ["y"], **attrs), x, opset=13)


@pytest.mark.parametrize("p", [2, 3])
def test_global_lp_pool(p):
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    _check(h.make_node("GlobalLpPool", ["x"], ["y"], p=p), x)


@pytest.mark.parametrize("attrs", [{"kernel_shape": [2, 2], "p": 2},
                                   {"kernel_shape": [3, 2], "strides": [2, 1],
                                    "pads": [1, 0, 1, 1], "p": 3}])
def test_lp_pool(attrs):
    x = rng.standard_normal((1, 3, 6, 5)).astype(np.float32)
    _check(h.make_node("LpPool", ["x"], ["y"], **attrs), x)


@pytest.mark.parametrize("batch_axis,time_axis,lens", [(1, 0, [4, 1, 0]), (0, 1, [2, 5, 3])])
def test_reverse_sequence(batch_axis, time_axis, lens):
    """ReverseSequence (TensorFlow's bidirectional RNNs) with run-time lengths."""
    shape = [0, 0, 2]
    shape[batch_axis], shape[time_axis] = 3, 5
    x = rng.standard_normal(shape).astype(np.float32)
    node = h.make_node("ReverseSequence", ["x", "n"], ["y"], batch_axis=batch_axis,
                       time_axis=time_axis)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, shape),
                                   h.make_tensor_value_info("n", T.INT64, [3])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    feeds = {"x": x, "n": np.array(lens, np.int64)}
    model = ig.load(m)
    np.testing.assert_array_equal(model.run(feeds, backend="jax")["y"], run_ort(m, feeds)["y"])
    assert all(r.compiles for r in model._jax.explain())
    with pytest.raises(ig.Error, match="sequence_lens"):
        model.run({"x": x, "n": np.array([6, 1, 1], np.int64)}, backend="jax")
