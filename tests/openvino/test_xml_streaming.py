"""The OpenVINO IR reader streams: the document goes to expat in chunks, each layer becomes a
`Layer` as soon as its element ends, and the network is the one a whole-tree parse gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from itergraph.errors import ModelError, SecurityError
from itergraph.frontends.openvino import read, xmlsafe
from itergraph.frontends.openvino.netparse import LEAF, NetworkBuilder, NetworkElement, parse_net

FIXTURE = Path(__file__).parent / "data" / "ti_example2.xml"


def summary(net, depth: int = 0) -> list:
    """Everything a network says, bodies included, as plain values."""
    out = []
    for lid, layer in net.layers.items():
        body = layer.elem.find("body")
        out.append((lid, layer.name, layer.type, layer.version, dict(layer.data), layer.inputs,
                    layer.outputs, net.sources[lid], layer.where(),
                    summary(parse_net(body, f"{layer.where()} body: "), depth + 1)
                    if body is not None else None))
    return out


def streamed(data: bytes):
    return xmlsafe.parse(data, "test", builder=NetworkBuilder())


@pytest.mark.parametrize("chunk", [7, 333, xmlsafe.CHUNK])
def test_streamed_network_is_the_whole_tree_network(monkeypatch, chunk):
    data = FIXTURE.read_bytes()
    whole = summary(parse_net(xmlsafe.parse(data)))  # a plain ElementTree, parsed afterwards
    monkeypatch.setattr(xmlsafe, "CHUNK", chunk)
    assert summary(parse_net(streamed(data))) == whole
    assert whole[3][2] == "TensorIterator" and len(whole[3][-1]) == 13


def test_only_loops_keep_their_elements_and_equal_ports_are_shared():
    root = streamed(FIXTURE.read_bytes())
    assert len(root) == 2 and not len(root[0]) and not len(root[1])  # no layers, no edges left
    net = parse_net(root)
    ti = net.layers[3]
    assert [c.tag for c in ti.elem] == ["input", "output", "port_map", "back_edges", "body"]
    assert isinstance(ti.elem.find("body"), NetworkElement)
    assert all(layer.elem is LEAF for lid, layer in net.layers.items() if lid != 3)
    h0, c0 = net.layers[1], net.layers[2]
    assert h0.outputs is c0.outputs and h0.data is c0.data  # equal ports, equal <data>


def test_an_error_in_a_body_names_its_loop():
    text = FIXTURE.read_text()
    body = text.index("<body>")
    text = text[:body] + text[body:].replace("<dim>512</dim>", "<dim>x</dim>", 1)
    with pytest.raises(ModelError, match=r"^layer 3 'lstm_ti' \(TensorIterator-opset1\) body: "
                                         r"layer 0 'parameter_0' port 0: dimension 'x' is not "
                                         r"an integer"):
        read(text)


def test_edge_ids_past_int64_are_missing_layers():
    text = FIXTURE.read_text().replace('from-layer="3" from-port="3"',
                                       f'from-layer="{2**70}" from-port="3"')
    with pytest.raises(ModelError, match=f"no layer with id {2**70}"):
        read(text)


def test_a_declaration_split_across_chunks_is_refused(monkeypatch):
    monkeypatch.setattr(xmlsafe, "CHUNK", 5)
    with pytest.raises(SecurityError, match="DOCTYPE"):
        read(b'<?xml version="1.0"?><!DOCTYPE net []><net version="11"/>')


def test_an_encoding_expat_cannot_read_is_a_model_error():
    with pytest.raises(ModelError, match="declared encoding cannot be read"):
        read(b'<?xml version="1.0" encoding="UTF-7"?><net version="11"/>')


def test_a_network_parsed_twice_keeps_its_connections():
    root = streamed(FIXTURE.read_bytes())
    first = parse_net(root)
    again = parse_net(root, "outer: ")  # the edges were dropped; the connections were kept
    assert again.sources == first.sources and len(again.sources) == 5
    assert again.layers[3].where().startswith("outer: layer 3 'lstm_ti'")


@pytest.mark.parametrize("chunk", [1, 3, 7, xmlsafe.CHUNK])
def test_control_characters_read_as_openvino_reads_them(monkeypatch, chunk):
    """References to U+0001-U+001F (as OpenVINO's serializer writes them) and raw ones read
    back as those characters, a reference or character cut by a chunk's end included; other
    references, and the private-use characters the reader uses in their place, read as they
    are."""
    doc = ('<?xml version="1.0"?><a n="x&#27;y&#x1f;\x02z&#65;" '
           'm="\U0010ff01\U0010ff00&#x10ff1f;\U0010ff20">t&#5;</a>').encode()
    monkeypatch.setattr(xmlsafe, "CHUNK", chunk)
    root = xmlsafe.parse(doc)
    assert root.get("n") == "x\x1by\x1f\x02zA"
    assert root.get("m") == "\U0010ff01\U0010ff00\U0010ff1f\U0010ff20"
    assert root.text == "t\x05"


def test_control_characters_in_utf16_are_left_to_expat():
    """A UTF-16 document has bytes of 1-31 that are no control characters: read as before."""
    doc = '<?xml version="1.0" encoding="UTF-16"?><a n="\u0101\u011b">x</a>'.encode("utf-16")
    assert xmlsafe.parse(doc).get("n") == "\u0101\u011b"
