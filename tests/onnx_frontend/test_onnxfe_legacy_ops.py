"""Ops of early ONNX releases that exporters still write: ``ConstantFill`` (torch.onnx at
opsets 7 and 8). ONNX Runtime no longer reads it; OpenVINO's ONNX frontend does and is the
oracle, on the original file and on the IR itergraph writes."""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import itergraph as ig
from itergraph.errors import UnsupportedError


def _fill_model(**attrs):
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("ConstantFill", ["s"], ["z"], **attrs),
             h.make_node("Add", ["z", "x"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, 3])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 7)], ir_version=3)


@pytest.mark.parametrize("value", [0.0, 2.5])
def test_constant_fill_shaped_by_its_input(value, tmp_path):
    m = _fill_model(input_as_shape=1, value=value, dtype=TP.FLOAT)
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    core = ov.Core()
    want = core.compile_model(str(path), "CPU")({"x": x})[0]
    np.testing.assert_allclose(want, x + value)
    loaded = ig.load(str(path))
    for backend in ("numpy", "jax"):
        np.testing.assert_allclose(loaded.run({"x": x}, backend=backend)["y"], want)
    ig.save(loaded, tmp_path / "m.xml")
    np.testing.assert_allclose(core.compile_model(str(tmp_path / "m.xml"), "CPU")({"x": x})[0],
                               want)


def test_constant_fill_like_its_input_is_refused_by_name():
    with pytest.raises(UnsupportedError, match="ConstantFill node"):
        ig.load(_fill_model(input_as_shape=0, value=1.0))
