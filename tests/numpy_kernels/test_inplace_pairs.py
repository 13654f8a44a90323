"""The NumPy planner's in-place element-wise pairs (`backends.numpy.inplace`): the results
are bitwise those of the unfused kernels (`fuse=False`) and agree with ONNX Runtime; the
inputs are never written; a pair runs in place only where the shapes and types allow it, and
is not formed where its first node can be folded."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import itergraph as ig

F32 = np.float32


def _hard_swish(shape, dtype=TensorProto.FLOAT, np_dtype=F32):
    """PaddleOCR's hard-swish: ``Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)``, the bounds and
    divisor as Constant nodes written between the pair's two nodes."""
    def const(name, v):
        return helper.make_node("Constant", [], [name],
                                value=numpy_helper.from_array(np.array(v, np_dtype), name))

    nodes = [helper.make_node("Add", ["x", "three"], ["a"]), const("lo", 0), const("hi", 6),
             helper.make_node("Clip", ["a", "lo", "hi"], ["c"]),
             helper.make_node("Mul", ["x", "c"], ["m"]), const("six", 6),
             helper.make_node("Div", ["m", "six"], ["y"])]
    graph = helper.make_graph(nodes, "hs", [helper.make_tensor_value_info("x", dtype, shape)],
                              [helper.make_tensor_value_info("y", dtype, None)],
                              [numpy_helper.from_array(np.array(3, np_dtype), "three")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _binary_pair(first, second, a_shape, b_shape, c_shape, slot=0, np_dtype=F32,
                 dtype=TensorProto.FLOAT):
    """``second(first(a, b), c)`` (the first's result as input `slot` of the second)."""
    ins = ["t", "c"] if slot == 0 else ["c", "t"]
    nodes = [helper.make_node(first, ["a", "b"], ["t"]), helper.make_node(second, ins, ["y"])]
    inputs = [helper.make_tensor_value_info(n, dtype, s)
              for n, s in (("a", a_shape), ("b", b_shape), ("c", c_shape))]
    graph = helper.make_graph(nodes, "pair", inputs,
                              [helper.make_tensor_value_info("y", dtype, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _calls(model, fuse=True) -> int:
    from itergraph.backends.numpy import CompileContext

    return CompileContext(fuse=fuse).compile(ig.load(model).graph).source.count(" = k")


def _check(model, feeds):
    from itergraph.backends.numpy import CompileContext, run_plan

    graph = ig.load(model).graph
    before = {k: v.copy() for k, v in feeds.items()}
    fused = run_plan(CompileContext().compile(graph), feeds)
    plain = run_plan(CompileContext(fuse=False).compile(graph), feeds)
    for k, v in feeds.items():  # inputs untouched
        np.testing.assert_array_equal(v, before[k])
    for f, p in zip(fused.values(), plain.values()):
        assert f.dtype == p.dtype and f.shape == p.shape
        np.testing.assert_array_equal(f, p)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for f, w in zip(fused.values(), want):
        np.testing.assert_allclose(f, w, rtol=1e-6, atol=1e-6)


def test_hard_swish_runs_as_two_kernels():
    model = _hard_swish([1, 8, 3, 5])
    x = (np.random.default_rng(0).standard_normal((1, 8, 3, 5)) * 4).astype(F32)
    _check(model, {"x": x})
    assert _calls(model) == 2 and _calls(model, fuse=False) == 4


@pytest.mark.parametrize("first", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("second", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("slot", [0, 1])
@pytest.mark.parametrize("shapes", [
    ([2, 3, 4], [2, 3, 4], [4]),       # the other operand broadcasts into t: in place
    ([2, 3, 4], [1, 3, 1], [2, 3, 4]),  # same shape as t
    ([3, 1], [1], [2, 3, 4]),          # t broadcasts into the other operand: a new array
    ([], [], []),                      # 0-d
])
def test_binary_pairs(first, second, slot, shapes):
    rng = np.random.default_rng(len(first) * 7 + len(second) + slot)
    feeds = {n: np.asarray(rng.random(s) + 0.5, F32) for n, s in zip("abc", shapes)}
    model = _binary_pair(first, second, *shapes, slot=slot)
    _check(model, feeds)
    assert _calls(model) == 1


def test_integer_pair_is_not_in_place():
    """Integer Div truncates toward zero: the second node runs as its own kernel."""
    model = _binary_pair("Sub", "Div", [5], [5], [5], np_dtype=np.int32,
                         dtype=TensorProto.INT32)
    feeds = {"a": np.array([7, -7, 9, -9, 1], np.int32), "b": np.ones(5, np.int32),
             "c": np.array([2, 2, -4, 4, 3], np.int32)}
    _check(model, feeds)


def test_clip_with_one_bound_and_wider_bounds():
    """A bound that would widen t keeps the second node out of place."""
    nodes = [helper.make_node("Mul", ["a", "b"], ["t"]),
             helper.make_node("Clip", ["t", "lo"], ["y"])]
    graph = helper.make_graph(
        nodes, "clip",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("lo", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    rng = np.random.default_rng(3)
    _check(model, {"a": rng.standard_normal(3).astype(F32),
                   "b": rng.standard_normal(3).astype(F32), "lo": np.array(0.1, F32)})


def test_constant_first_node_is_folded_not_fused():
    """``Mul(Add(k1, k2), x)``: the Add is folded when compiling, no pair is formed."""
    nodes = [helper.make_node("Add", ["k1", "k2"], ["t"]),
             helper.make_node("Mul", ["t", "x"], ["y"])]
    graph = helper.make_graph(
        nodes, "fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.arange(4, dtype=F32), "k1"),
         numpy_helper.from_array(np.ones(4, F32), "k2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    _check(model, {"x": np.arange(4, dtype=F32) - 1})
    assert _calls(model) == 1
    src = __import__("itergraph.backends.numpy", fromlist=["CompileContext"]).CompileContext(
    ).compile(ig.load(model).graph).source
    assert "(f" in src or ", f" in src  # the Mul reads the folded constant
