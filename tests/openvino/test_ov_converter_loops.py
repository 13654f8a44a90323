"""Loops in the form real converters write them, ONNX -> ``ig.save(model, "x.xml")`` -> OpenVINO.

Each model is built with onnx.helper the way the converter writes it; the written IR is run by
OpenVINO's CPU plugin (f32) and compared with ONNX Runtime and with itergraph itself. Each test
pins one of the OpenVINO 2026.4 problems the writer works around (`export_loops` docstring).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper
from onnx import helper as h
from ov_helpers import assert_close, run_ov

import itergraph as ig

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem=F, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inputs, outputs, inits=(), opset=11):
    g = h.make_graph(nodes, "main", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=6)
    onnx.checker.check_model(m, full_check=True)
    return m


def check(m, feeds, tmp_path):
    """ONNX Runtime, itergraph and OpenVINO on ``ig.save``'s IR agree."""
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    loaded = ig.load(str(path))
    mine = list(loaded.run(feeds).values())
    xml = tmp_path / "x.xml"
    ig.save(loaded, str(xml))
    got = run_ov(xml, feeds)
    assert len(mine) == len(got) == len(want)
    for i, (a, b, c) in enumerate(zip(mine, got, want)):
        assert_close(a, c, what=f"itergraph output {i}")
        assert_close(b, c, what=f"OpenVINO on the written IR, output {i}")
    return want


@pytest.mark.parametrize("trip_input", [True, False])
@pytest.mark.parametrize("true_node", [True, False])
def test_torchscript_for_range_loop(tmp_path, trip_input, true_node):
    """``for i in range(n): x = x * 0.5 + 1`` as torch.onnx writes it at opset 11: the body's
    condition is ``Identity`` of the outer ``true`` (a ``Constant`` node or an initializer) and
    the iteration number is never read. OpenVINO failed to compile the IR
    (``vector::_M_range_check``) when that ``true`` came in as a body Parameter."""
    body = h.make_graph(
        [h.make_node("Constant", [], ["half"], value=const("v", np.float32(0.5))),
         h.make_node("Constant", [], ["one"], value=const("v", np.float32(1.0))),
         h.make_node("Mul", ["x_in", "half"], ["m"]),
         h.make_node("Add", ["m", "one"], ["x_out"]),
         h.make_node("Identity", ["outer_true"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", B, []), vi("x_in")],
        [vi("cond_out", B, []), vi("x_out")])
    nodes, inits, inputs = [], [], [vi("x", F, [2, 3])]
    if true_node:
        nodes.append(h.make_node("Constant", [], ["outer_true"], value=const("v", np.array(True))))
    else:
        inits.append(const("outer_true", np.array(True)))
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    if trip_input:
        inputs.append(vi("M", I64, []))
        feeds["M"] = np.array(5, np.int64)
    else:
        inits.append(const("M", np.array(5, np.int64)))
    nodes.append(h.make_node("Loop", ["M", "outer_true", "x"], ["y"], body=body))
    want = check(model(nodes, inputs, [vi("y", F, [2, 3])], inits), feeds, tmp_path)
    x = feeds["x"]
    for _ in range(5):
        x = x * 0.5 + 1
    assert_close(want[0], x)
