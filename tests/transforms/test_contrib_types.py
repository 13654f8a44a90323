"""Types of ONNX Runtime's ``com.microsoft`` operators' outputs (`shapes.contrib_types`),
which ONNX's inference has no schema for, checked against what ONNX Runtime computes: the
values after them get shapes, so the writers know their ranks."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.shapes.infer_shapes import infer_shapes

MS = "com.microsoft"


def test_types_through_fused_ops_match_onnx_runtime():
    rng = np.random.default_rng(0)
    consts = {k: rng.standard_normal(s).astype(np.float32) for k, s in
              {"g": (8,), "b": (8,), "w": (8, 24), "wb": (24,), "word": (11, 8),
               "pos": (6, 8), "seg": (2, 8), "wn": (8, 5)}.items()}
    nodes = [h.make_node("EmbedLayerNormalization",
                         ["ids", "sid", "word", "pos", "seg", "g", "b", "mask"],
                         ["e", "mi"], domain=MS),
             h.make_node("Attention", ["e", "w", "wb", "mi"], ["att"], domain=MS, num_heads=2),
             h.make_node("SkipLayerNormalization", ["att", "e", "g", "b"],
                         ["s", "", "", "sum"], domain=MS),
             h.make_node("FastGelu", ["s"], ["f"], domain=MS),
             h.make_node("MatMul", ["f", "wn"], ["y"])]
    ins = [h.make_tensor_value_info(n, T.INT32, ["batch", "seq"]) for n in ("ids", "sid", "mask")]
    outs = [h.make_value_info(n, h.make_empty_tensor_value_info(n).type)
            for n in ("y", "sum", "mi")]
    g = h.make_graph(nodes, "g", ins, outs,
                     [numpy_helper.from_array(v, k) for k, v in consts.items()])
    m = h.make_model(g, ir_version=8, opset_imports=[h.make_opsetid("", 17),
                                                     h.make_opsetid(MS, 1)])
    model = ig.load(m)
    infer_shapes(model.graph)
    types = {v.name: v.type for _, n in model.graph.walk() for v in n.outputs if v is not None}
    feeds = {"ids": rng.integers(0, 11, (2, 6)).astype(np.int32),
             "sid": rng.integers(0, 2, (2, 6)).astype(np.int32),
             "mask": np.ones((2, 6), np.int32)}
    got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]) \
        .run(["y", "sum", "mi"], feeds)
    for name, value in zip(("y", "sum", "mi"), got):
        t = types[name]
        assert t.dtype.numpy == value.dtype, name
        assert len(t.shape) == value.ndim, name
        assert [d for d in t.shape if isinstance(d, int)] == \
            [s for d, s in zip(t.shape, value.shape) if isinstance(d, int)], name
    assert types["y"].shape == ("batch", "seq", 5)
