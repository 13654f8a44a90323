"""OpenVINO models written to ONNX by itergraph: the file passes `onnx.checker`'s full check
and ONNX Runtime computes what OpenVINO computes on the original.

The models are built with OpenVINO's Python API in the forms its converters (PyTorch and ONNX
frontends) produce, saved as IR, read by itergraph and written with ``ig.save(m, "x.onnx")``.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
from openvino import opset13 as ops
from ov_helpers import assert_close, run_ov, save

import itergraph as ig


def to_onnx_and_run(model: ov.Model, feeds: dict, tmp_path) -> onnx.ModelProto:
    """OpenVINO on `model` vs ONNX Runtime on itergraph's ONNX copy of its IR."""
    xml = save(model, tmp_path)
    want = run_ov(xml, feeds)
    path = tmp_path / "written.onnx"
    ig.save(ig.load(xml), path)
    onnx.checker.check_model(str(path), full_check=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert_close(a, b, what=f"ONNX Runtime output {i}")
    return onnx.load(str(path))


def test_while_loop_scalar_counter_output_has_a_shape(tmp_path):
    """A carried scalar counter (PyTorch's ``while`` loop, converted by OpenVINO): the written
    loop output is declared with its rank so the checker finds a shape on the main graph."""
    x = ops.parameter([-1, -1], np.float32, name="x")
    t = ops.parameter([], np.float32, name="t")
    trip = ops.constant(np.int64(2**63 - 1))
    first = ops.less(ops.reduce_sum(x, ops.constant(np.array([0, 1])), False), t)
    xi = ops.parameter([-1, -1], np.float32, name="xi")
    si = ops.parameter([], np.int64, name="si")
    ti = ops.parameter([], np.float32, name="ti")
    x2 = ops.add(ops.multiply(xi, ops.constant(np.float32(1.5))), ops.constant(np.float32(0.1)))
    s2 = ops.add(si, ops.constant(np.int64(1)))
    cond = ops.less(ops.reduce_sum(x2, ops.constant(np.array([0, 1])), False), ti)
    rx, rs, rc = ops.result(x2), ops.result(s2), ops.result(cond)
    loop = ops.loop(trip, first)
    loop.set_function(ov.Model([rc, rx, rs], [xi, si, ti], "body"))
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(xi, x.output(0), rx.output(0))
    loop.set_merged_input(si, ops.constant(np.int64(0)).output(0), rs.output(0))
    loop.set_invariant_input(ti, t.output(0))
    m = ov.Model([loop.get_iter_value(rx.output(0), -1), loop.get_iter_value(rs.output(0), -1)],
                 [x, t], "while_sum")
    feeds = {"x": np.full((2, 3), 0.5, np.float32), "t": np.array(40.0, np.float32)}
    proto = to_onnx_and_run(m, feeds, tmp_path)
    assert all(o.type.tensor_type.HasField("shape") for o in proto.graph.output)
