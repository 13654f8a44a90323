"""`inline-if`: an If whose condition is known before the run becomes its branch, in the
main graph and in loop bodies; outputs stay the same in itergraph and the peers."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper
from openvino import opset13 as ops
from xf_models import (
    as_file,
    assert_runs_the_same,
    loops_of,
    onnx_loop,
    onnx_loop_feeds,
    onnx_scan,
    onnx_scan_feeds,
    rand,
    vi,
)

import itergraph as ig
from itergraph.transforms import optimize


def _ifs(model: ig.Model) -> list:
    return [n for _, n in model.graph.walk() if n.op_type == "If"]


def _ov_ti_with_if(n: int = 4) -> ov.Model:
    """TensorIterator over X's rows: h = If(ShapeOf(xi)[1] == 3, h + xi, h - xi)."""
    X = ops.parameter([n, 3], np.float32, name="X")
    H = ops.parameter([1, 3], np.float32, name="H")
    xi = ops.parameter([1, 3], np.float32, name="xi")
    hi = ops.parameter([1, 3], np.float32, name="hi")
    width = ops.gather(ops.shape_of(xi), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
    cond = ops.equal(width, ops.constant(np.int64(3)))
    a_then, b_then = (ops.parameter([1, 3], np.float32, name=k) for k in ("a_t", "b_t"))
    a_else, b_else = (ops.parameter([1, 3], np.float32, name=k) for k in ("a_e", "b_e"))
    r_then = ops.result(ops.add(a_then, b_then))
    r_else = ops.result(ops.subtract(a_else, b_else))
    branch = ops.if_op(cond.output(0))
    branch.set_then_body(ov.Model([r_then], [a_then, b_then], "then"))
    branch.set_else_body(ov.Model([r_else], [a_else, b_else], "else"))
    branch.set_input(hi.output(0), a_then, a_else)
    branch.set_input(xi.output(0), b_then, b_else)
    h2 = ops.tanh(branch.set_output(r_then, r_else))
    rh = ops.result(h2)
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rh], [xi, hi], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(hi, H.output(0), rh.output(0))
    return ov.Model([ti.get_iter_value(rh.output(0), -1),
                     ti.get_concatenated_slices(rh.output(0), 0, 1, 1, -1, 0)], [X, H], "ti")


#: flavour -> model, feeds, passes (the Loop's condition reads the shape of a body value that
#: the file declares no type for: infer-shapes first makes it static)
CASES = {
    "onnx.Loop": (lambda: onnx_loop(static_if=True), onnx_loop_feeds,
                  ["infer-shapes", "inline-if"]),
    "onnx.Scan": (lambda: onnx_scan(static_if=True), onnx_scan_feeds, ["inline-if"]),
    "openvino.TensorIterator": (_ov_ti_with_if, lambda: {"X": rand(4, 3), "H": rand(1, 3)},
                                ["inline-if"]),
}


@pytest.mark.parametrize("flavour", list(CASES))
def test_static_if_in_a_loop_body_is_inlined(flavour, tmp_path):
    build, feeds_of, passes = CASES[flavour]
    model = ig.load(as_file(build(), tmp_path, "in"))
    assert len(_ifs(model)) == 1
    out = optimize(model, passes)
    assert _ifs(out) == []
    loop = loops_of(out)[0]
    assert loop.origin == flavour
    assert_runs_the_same(model, out, feeds_of(), tmp_path)


def _top_level_if(cond: bool, nested: bool = False) -> onnx.ModelProto:
    """y = If(c, x * 2, x - 1); with `nested` the then branch holds another static If."""
    inner = helper.make_node(
        "If", ["c"], ["t_out"], name="inner_if",
        then_branch=helper.make_graph([helper.make_node("Mul", ["x", "two"], ["ti_out"])],
                                      "ti", [], [vi("ti_out", TensorProto.FLOAT, [3])]),
        else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["te_out"])],
                                      "te", [], [vi("te_out", TensorProto.FLOAT, [3])]))
    then = helper.make_graph([inner] if nested else
                             [helper.make_node("Mul", ["x", "two"], ["t_out"])],
                             "then", [], [vi("t_out", TensorProto.FLOAT, [3])])
    other = helper.make_graph([helper.make_node("Sub", ["x", "one"], ["e_out"])], "else", [],
                              [vi("e_out", TensorProto.FLOAT, [3])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="outer_if", then_branch=then,
                          else_branch=other)], "g", [vi("x", TensorProto.FLOAT, [3])],
        [vi("y", TensorProto.FLOAT, [3])],
        [onnx.numpy_helper.from_array(np.array(cond), "c"),
         onnx.numpy_helper.from_array(np.float32(2), "two"),
         onnx.numpy_helper.from_array(np.float32(1), "one")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("cond", [True, False])
@pytest.mark.parametrize("nested", [False, True])
def test_constant_condition_in_the_main_graph(cond, nested, tmp_path):
    model = ig.load(_top_level_if(cond, nested))
    out = optimize(model, ["inline-if"])
    assert _ifs(out) == []
    assert [n.op_type for n in out.graph.nodes][-1] == "Identity"
    assert out.graph.outputs[0].name == "y"
    assert_runs_the_same(model, out, {"x": rand(3)}, tmp_path)


def test_dynamic_condition_stays(tmp_path):
    m = _top_level_if(True)
    m.graph.initializer.pop(0)
    m.graph.input.append(vi("c", TensorProto.BOOL, []))
    model = ig.load(m)
    assert len(_ifs(optimize(model, ["inline-if"]))) == 1
