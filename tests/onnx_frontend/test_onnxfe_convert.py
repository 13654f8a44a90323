"""Types, attributes, initializers, functions, opset adaptation and naming of the frontend."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper
from onnxfe_util import assert_same, model, ort_run, roundtrip, vi, written

from itergraph.errors import UnsupportedError
from itergraph.frontends.onnx import read, write
from itergraph.ir import Graph, Node, OptionalType, SequenceType, TensorType, Value, tensor


def test_types_and_dims():
    seq = h.make_tensor_sequence_value_info("s", TP.INT32, ["n"])
    opt = h.make_value_info("o", h.make_optional_type_proto(h.make_tensor_type_proto(TP.BOOL,
                                                                                       [])))
    x = vi("x", TP.FLOAT16, ["batch", None, 3])
    nodes = [h.make_node("Identity", ["x"], ["y"]), h.make_node("Identity", ["s"], ["s2"]),
             h.make_node("Identity", ["o"], ["o2"])]
    g = read(model(nodes, [x, seq, opt], [vi("y", TP.FLOAT16, ["batch", None, 3]),
                                          h.make_tensor_sequence_value_info("s2", TP.INT32, ["n"]),
                                          h.make_value_info("o2", opt.type)], 16))
    assert g.inputs[0].type == TensorType("float16", ("batch", None, 3))
    assert g.inputs[1].type == SequenceType(TensorType("int32", ("n",)))
    assert g.inputs[2].type == OptionalType(TensorType("bool", ()))
    assert g.opset_imports == {"": 16}
    assert all(n.version == 16 for n in g.nodes)


def test_attributes():
    t = numpy_helper.from_array(np.arange(6, dtype=np.int32).reshape(2, 3))
    node = h.make_node("Custom", ["x"], ["y"], domain="my.dom", i=3, f=0.5, s="text",
                       ints=[1, 2], floats=[1.5], strings=["a", "b"], t=t,
                       tp=h.make_tensor_type_proto(TP.FLOAT, [2]))
    m = model([node], [vi("x")], [vi("y")], 13)
    m.opset_import.append(h.make_opsetid("my.dom", 2))
    g = read(m)
    (n,) = g.nodes
    assert n.domain == "my.dom" and n.version == 2
    a = n.attrs
    assert (a["i"], a["f"], a["s"], a["ints"], a["floats"], a["strings"]) == (
        3, 0.5, "text", [1, 2], [1.5], ["a", "b"])
    assert type(a["s"]) is str and all(type(x) is str for x in a["strings"])
    np.testing.assert_array_equal(a["t"], np.arange(6, dtype=np.int32).reshape(2, 3))
    assert a["tp"] == TensorType("float32", (2,))
    back = write(g).graph.node[0]
    assert {x.name: x.type for x in back.attribute} == {x.name: x.type for x in node.attribute}
    assert write(g).opset_import[1].domain == "my.dom"


def test_initializers_dense_sparse_and_legacy_inputs():
    w = numpy_helper.from_array(np.array([1.5, -2], np.float32), "w")
    sp = h.make_sparse_tensor(numpy_helper.from_array(np.array([7.0], np.float32), "sp"),
                              numpy_helper.from_array(np.array([2], np.int64), "sp_idx"), [4])
    nodes = [h.make_node("Mul", ["x", "w"], ["y"]), h.make_node("Identity", ["sp"], ["z"])]
    m = model(nodes, [vi("x", TP.FLOAT, [2]), vi("w", TP.FLOAT, [2])],
              [vi("y", TP.FLOAT, [2]), vi("z", TP.FLOAT, [4])], 13, initializers=[w])
    m.graph.sparse_initializer.append(sp)
    g = read(m)
    assert [v.name for v in g.inputs] == ["x"]  # w: an initializer listed as input (IR < 4)
    assert g.meta["overridable_initializers"] == ["w"]
    consts = {v.name: v.const for v in g.initializers}
    np.testing.assert_array_equal(consts["sp"], [0, 0, 7, 0])
    m2 = written(g)
    f = {"x": np.array([2, 3], np.float32)}
    assert_same(ort_run(m2, f), [f["x"] * np.array([1.5, -2], np.float32),
                                 np.array([0, 0, 7, 0], np.float32)])


def test_local_functions_are_inlined(tmp_path):
    fn = h.make_function("local", "Twice", ["a"], ["b"],
                         [h.make_node("Add", ["a", "a"], ["b"])], [h.make_opsetid("", 13)])
    body = h.make_graph([h.make_node("Twice", ["x"], ["y"], domain="local"),
                         h.make_node("Identity", ["c"], ["c_out"])], "body",
                        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), vi("x", TP.FLOAT, [2])],
                        [vi("c_out", TP.BOOL, []), vi("y", TP.FLOAT, [2])])
    nodes = [h.make_node("Loop", ["M", "", "x0"], ["xf"], body=body)]
    m = model(nodes, [vi("M", TP.INT64, []), vi("x0", TP.FLOAT, [2])], [vi("xf", TP.FLOAT, [2])],
              13, functions=[fn])
    m.opset_import.append(h.make_opsetid("local", 1))
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    for src in (m, str(path), path, m.SerializeToString()):
        g = read(src)
        assert [n.op_type for n in g.nodes[0].body.nodes] == ["Add", "Identity"]
    fs = [{"M": np.array(3, np.int64), "x0": np.array([1, 2], np.float32)}]
    roundtrip(m, fs)


def test_nodes_of_older_opsets_are_converted():
    """An IR graph mixing node versions: Unsqueeze-11 (axes attribute) and Squeeze-13."""
    x = Value("x", tensor("float32", (3,)))
    u = Value("u", tensor("float32", (1, 3)))
    y = Value("y", tensor("float32", (3,)))
    axes = Value("axes", tensor("int64", (1,)), const=np.array([0]))
    g = Graph("main", [x], [y], [Node("Unsqueeze", [x], [u], {"axes": [0]}, version=11),
                                 Node("Squeeze", [u, axes], [y], version=13)],
              initializers=[axes], opset_imports={"": 11})
    m = written(g)
    assert m.opset_import[0].version == 13
    assert [n.op_type for n in m.graph.node] == ["Constant", "Unsqueeze", "Squeeze"]
    f = {"x": np.array([1, 2, 3], np.float32)}
    assert_same(ort_run(m, f), [f["x"]])
    m11 = write(g, 11)  # and down again: Squeeze-13 becomes Squeeze-11
    onnx.checker.check_model(m11, full_check=True)
    assert_same(ort_run(m11, f), [f["x"]])


def test_opset_too_low_for_loops():
    body = h.make_graph([h.make_node("Identity", ["x"], ["y"])], "body",
                        [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])])
    node = h.make_node("Scan", ["X"], ["Y"], body=body, num_scan_inputs=1)
    g = read(model([node], [vi("X", TP.FLOAT, [3, 2])], [vi("Y", TP.FLOAT, [3, 2])], 11))
    with pytest.raises(UnsupportedError):
        write(g, 8)


def test_names_unique_and_outputs_kept():
    x = Value("x", tensor("float32", (2,)))
    a = Value("", tensor("float32", (2,)))
    b = Value("x", tensor("float32", (2,)))  # clashes with the input's name
    g = Graph("main", [x], [b, b, a], [Node("Neg", [x], [a], version=13),
                                       Node("Abs", [a], [b], version=13)],
              opset_imports={"": 13})
    m = written(g)
    assert m.graph.input[0].name == "x"
    names = [o for n in m.graph.node for o in n.output]
    assert len(names) == len(set(names)) and "" not in names
    assert len({o.name for o in m.graph.output}) == 3
    f = {"x": np.array([1, -2], np.float32)}
    assert_same(ort_run(m, f), [np.abs(-f["x"])] * 2 + [-f["x"]])
