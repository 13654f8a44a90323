"""ir.static_values: what the chunk-size expressions exporters write in loop bodies compute,
given a width known from elsewhere (`known_dims`), equals what ONNX Runtime computes on a tensor
of that width."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

import itergraph as ig
from itergraph.ir.static_values import known_dims, static_value
from onnx_builders import const, run_ort


def _chunk_sizes(chunks: int) -> onnx.ModelProto:
    """torch.onnx's ``x.chunk(chunks, 1)`` sizes for a dynamic width (opset 13+): ``[ceil(W /
    chunks)] * (chunks - 1) + [W - ceil(W / chunks) * (chunks - 1)]``, with the -1 check
    torch writes, plus OpenVINO's Mod-based rounding."""
    nodes = [
        h.make_node("Shape", ["X"], ["shape"]),
        h.make_node("Gather", ["shape", "one"], ["w"], axis=0),
        h.make_node("Sub", ["n", "one_v"], ["n1"]),
        h.make_node("Add", ["w", "n1"], ["wn"]),
        h.make_node("Div", ["wn", "n"], ["size"]),
        h.make_node("Shape", ["n1"], ["n1_shape"]),
        h.make_node("ConstantOfShape", ["n1_shape"], ["ones"],
                    value=h.make_tensor("v", TensorProto.INT64, [1], [1])),
        h.make_node("Mul", ["ones", "minus1"], ["neg"]),
        h.make_node("Equal", ["n1", "neg"], ["eq"]),
        h.make_node("Where", ["eq", "ones", "n1"], ["reps"]),
        h.make_node("Expand", ["size", "reps"], ["firsts"]),
        h.make_node("Mul", ["size", "n1"], ["taken"]),
        h.make_node("Sub", ["w", "taken"], ["last"]),
        h.make_node("Concat", ["firsts", "last"], ["sizes"], axis=0),
        h.make_node("Mod", ["w", "n"], ["rest"], fmod=1),
        h.make_node("Mod", ["w", "n"], ["rest0"], fmod=0),
        h.make_node("Add", ["rest", "rest0"], ["rests"]),
        h.make_node("Shape", ["X"], ["tail"], start=1),
    ]
    inits = [const("one", 1, np.int64), const("n", chunks, np.int64),
             const("one_v", [1], np.int64), const("minus1", -1, np.int64)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", TensorProto.FLOAT, ["B", "W"])],
                     [h.make_tensor_value_info(n, TensorProto.INT64, None)
                      for n in ("sizes", "rests", "tail")], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("chunks,width", [(3, 18), (4, 512), (3, 7), (2, 1)])
def test_chunk_sizes_follow_from_a_known_width(chunks, width):
    m = _chunk_sizes(chunks)
    want = run_ort(m, {"X": np.zeros((2, width), np.float32)})
    g = ig.load(m).graph
    x = g.inputs[0]
    outs = {v.name: v for v in g.outputs}
    assert static_value(outs["sizes"]) is None  # the width is not declared
    with known_dims({x.uid: (None, width)}):
        for name in ("sizes", "rests", "tail"):
            np.testing.assert_array_equal(static_value(outs[name]), want[name], err_msg=name)
    assert static_value(outs["sizes"]) is None  # the hint ends with the block


def test_unknown_dimensions_stay_unknown():
    m = _chunk_sizes(3)
    g = ig.load(m).graph
    shape = next(v for n in g.nodes for v in n.outputs if v.name == "shape")
    with known_dims({g.inputs[0].uid: (None, 18)}):
        assert static_value(shape) is None  # the batch is not known
