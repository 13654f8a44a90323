"""ONNX scoping: captures at any depth become the outer Value objects; shadowing; If."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnxfe_util import (
    assert_same,
    check_numpy,
    model,
    numpy_backend,
    ort_run,
    roundtrip,
    vi,
    written,
)

from itergraph.frontends.onnx import read
from itergraph.ir import Loop


def three_level_model():
    """main -> Loop L1 -> Loop L2 -> If: the If branches use main's `a` and L1's `i1`."""
    then_g = h.make_graph([h.make_node("Add", ["x2", "a"], ["r_then"])], "then", [],
                          [vi("r_then", TP.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Sub", ["x2", "fi1"], ["r_else"])], "else", [],
                          [vi("r_else", TP.FLOAT, [2])])
    l2_body = h.make_graph(
        [h.make_node("Less", ["i2", "i1"], ["take_then"]),
         h.make_node("If", ["take_then"], ["x2_next"], then_branch=then_g, else_branch=else_g,
                     name="deep_if"),
         h.make_node("Identity", ["c2"], ["c2_out"])],
        "l2_body",
        [vi("i2", TP.INT64, []), vi("c2", TP.BOOL, []), vi("x2", TP.FLOAT, [2])],
        [vi("c2_out", TP.BOOL, []), vi("x2_next", TP.FLOAT, [2])],
    )
    l1_body = h.make_graph(
        [h.make_node("Cast", ["i1"], ["fi1"], to=TP.FLOAT),
         h.make_node("Loop", ["N", "", "x1"], ["x1_next"], body=l2_body, name="L2"),
         h.make_node("Identity", ["c1"], ["c1_out"])],
        "l1_body",
        [vi("i1", TP.INT64, []), vi("c1", TP.BOOL, []), vi("x1", TP.FLOAT, [2])],
        [vi("c1_out", TP.BOOL, []), vi("x1_next", TP.FLOAT, [2]), vi("fi1", TP.FLOAT, [])],
    )
    return model([h.make_node("Loop", ["M", "", "x0"], ["xf", "fis"], body=l1_body, name="L1")],
                 [vi("M", TP.INT64, []), vi("N", TP.INT64, []), vi("x0", TP.FLOAT, [2]),
                  vi("a", TP.FLOAT, [2])],
                 [vi("xf", TP.FLOAT, [2]), vi("fis", TP.FLOAT, [None])], 13)


def feeds3(m, n):
    return {"M": np.array(m, np.int64), "N": np.array(n, np.int64),
            "x0": np.array([1, -1], np.float32), "a": np.array([0.25, 2], np.float32)}


def test_captures_three_levels_are_outer_values():
    g = read(three_level_model())
    a = g.inputs[3]
    (l1,) = g.nodes
    l2 = next(n for n in l1.body.nodes if isinstance(n, Loop))
    fi1 = next(n for n in l1.body.nodes if n.op_type == "Cast").outputs[0]
    deep_if = next(n for n in l2.body.nodes if n.op_type == "If")
    then_g, else_g = deep_if.attrs["then_branch"], deep_if.attrs["else_branch"]
    assert then_g.nodes[0].inputs == [l2.body.inputs[2], a]
    assert else_g.nodes[0].inputs == [l2.body.inputs[2], fi1]
    assert then_g.captures() == [l2.body.inputs[2], a]
    assert a in l1.body.captures() and l2.trip_count is g.inputs[1]
    assert deep_if.inputs[0].producer.op_type == "Less"
    assert deep_if.inputs[0].producer.inputs[1] is l1.iteration_param


def test_captures_three_levels_roundtrip():
    mod = three_level_model()
    fs = [feeds3(3, 4), feeds3(2, 0), feeds3(0, 2)]
    g, _ = roundtrip(mod, fs)
    check_numpy(g, mod, fs)


def shadow_model():
    """The body's parameter `x` and local `t` shadow main's `x` and `t`."""
    body = h.make_graph(
        [h.make_node("Mul", ["x", "x"], ["t"]),           # local t, from the parameter x
         h.make_node("Add", ["t", "u"], ["x_next"]),       # u is main's
         h.make_node("Identity", ["c"], ["c_out"])],
        "body",
        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), vi("x", TP.FLOAT, [2])],
        [vi("c_out", TP.BOOL, []), vi("x_next", TP.FLOAT, [2])],
    )
    nodes = [h.make_node("Neg", ["x"], ["t"]),
             h.make_node("Identity", ["t"], ["u"]),
             h.make_node("Loop", ["M", "", "t"], ["xf"], body=body),
             h.make_node("Add", ["xf", "t"], ["y"])]
    return model(nodes, [vi("M", TP.INT64, []), vi("x", TP.FLOAT, [2])],
                 [vi("y", TP.FLOAT, [2])], 13)


def test_shadowing_structure():
    g = read(shadow_model())
    neg, ident, loop, add = g.nodes
    x_main, t_main = g.inputs[1], neg.outputs[0]
    mul, add_b, _ = loop.body.nodes
    assert mul.inputs == [loop.body.inputs[2], loop.body.inputs[2]]  # the parameter, not main's x
    assert add_b.inputs[0] is mul.outputs[0] and add_b.inputs[1] is ident.outputs[0]
    assert mul.outputs[0] is not t_main
    assert add.inputs == [loop.outputs[0], t_main]  # main's t after the loop
    assert loop.body.captures() == [ident.outputs[0]]
    assert x_main not in loop.body.captures()


def shadow_reference(f):
    t = -f["x"]
    x = t
    for _ in range(int(f["M"])):
        x = x * x + t
    return [x + t]


def test_shadowing_roundtrip_gives_unique_names():
    # ONNX Runtime refuses the shadowing original (SSA across scopes): a NumPy loop is the
    # oracle; the written model has unique names and runs in ONNX Runtime.
    mod = shadow_model()
    fs = [{"M": np.array(k, np.int64), "x": np.array([0.5, -2], np.float32)} for k in (0, 1, 3)]
    g = read(mod)
    m2 = written(g)
    for f in fs:
        assert_same(ort_run(m2, f), shadow_reference(f))
    run_graph = numpy_backend()
    for f in fs:
        assert_same(list(run_graph(g, f).values()), shadow_reference(f))
    names = [o for n in m2.graph.node for o in n.output] + [i.name for i in m2.graph.input]
    body = m2.graph.node[-2].attribute[0].g
    names += [o for n in body.node for o in n.output] + [i.name for i in body.input]
    assert len(names) == len(set(names))


def test_if_branches_roundtrip():
    then_g = h.make_graph([h.make_node("Mul", ["x", "x"], ["r1"])], "then", [],
                          [vi("r1", TP.FLOAT, [2])])
    else_g = h.make_graph([], "else", [], [vi("x", TP.FLOAT, [2])])  # an outer value as output
    mod = model([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                [vi("c", TP.BOOL, []), vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], 13)
    g = read(mod)
    (node,) = g.nodes
    assert node.attrs["else_branch"].outputs == [g.inputs[1]]
    # ONNX Runtime refuses an outer value as a branch output; the writer adds an Identity
    fs = [{"c": np.array(b), "x": np.array([3, 4], np.float32)} for b in (True, False)]
    m2 = written(g)
    run_graph = numpy_backend()
    for f in fs:
        want = [f["x"] * f["x"] if f["c"] else f["x"]]
        assert_same(ort_run(m2, f), want)
        assert_same(list(run_graph(g, f).values()), want)
