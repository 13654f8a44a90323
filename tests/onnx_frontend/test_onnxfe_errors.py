"""Malformed ONNX models: every reader error is a ModelError naming the node at fault."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnxfe_util import model, vi

from itergraph.errors import ModelError, UnsupportedError
from itergraph.frontends.onnx import UnsupportedOpsetError, read


def loop_body(n_in=3, n_out=2):
    ins = [vi("i", TP.INT64, []), vi("c", TP.BOOL, [])] + [vi(f"x{k}") for k in range(n_in - 2)]
    nodes = [h.make_node("Identity", ["c"], ["c_out"])]
    outs = [vi("c_out", TP.BOOL, [])]
    for k in range(n_out - 1):
        nodes.append(h.make_node("Identity", ["x0"], [f"y{k}"]))
        outs.append(vi(f"y{k}"))
    return h.make_graph(nodes, "body", ins, outs)


def loop_model(inputs=("M", "", "x"), outputs=("y",), body=None, **attrs):
    if body is not False:
        attrs["body"] = body or loop_body()
    node = h.make_node("Loop", list(inputs), list(outputs), name="bad_loop", **attrs)
    return model([node], [vi("M", TP.INT64, []), vi("x")], [vi(o) for o in outputs], 13)


def scan_body(n_in=2, n_out=2):
    ins = [vi(f"b{k}", TP.FLOAT, [2]) for k in range(n_in)]
    nodes = [h.make_node("Identity", ["b0"], [f"o{k}"]) for k in range(n_out)]
    return h.make_graph(nodes, "body", ins, [vi(f"o{k}", TP.FLOAT, [2]) for k in range(n_out)])


def scan_model(inputs=("s", "X"), outputs=("sf", "Y"), body=None, opset=11, **attrs):
    attrs.setdefault("num_scan_inputs", 1)
    if body is not False:
        attrs["body"] = body or scan_body()
    node = h.make_node("Scan", list(inputs), list(outputs), name="bad_scan", **attrs)
    ins = [vi("s", TP.FLOAT, [2]), vi("X", TP.FLOAT, [3, 2])]
    if opset == 8:
        ins.append(vi("lens", TP.INT64, [1]))
    return model([node], ins, [vi(o) for o in outputs], opset)


def raises(m, *words):
    with pytest.raises(ModelError) as e:
        read(m)
    for w in words:
        assert w in str(e.value), str(e.value)
    return e.value


@pytest.mark.parametrize("m, words", [
    (loop_model(inputs=("M",)), ["bad_loop", "at least 2 inputs"]),
    (loop_model(body=loop_body(n_in=4)), ["bad_loop", "body has 4 inputs"]),
    (loop_model(body=loop_body(n_in=3, n_out=1)), ["bad_loop", "at least 1 + N = 2"]),
    (loop_model(outputs=("y", "z")), ["bad_loop", "has 2 outputs"]),
    (loop_model(body=False), ["bad_loop", "'body' is missing"]),
    (loop_model(inputs=("M", "", "")), ["bad_loop", "input 0", "empty"]),
])
def test_loop_errors(m, words):
    raises(m, *words)


@pytest.mark.parametrize("m, words", [
    (scan_model(num_scan_inputs=3), ["bad_scan", "num_scan_inputs=3"]),
    (scan_model(num_scan_inputs=0), ["bad_scan", "num_scan_inputs=0"]),
    (scan_model(body=scan_body(n_in=3)), ["bad_scan", "body has 3 inputs"]),
    (scan_model(body=scan_body(n_out=0)), ["bad_scan", "expected at least"]),
    (scan_model(outputs=("sf",)), ["bad_scan", "has 1 outputs"]),
    (scan_model(body=False), ["bad_scan", "'body' is missing"]),
    (scan_model(scan_input_axes=[2]), ["bad_scan", "scan_input_axes[0]=2", "rank 2"]),
    (scan_model(scan_input_axes=[-3]), ["bad_scan", "out of range"]),
    (scan_model(scan_input_axes=[-1], opset=9), ["bad_scan", "negative"]),
    (scan_model(scan_output_axes=[5]), ["bad_scan", "scan_output_axes[0]=5"]),
    (scan_model(scan_input_axes=[0, 1]), ["bad_scan", "scan_input_axes", "1 values"]),
    (scan_model(scan_input_directions=[2]), ["bad_scan", "0 or 1"]),
    (scan_model(inputs=("lens", "s", "X", "X"), opset=8), ["bad_scan", "body has 2 inputs"]),
])
def test_scan_errors(m, words):
    raises(m, *words)


def test_missing_num_scan_inputs():
    body = scan_body()
    node = h.make_node("Scan", ["s", "X"], ["sf", "Y"], body=body, name="bad_scan")
    raises(model([node], [vi("s"), vi("X")], [vi("sf"), vi("Y")], 11), "num_scan_inputs")


def test_undefined_name_top_level():
    node = h.make_node("Add", ["x", "nowhere"], ["y"], name="adder")
    raises(model([node], [vi("x")], [vi("y")], 13), "adder", "'nowhere'", "not defined")


def test_undefined_name_in_body():
    body = h.make_graph([h.make_node("Add", ["x0", "ghost"], ["y0"], name="inner_add"),
                         h.make_node("Identity", ["c"], ["c_out"])], "body",
                        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), vi("x0")],
                        [vi("c_out", TP.BOOL, []), vi("y0")])
    raises(loop_model(body=body), "inner_add", "'ghost'")


def test_body_local_names_do_not_leak_out():
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Identity", ["x0"], ["y0"])], "body",
                        [vi("i", TP.INT64, []), vi("c", TP.BOOL, []), vi("x0")],
                        [vi("c_out", TP.BOOL, []), vi("y0")])
    nodes = [h.make_node("Loop", ["M", "", "x"], ["y"], body=body),
             h.make_node("Identity", ["y0"], ["z"], name="peeker")]
    raises(model(nodes, [vi("M", TP.INT64, []), vi("x")], [vi("z")], 13), "peeker", "'y0'")


def test_duplicate_definition():
    nodes = [h.make_node("Identity", ["x"], ["y"]), h.make_node("Neg", ["x"], ["y"], name="dup")]
    raises(model(nodes, [vi("x")], [vi("y")], 13), "'y'", "defined twice")


def test_unknown_opset():
    m = model([h.make_node("Identity", ["x"], ["y"])], [vi("x")], [vi("y")], 13)
    m.opset_import[0].version = 99
    e = raises(m, "opset 99")
    assert isinstance(e, UnsupportedError) and isinstance(e, UnsupportedOpsetError)


def test_domain_not_imported():
    node = h.make_node("Foo", ["x"], ["y"], domain="com.example", name="foo")
    raises(model([node], [vi("x")], [vi("y")], 13), "foo", "com.example")


def test_scan_before_opset_8():
    body = scan_body()
    node = h.make_node("Scan", ["s", "X"], ["sf", "Y"], body=body, num_scan_inputs=1,
                       name="old_scan")
    raises(model([node], [vi("s"), vi("X")], [vi("sf"), vi("Y")], 7), "old_scan", "opset 7")


def test_bad_bytes():
    with pytest.raises(ModelError):
        read(b"this is not a model")


@pytest.mark.parametrize("kind", ["s", "strings"])
def test_attribute_string_not_utf8(kind):
    node = h.make_node("Custom", ["x"], ["y"], domain="my.dom", name="latin")
    a = node.attribute.add()
    a.name = "mode"
    if kind == "s":
        a.type, a.s = onnx.AttributeProto.STRING, b"caf\xe9"
    else:
        a.type = onnx.AttributeProto.STRINGS
        a.strings.extend([b"ok", b"caf\xe9"])
    m = model([node], [vi("x")], [vi("y")], 13)
    m.opset_import.append(h.make_opsetid("my.dom", 1))
    raises(m, "latin", "'mode'", "UTF-8")


@pytest.mark.parametrize("where", ["input", "value_info", "output"])
def test_an_unknown_element_type_names_the_value(where):
    x = h.make_tensor_value_info("x", TP.FLOAT, [2])
    r = h.make_tensor_value_info("r", TP.FLOAT, [2])
    y = h.make_tensor_value_info("y", TP.FLOAT, [2])
    {"input": x, "value_info": r, "output": y}[where].type.tensor_type.elem_type = 99
    g = h.make_graph([h.make_node("Relu", ["x"], ["r"]),
                           h.make_node("Relu", ["r"], ["y"])], "g", [x], [y],
                          value_info=[r])
    name = {"input": "x", "value_info": "r", "output": "y"}[where]
    with pytest.raises(UnsupportedError, match=f"value '{name}': ONNX element type 99"):
        read(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
