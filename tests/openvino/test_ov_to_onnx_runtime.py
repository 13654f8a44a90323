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
import pytest
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


def _loop_over_rows(step) -> ov.Model:
    """y[i] = step(x, i) for the rows i of x: a Loop-5 with a concatenated output."""
    x = ops.parameter([-1, 3], np.float32, name="x")
    n = ops.gather(ops.shape_of(x), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    it = ops.parameter([], np.int64, name="it")
    xi = ops.parameter([-1, 3], np.float32, name="xi")
    piece = ops.unsqueeze(step(xi, it), ops.constant(np.int64(0)))
    r, rc = ops.result(piece), ops.result(ops.constant(True))
    loop = ops.loop(n, ops.constant(True))
    loop.set_function(ov.Model([rc, r], [it, xi], "body"))
    loop.set_special_body_ports([0, 0])
    loop.set_invariant_input(xi, x.output(0))
    return ov.Model([loop.get_concatenated_slices(r.output(0), 0, 1, 1, -1, 0)], [x], "rows")


def test_scalar_axes_become_vectors(tmp_path):
    """OpenVINO reductions and Squeeze take a scalar axis (the ``ShapeOf -> ReduceProd`` idiom
    of its scatter decompositions); ONNX wants a vector there ("An axes tensor must be a vector
    tensor" in ONNX Runtime): a constant and a computed scalar axis."""
    def step(xi, it):
        row = ops.gather(xi, it, ops.constant(np.int64(0)))  # [3]
        count = ops.reduce_prod(ops.shape_of(row), ops.constant(np.int64(0)), False)
        axis = ops.subtract(it, it)  # 0, computed in the loop
        top = ops.reduce_max(row, axis, True)
        low = ops.squeeze(ops.reduce_min(row, ops.constant(np.int64(0)), True),
                          ops.constant(np.int64(0)))
        total = ops.add(ops.add(ops.convert(count, "f32"), low), ops.squeeze(top, axis))
        return ops.reduce_sum(ops.unsqueeze(total, ops.constant(np.int64(0))),
                              ops.constant(np.int64(0)), False)
    m = _loop_over_rows(step)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    proto = to_onnx_and_run(m, {"x": x}, tmp_path)
    body = next(n for n in proto.graph.node if n.op_type == "Loop").attribute[0].g
    assert {"ReduceProd", "ReduceMax", "ReduceMin", "ReduceSum", "Squeeze"} <= {
        n.op_type for n in body.node}


@pytest.mark.parametrize("dtype", [np.int64, np.int16, np.int32])
def test_integer_relu_runs_in_onnx_runtime(tmp_path, dtype):
    """ONNX Runtime has no int64 or int16 Relu kernel (an OpenVINO ``clamp(min=0)`` of
    indices): the writer gives an equivalent form it runs."""
    x = ops.parameter([-1], dtype, name="x")
    m = ov.Model([ops.relu(x)], [x], "relu")
    feeds = {"x": np.array([-3, 0, 5, -1, 7], dtype)}
    kinds = {n.op_type for n in to_onnx_and_run(m, feeds, tmp_path).graph.node}
    assert kinds == {np.int64: {"Max", "Constant"}, np.int16: {"Cast", "Relu"},
                     np.int32: {"Relu"}}[dtype]


@pytest.mark.parametrize("op", [ops.maximum, ops.minimum])
def test_int16_max_min_runs_in_onnx_runtime(tmp_path, op):
    a = ops.parameter([-1], np.int16, name="a")
    b = ops.parameter([-1], np.int16, name="b")
    m = ov.Model([op(a, b)], [a, b], "maxmin")
    rng = np.random.default_rng(1)
    feeds = {"a": rng.integers(-300, 300, 6).astype(np.int16),
             "b": rng.integers(-300, 300, 6).astype(np.int16)}
    to_onnx_and_run(m, feeds, tmp_path)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_prelu_runs_in_onnx_runtime(tmp_path, dtype):
    x = ops.parameter([-1], dtype, name="x")
    m = ov.Model([ops.prelu(x, ops.constant(np.array([3], dtype)))], [x], "prelu")
    to_onnx_and_run(m, {"x": np.array([-3, 0, 5, -1, 7], dtype)}, tmp_path)


@pytest.mark.parametrize("grouped", [False, True])
def test_integer_convolution_runs_in_onnx_runtime(tmp_path, grouped):
    """An i32 Convolution (what OpenVINO's ONNX frontend makes of ConvInteger): ONNX's Conv is
    float only, so it is written as a float32 Conv between Casts (it was an int32 Conv, which
    the checker refuses)."""
    rng = np.random.default_rng(3)
    x = ops.parameter([2, 4, 9], np.int32, name="x")
    if grouped:
        w = ops.constant(rng.integers(-127, 128, (2, 3, 2, 3)).astype(np.int32))
        y = ops.group_convolution(x, w, [1], [1], [1], [1])
    else:
        w = ops.constant(rng.integers(-127, 128, (3, 4, 3)).astype(np.int32))
        y = ops.convolution(x, w, [2], [1], [0], [1])
    model = ov.Model([y], [x])
    feeds = {"x": rng.integers(-255, 256, (2, 4, 9)).astype(np.int32)}
    to_onnx_and_run(model, feeds, tmp_path)
