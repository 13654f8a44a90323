"""StringTensorUnpack-15 and StringTensorPack-15, string Parameters and string Constants
against OpenVINO: read (as ``org.openvinotoolkit`` ops), run on NumPy and JAX (strings run on
NumPy there), written back (string constants in OpenVINO's ``.bin`` layout) and run by
OpenVINO again. ONNX Runtime has no such ops: the ONNX copy keeps them and is checked by
itergraph reading it back."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops15
import pytest
from ov_helpers import CORE, record, save

import itergraph as ig
from itergraph.backends.numpy import run_graph
from itergraph.errors import ExecutionError, ModelError
from itergraph.frontends.openvino import read, write
from itergraph.ir import verify

WORDS = np.array([["hello", "", "wörld"], ["日本語", "a b", "x"]])


def _same(got, want, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind in "OUS":
        assert [str(s) for s in got.reshape(-1)] == [str(s) for s in want.reshape(-1)], what
    else:
        assert got.dtype == want.dtype, f"{what}: {got.dtype} != {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=what)


def _ov(model_or_path, feeds):
    c = CORE.compile_model(model_or_path, "CPU")
    r = c(feeds)
    return [np.asarray(r[o]) for o in c.outputs]


def _check(outs, params, feeds, tmp_path):
    """OpenVINO vs itergraph (NumPy, JAX), then OpenVINO on itergraph's written IR."""
    model = ov.Model([o.output(0) if hasattr(o, "output") else o for o in outs], params)
    xml = save(model, tmp_path)
    want = _ov(str(xml), feeds)
    g = read(xml)
    verify(g)
    for backend, got in (("numpy", list(run_graph(g, feeds).values())),
                         ("jax", list(ig.load(g).run(feeds, backend="jax").values()))):
        assert len(got) == len(want)
        for i, (a, b) in enumerate(zip(got, want)):
            _same(a, b, f"{backend} output {i}")
    written = tmp_path / "written.xml"
    write(g, written)
    for i, (a, b) in enumerate(zip(_ov(str(written), feeds), want)):
        _same(a, b, f"written model, OpenVINO output {i}")
    record({el.get("type") for el in ET.parse(xml).iter("layer")}, "numpy", "jax", "write")
    return g, want


@pytest.mark.parametrize("shape,words", [
    ([2, 3], WORDS),
    ([-1], np.array(["", "", "z"])),
    ([4], np.array(["", "", "", ""])),
    ([0], np.array([], dtype=str)),
    ([1, 1, 2], np.array([[["ǅ🙂", "tab\there"]]])),
])
def test_unpack_parameter(shape, words, tmp_path):
    p = ops15.parameter(shape, ov.Type.string, name="s")
    u = ops15.string_tensor_unpack(p)
    _check(list(u.outputs()), [p], {"s": words}, tmp_path)


def test_unpack_constant(tmp_path):
    """A string Constant: read from OpenVINO's .bin, and written back to it."""
    c = ov.op.Constant(ov.Tensor(WORDS))
    u = ops15.string_tensor_unpack(c)
    g, _ = _check(list(u.outputs()), [], {}, tmp_path)
    const = next(v for n in g.nodes for v in n.inputs if v is not None and v.const is not None)
    assert const.const.dtype == object and const.const.tolist() == WORDS.tolist()


@pytest.mark.parametrize("idx_type", [np.int32, np.int64])
def test_pack(idx_type, tmp_path):
    """Spans of the symbols that overlap, are empty, leave gaps, split a UTF-8 character."""
    b = ops15.parameter([2, 3], idx_type, name="b")
    e = ops15.parameter([2, 3], idx_type, name="e")
    y = ops15.parameter([-1], np.uint8, name="y")
    pk = ops15.string_tensor_pack(b, e, y)
    feeds = {"b": np.array([[0, 1, 2], [2, 4, 7]], idx_type),
             "e": np.array([[2, 2, 5], [7, 8, 8]], idx_type),
             "y": np.frombuffer("abcdeñx".encode(), np.uint8).copy()}
    _check([pk], [b, e, y], feeds, tmp_path)


