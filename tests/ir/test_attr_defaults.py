"""Attribute defaults (`ir.defaults`): ONNX's schemas, and ONNX Runtime's for the contrib ops
that share a standard op's kernel. A node that leaves its attributes out computes what ONNX
Runtime computes on both backends; one that leaves out a required one is refused by name."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper as h
from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

from itergraph.errors import ModelError
from itergraph.frontends.onnx.attributes import attr_from_onnx
from itergraph.ir.attributes import attr_or_default
from itergraph.ir.defaults import CONTRIB
from itergraph.ir.graph import Node
from onnx_builders import F, assert_same, run_ig, run_ort, vi


def test_contrib_defaults_are_onnx_runtime_s():
    schemas = {(s.domain, s.name): s for s in get_all_operator_schema()}
    for (domain, op), table in CONTRIB.items():
        attrs = schemas[(domain, op)].attributes
        for name, value in table.items():
            # ONNX Runtime's binding gives the default as a serialised AttributeProto
            want = attr_from_onnx(onnx.AttributeProto.FromString(
                attrs[name]._default_value), lambda g: None)
            assert value == want, (op, name, value, want)


def _all_defaults_model() -> onnx.ModelProto:
    """One node of each op whose attributes are all left out (but required ones)."""
    ms = "com.microsoft"
    nodes = [
        h.make_node("LeakyRelu", ["x"], ["leaky"]),
        h.make_node("Elu", ["x"], ["elu"]),
        h.make_node("Selu", ["x"], ["selu"]),
        h.make_node("HardSigmoid", ["x"], ["hsig"]),
        h.make_node("Softmax", ["x"], ["softmax"]),
        h.make_node("Gemm", ["x", "w", "c"], ["gemm"]),
        h.make_node("FusedGemm", ["x", "w", "c"], ["fgemm"], domain=ms, activation="Relu"),
        h.make_node("ReduceMean", ["x"], ["mean"]),
        h.make_node("ArgMax", ["x"], ["argmax"]),
        h.make_node("CumSum", ["x", "zero"], ["cumsum"]),
        h.make_node("LayerNormalization", ["x", "s"], ["ln"]),
        h.make_node("Flatten", ["x"], ["flat"]),
    ]
    outs = [vi(n.output[0], onnx.TensorProto.INT64 if n.op_type == "ArgMax" else F)
            for n in nodes]
    g = h.make_graph(nodes, "defaults", [vi("x", F, [3, 4]), vi("w", F, [4, 4]),
                                         vi("c", F, [4]), vi("s", F, [4])], outs,
                     [onnx.numpy_helper.from_array(np.array(0, np.int64), "zero")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21), h.make_opsetid(ms, 1)],
                        ir_version=10)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_left_out_attributes_compute_what_onnx_runtime_computes(backend):
    m = _all_defaults_model()
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((3, 4), np.float32),
             "w": rng.standard_normal((4, 4), np.float32),
             "c": rng.standard_normal(4).astype(np.float32),
             "s": rng.standard_normal(4).astype(np.float32)}
    assert_same(run_ig(m, feeds, backend=backend), run_ort(m, feeds), rtol=1e-5, atol=1e-5)


def test_a_left_out_required_attribute_is_refused_by_name():
    with pytest.raises(ModelError, match=r"Concat node 'join'.*'axis' is required"):
        attr_or_default(Node("Concat", name="join"), "axis")

