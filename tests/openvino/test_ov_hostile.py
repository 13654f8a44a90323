"""Hostile and broken OpenVINO IR: every case is an `itergraph.Error` subclass, nothing else."""

from __future__ import annotations

import re

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from itergraph.errors import Error, ModelError, SecurityError, UnsupportedError
from itergraph.frontends.openvino import read


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A TensorIterator model (sliced input, back edge, constants) as (xml text, bin bytes)."""
    X = ops.parameter([2, 6, 3], np.float32, name="X")
    H = ops.parameter([2, 4], np.float32, name="H")
    xi = ops.parameter([2, 1, 3], np.float32, name="xi")
    hi = ops.parameter([2, 4], np.float32, name="hi")
    r = ops.reshape(xi, ops.constant(np.array([2, 3], np.int64)), False)
    h2 = ops.add(ops.matmul(r, ops.constant(np.ones((3, 4), np.float32)), False, False), hi)
    rh = ops.result(h2)
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rh], [xi, hi], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, H.output(0), rh.output(0))
    m = ov.Model([ti.get_iter_value(rh.output(0), -1)], [X, H], "m")
    path = tmp_path_factory.mktemp("hostile") / "m.xml"
    ov.save_model(m, str(path), compress_to_fp16=False)
    return path.read_text(), path.with_suffix(".bin").read_bytes()


def _body(xml: str) -> tuple[int, int]:
    return xml.index("<body>"), xml.index("</body>")


def _sub_body(xml: str, pattern: str, repl: str, count: int = 1) -> str:
    a, b = _body(xml)
    inner, n = re.subn(pattern, repl, xml[a:b], count=count)
    assert n, pattern
    return xml[:a] + inner + xml[b:]


def _expect(exc, xml, weights, *words):
    with pytest.raises(exc) as info:
        read(xml, weights)
    assert isinstance(info.value, Error)
    msg = str(info.value)
    for w in words:
        assert w in msg, msg


def test_the_base_model_reads(base):
    read(*base)


def test_billion_laughs(base):
    lol = ('<?xml version="1.0"?>\n<!DOCTYPE net [\n <!ENTITY a "lollollollollol">\n'
           + "".join(f' <!ENTITY {c} "{("&" + p + ";") * 10}">\n'
                     for p, c in zip("abcdefgh", "bcdefghi"))
           + ']>\n<net name="&i;" version="11"><layers/><edges/></net>')
    _expect(SecurityError, lol, None)


def test_external_entity(base, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read me")
    xml = (f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY x SYSTEM "file://{secret}">]>\n'
           '<net name="&x;" version="11"><layers/><edges/></net>')
    _expect(SecurityError, xml, None)


def test_entity_declaration_hidden_by_utf16(base):
    xml = ('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE net [<!ENTITY x "y">]>'
           '<net name="&x;" version="11"><layers/><edges/></net>').encode("utf-16")
    _expect(SecurityError, xml, None)


def test_bin_shorter_than_offset_plus_size(base):
    xml, weights = base
    _expect(ModelError, xml, weights[:-5], "beyond the end of the .bin")


def test_size_inconsistent_with_shape_and_type(base):
    xml, weights = base
    xml = _sub_body(xml, r'element_type="i64" shape="2" offset="(\d+)" size="16"',
                    r'element_type="i64" shape="2" offset="\1" size="12"')
    _expect(ModelError, xml, weights, "does not match shape")


def test_unknown_element_type(base):
    xml, weights = base
    xml = _sub_body(xml, r'element_type="i64" shape="2"', 'element_type="q7" shape="2"')
    _expect(ModelError, xml, weights, "unknown element type 'q7'")


def test_edge_to_missing_layer(base):
    xml, weights = base
    xml = xml.replace('to-layer="2" to-port="1"', 'to-layer="77" to-port="1"', 1)
    _expect(ModelError, xml, weights, "no layer with id 77")


def test_edge_to_missing_port(base):
    xml, weights = base
    xml = _sub_body(xml, r'to-layer="(\d+)" to-port="1"', r'to-layer="\1" to-port="9"')
    _expect(ModelError, xml, weights, "has no input port 9")


def test_edge_from_missing_output_port(base):
    xml, weights = base
    xml = _sub_body(xml, r'from-layer="0" from-port="0"', 'from-layer="0" from-port="5"')
    _expect(ModelError, xml, weights, "has no output port 5")


def test_back_edge_from_a_non_result(base):
    xml, weights = base
    xml = re.sub(r'<edge from-layer="(\d+)" to-layer="1" />', '<edge from-layer="0" '
                 'to-layer="1" />', xml)
    _expect(ModelError, xml, weights, "back edge from layer 0", "expected a Result")


def test_back_edge_to_a_non_parameter(base):
    xml, weights = base
    xml = re.sub(r'<edge from-layer="(\d+)" to-layer="1" />', r'<edge from-layer="\1" '
                 'to-layer="2" />', xml)
    _expect(ModelError, xml, weights, "back edge to layer 2", "expected a Parameter")


def test_port_map_naming_a_missing_layer(base):
    xml, weights = base
    xml = xml.replace('external_port_id="1" internal_layer_id="1"',
                      'external_port_id="1" internal_layer_id="42"')
    _expect(ModelError, xml, weights, "body layer 42", "does not exist")


def test_slicing_that_does_not_divide_the_axis(base):
    xml, weights = base
    xml = xml.replace('start="0" end="-1" stride="1" part_size="1"',
                      'start="0" end="-1" stride="4" part_size="4"', 1)
    _expect(ModelError, xml, weights, "does not divide")


def test_stride_zero(base):
    xml, weights = base
    xml = xml.replace('stride="1" part_size="1"', 'stride="0" part_size="1"', 1)
    _expect(ModelError, xml, weights, "stride 0")


def test_cycle_outside_back_edges(base):
    xml, weights = base
    # feed the body's Add back into the MatMul: Add -> MatMul -> Add
    a, b = _body(xml)
    body = xml[a:b]
    add_id = re.search(r'<layer id="(\d+)" name="[^"]*" type="Add"', body).group(1)
    mm_id = re.search(r'<layer id="(\d+)" name="[^"]*" type="MatMul"', body).group(1)
    body = re.sub(rf'<edge from-layer="(\d+)" from-port="(\d+)" to-layer="{mm_id}" '
                  r'to-port="0" />', f'<edge from-layer="{add_id}" from-port="2" '
                  f'to-layer="{mm_id}" to-port="0" />', body)
    _expect(ModelError, xml[:a] + body + xml[b:], weights, "cycle")


def test_unsupported_op_names_layer_type_and_version(base):
    xml, weights = base
    xml = _sub_body(xml, r'type="MatMul" version="opset1"', 'type="FancyOp" version="opset9"')
    _expect(UnsupportedError, xml, weights, "FancyOp", "opset9", "layer")


def test_unsupported_ir_version_and_not_xml(base):
    _expect(UnsupportedError, '<net name="x" version="7"><layers/><edges/></net>', None, "7")
    _expect(ModelError, b"\x00\x01 not xml at all", None)
    _expect(ModelError, "<net version='11'><layers><layer id='0'", None)


def test_missing_weights(base):
    xml, _ = base
    _expect(ModelError, xml, None, ".bin")


def test_input_port_without_edge(base):
    xml, weights = base
    xml = xml.replace('<edge from-layer="1" from-port="0" to-layer="2" to-port="1" />', "", 1)
    _expect(ModelError, xml, weights, "no incoming edge")


def _nested_tensor_iterators(depth: int) -> str:
    """A model of `depth` TensorIterators nested in each other; the innermost body passes its
    Parameter to its Result through a Relu."""
    port = '<port id="{}" precision="FP32"><dim>2</dim></port>'
    param = ('<layer id="0" name="p" type="Parameter" version="opset1">'
             '<data shape="2" element_type="f32"/><output>' + port.format(0) + '</output></layer>')
    result = ('<layer id="2" name="r" type="Result" version="opset1"><input>' + port.format(0)
              + '</input></layer>')
    edges = ('<edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
             '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges>')
    middle = ('<layer id="1" name="relu" type="Relu" version="opset1"><input>' + port.format(0)
              + '</input><output>' + port.format(1) + '</output></layer>')
    for d in range(depth):
        middle = (
            f'<layer id="1" name="ti{d}" type="TensorIterator" version="opset1">'
            '<port_map><input external_port_id="0" internal_layer_id="0"/>'
            '<output external_port_id="1" internal_layer_id="2"/></port_map>'
            '<input>' + port.format(0) + '</input><output>' + port.format(1) + '</output>'
            f'<body><layers>{param}{middle}{result}</layers>{edges}</body></layer>')
    return f'<?xml version="1.0"?><net name="m" version="11"><layers>{param}{middle}{result}' \
           f'</layers>{edges}</net>'


def test_bodies_nested_too_deeply():
    g = read(_nested_tensor_iterators(3))
    assert [n.op_type for n in g.nodes] == ["Loop"]
    _expect(ModelError, _nested_tensor_iterators(40), None, "nest deeper than 32 levels")
