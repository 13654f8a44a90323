"""`static_value` of ``Gather(Shape(x), k)`` with ``k`` outside the shape is unknown (the
Gather kernel names the bad index when it runs), never a raw IndexError from the folding."""

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h

import itergraph as ig
from itergraph.ir.static_values import static_int, static_value


def _gathered(k: int):
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "k"], ["d"], name="g", axis=0)]
    g = h.make_graph(nodes, "m", [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("d", TensorProto.INT64, [])],
                     [onnx.numpy_helper.from_array(np.array(k, np.int64), "k")])
    m = ig.load(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    return next(n for _, n in m.graph.walk() if n.op_type == "Gather").outputs[0]


def test_an_index_past_the_shape_is_unknown():
    for k in (2**56, 2, -3):
        assert static_value(_gathered(k)) is None
        assert static_int(_gathered(k)) is None


def test_an_index_inside_the_shape_is_the_dimension():
    assert static_int(_gathered(1)) == 3
    assert static_int(_gathered(-2)) == 2
