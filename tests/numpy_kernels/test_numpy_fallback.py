"""The onnx.reference fallback: ops without a native kernel, checked against ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import call
from onnx import TensorProto
from onnx import helper as h

from itergraph import UnsupportedError
from itergraph.backends.numpy.kernels import factory_for, set_default_factory
from itergraph.backends.numpy.plan import CompileContext, make_kernel
from itergraph.frontends.onnx.reference_fallback import fallback_factory
from itergraph.ir import Node, Value
from onnx_builders import I64, assert_same, const, model, run_ig, run_ort, vi

F = TensorProto.FLOAT


def test_ops_without_native_kernels_match_onnxruntime():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    nodes = [
        h.make_node("EyeLike", ["x"], ["eye"], k=1),
        h.make_node("TopK", ["x", "k"], ["top_v", "top_i"], axis=1, largest=0),
        h.make_node("Trilu", ["x"], ["tri"], upper=0),
        h.make_node("Einsum", ["x", "x"], ["gram"], equation="ij,kj->ik"),
        h.make_node("Hardmax", ["x"], ["hm"], axis=0),
        h.make_node("LpNormalization", ["x"], ["lp"], axis=1, p=2),
    ]
    m = model(nodes, [vi("x", F, [3, 5])],
              [vi("eye", F, [3, 5]), vi("top_v", F, [3, 2]), vi("top_i", I64, [3, 2]),
               vi("tri", F, [3, 5]), vi("gram", F, [3, 3]), vi("hm", F, [3, 5]),
               vi("lp", F, [3, 5])],
              inits=[const("k", [2], np.int64)], opset=18)
    assert_same(run_ig(m, {"x": x}), run_ort(m, {"x": x}), rtol=1e-5, atol=1e-6)


def test_context_dependent_function_is_loaded_per_input_type():
    """Gelu's ONNX function body depends on the input type: loaded at the first call."""
    node = Node("Gelu", [Value("x")], 1, {"approximate": "tanh"}, version=20, name="g")
    fn = fallback_factory(node, CompileContext())
    for dtype in (np.float32, np.float64):
        x = np.linspace(-2, 2, 7).astype(dtype)
        got = fn(x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, call("Gelu", x, version=20, approximate="tanh"),
                                   rtol=1e-5, atol=1e-6)


def test_unknown_op_is_unsupported_and_named():
    node = Node("NoSuchOp", [Value("x")], 1, {}, version=18, name="mystery")
    with pytest.raises(UnsupportedError) as e:
        fallback_factory(node, CompileContext())
    msg = str(e.value)
    for part in ("NoSuchOp", "mystery", "domain ''", "version 18"):
        assert part in msg, msg


def test_unknown_domain_is_unsupported_and_named():
    node = Node("Thing", [Value("x")], 1, {}, domain="com.example", version=1, name="t")
    with pytest.raises(UnsupportedError, match="com.example"):
        fallback_factory(node, CompileContext())


def test_standard_ops_need_the_registered_default_factory():
    """The backend knows no fallback of its own: `itergraph` registers the ONNX frontend's."""
    node = Node("Hardmax", [Value("x")], 1, {}, version=18, name="hm")
    registered = factory_for("Hardmax", 18)
    assert registered is not None
    set_default_factory(None, [""])
    try:
        assert factory_for("Hardmax", 18) is None
        with pytest.raises(UnsupportedError, match="no NumPy kernel for op 'Hardmax' of domain ''"):
            make_kernel(node, CompileContext())
    finally:
        set_default_factory(registered, [""])
    assert factory_for("Hardmax", 18) is registered
