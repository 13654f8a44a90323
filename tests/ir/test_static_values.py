"""ir.static_values, the one constant evaluator: what the chunk-size expressions exporters
write in loop bodies compute, given a width known from elsewhere (`known_dims`), equals what
ONNX Runtime computes on a tensor of that width; and the evaluator's own rules (the kernels'
semantics, its bounds)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

import itergraph
import itergraph as ig
from itergraph.ir import Node, Value, tensor
from itergraph.ir.static_values import (
    MAX_DEPTH,
    MAX_ELEMENTS,
    const_value,
    known_dims,
    set_kernel_runner,
    static_int,
    static_value,
)
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


# --- the evaluator's own rules -------------------------------------------------------------

def _i64(name: str, value) -> Value:
    return Value(name, const=np.array(value, np.int64))


def _node(op: str, inputs, **attrs) -> Value:
    return Node(op, inputs, attrs=attrs, version=17).outputs[0]


def test_integer_division_is_the_kernels_truncation():
    """ONNX's integer Div truncates toward zero (the NumPy kernel's rule): -7 / 2 is -3, not
    the floor -4 that one of the two former evaluators computed."""
    assert static_int(_node("Div", [_i64("a", -7), _i64("b", 2)])) == -3


def test_a_division_by_zero_is_left_to_the_run():
    assert static_value(_node("Div", [_i64("a", 7), _i64("b", 0)])) is None


def test_shape_arithmetic_on_partly_known_shapes():
    x = Value("x", tensor("float32", ("N", 6)))
    width = _node("Gather", [_node("Shape", [x]), _i64("one", 1)], axis=0)
    assert static_int(_node("Mul", [width, _i64("two", 2)])) == 12
    assert static_value(_node("Shape", [x])) is None  # the batch is not known


def test_no_large_tensor_is_built():
    huge = _node("ConstantOfShape", [_i64("shape", [10**9, 10**9])])
    assert static_value(huge) is None
    wide = _node("Expand", [_i64("one", 1), _i64("shape", [MAX_ELEMENTS + 1])])
    assert static_value(wide) is None
    assert static_value(_node("Expand", [_i64("one", 1), _i64("shape", [4])])).shape == (4,)
    big = Value("w", const=np.zeros(MAX_ELEMENTS + 1, np.int64))
    assert static_value(big) is None and const_value(big) is not None


def test_long_chains_stop_at_the_depth_bound():
    v = _i64("zero", 0)
    for _ in range(MAX_DEPTH + 8):
        v = _node("Add", [v, _i64("one", 1)])
    assert static_value(v) is None


def test_shared_operands_are_computed_once():
    """A chain of ``Add(v, v)``: 2**40 paths, one evaluation per node."""
    v = _i64("one", 1)
    for _ in range(40):
        v = _node("Add", [v, v])
    assert static_int(v) == 2**40


def test_ops_whose_result_may_outgrow_their_operands_are_not_computed():
    assert static_value(_node("Range", [_i64("a", 0), _i64("b", 10**9), _i64("c", 1)])) is None
    assert static_value(_node("Tile", [_i64("x", [1]), _i64("r", [10**9])])) is None


def test_without_a_kernel_runner_only_literals_and_shapes_are_known():
    x = Value("x", tensor("float32", (3, 4)))
    add = _node("Add", [_i64("a", 1), _i64("b", 2)])
    set_kernel_runner(None)
    try:
        assert static_value(add) is None
        assert static_value(_node("Shape", [x])).tolist() == [3, 4]
    finally:
        itergraph._register_constant_kernels()
    assert static_int(add) == 3


def test_an_operand_beyond_the_depth_bound_is_unknown_and_known_within_it():
    """`base` reached through more than `MAX_DEPTH` producers is cut short (so is what reads
    it); reached within the bound it is computed."""
    base = _node("Add", [_i64("a", 1), _i64("b", 2)])
    deep = base
    for _ in range(MAX_DEPTH + 8):
        deep = _node("Identity", [deep])
    both = _node("Add", [deep, base])
    assert static_value(deep) is None
    assert static_value(both) is None  # the deep operand stays unknown
    assert static_int(_node("Add", [_node("Identity", [base]), base])) == 6