def test_unpack_pack_round_trip(tmp_path):
    p = ops15.parameter([-1, 3], ov.Type.string, name="s")
    u = ops15.string_tensor_unpack(p)
    pk = ops15.string_tensor_pack(u.output(0), u.output(1), u.output(2))
    again = ops15.string_tensor_unpack(pk)
    _check([pk, again.output(2)], [p], {"s": WORDS}, tmp_path)


def test_bytes_that_are_not_utf8_survive(tmp_path):
    """Pack bytes that are no UTF-8, unpack them again: the same bytes, as in OpenVINO."""
    b = ops15.parameter([2], np.int32, name="b")
    e = ops15.parameter([2], np.int32, name="e")
    y = ops15.parameter([4], np.uint8, name="y")
    u = ops15.string_tensor_unpack(ops15.string_tensor_pack(b, e, y))
    feeds = {"b": np.array([0, 1], np.int32), "e": np.array([1, 4], np.int32),
             "y": np.array([0xFF, 0xC3, 0x28, 0x80], np.uint8)}
    _check(list(u.outputs()), [b, e, y], feeds, tmp_path)


def test_string_parameter_to_string_result(tmp_path):
    p = ops15.parameter([2, 3], ov.Type.string, name="s")
    u = ops15.string_tensor_unpack(p)
    i = ops15.parameter([], np.int32, name="i")
    shifted = ops15.string_tensor_pack(ops15.add(u.output(0), i), u.output(1), u.output(2))
    words = np.array([["hello", "world", "xy"], ["abc", "a b", "yz"]])
    _check([shifted], [p, i], {"s": words, "i": np.int32(1)}, tmp_path)


def test_pack_rejects_spans_outside_the_symbols(tmp_path):
    b = ops15.parameter([2], np.int32, name="b")
    e = ops15.parameter([2], np.int32, name="e")
    y = ops15.parameter([3], np.uint8, name="y")
    g = read(save(ov.Model([ops15.string_tensor_pack(b, e, y).output(0)], [b, e, y]),
                  tmp_path))
    feeds = {"b": np.array([0, 2], np.int32), "e": np.array([1, 5], np.int32),
             "y": np.zeros(3, np.uint8)}
    with pytest.raises(ExecutionError, match="StringTensorPack.*element 1 spans"):
        run_graph(g, feeds)
    feeds = {"b": np.array([2, 0], np.int32), "e": np.array([3, 3], np.int32),
             "y": np.zeros(3, np.uint8)}
    with pytest.raises(ExecutionError, match="begins must be ascending"):
        run_graph(g, feeds)


def test_bad_string_constant_is_refused(tmp_path):
    c = ov.op.Constant(ov.Tensor(np.array(["ab", "c"])))
    xml = save(ov.Model([ops15.string_tensor_unpack(c).output(2)], []), tmp_path)
    raw = bytearray(xml.with_suffix(".bin").read_bytes())
    raw[0] = 5  # the element count no longer matches the shape
    xml.with_suffix(".bin").write_bytes(bytes(raw))
    with pytest.raises(ModelError, match="holds 5 strings"):
        read(xml)


def test_onnx_copy(tmp_path):
    """The ONNX copy: string inputs and constants are ONNX string tensors, the two ops stay
    ``org.openvinotoolkit`` ops (no ONNX op splits strings into bytes); itergraph runs it."""
    p = ops15.parameter([2, 3], ov.Type.string, name="s")
    u = ops15.string_tensor_unpack(p)
    c = ops15.string_tensor_unpack(ov.op.Constant(ov.Tensor(np.array(["é", "xyz"]))))
    model = ov.Model([u.output(0), u.output(2), c.output(2)], [p])
    g = read(save(model, tmp_path))
    path = tmp_path / "m.onnx"
    ig.save(ig.load(g), path)
    proto = onnx.load(str(path))
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.STRING
    assert {n.domain for n in proto.graph.node if "String" in n.op_type} == \
        {"org.openvinotoolkit"}
    want = _ov(model, {"s": WORDS})
    for i, (a, b) in enumerate(zip(ig.load(path).run({"s": WORDS}).values(), want)):
        _same(a, b, f"ONNX copy output {i}")
