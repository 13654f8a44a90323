"""TopK, ReverseSequence, ScatterND and Compress between OpenVINO IR and itergraph.

Import: one-op models built with OpenVINO's Python API, run by OpenVINO, by itergraph (NumPy
and JAX) and, written back by itergraph, by OpenVINO again (`check_model`). Export: ONNX models
built with onnx.helper, ONNX Runtime the oracle, written to IR and run by OpenVINO (`check`).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset3 as ops3
import openvino.opset4 as ops4
import openvino.opset11 as ops11
import openvino.opset15 as ops15
import pytest
from onnx import TensorProto
from onnx import helper as h
from ov_helpers import check_model
from test_ov_from_onnx import check, const, model, vi

from itergraph.errors import UnsupportedError
from itergraph.frontends.onnx import read as read_onnx
from itergraph.frontends.openvino import write

rng = np.random.default_rng(11)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def ties(*shape):
    """Floats with repeated values, so that the tie rule matters."""
    return rng.integers(0, 4, shape).astype(np.float32)


def _model(outs, params):
    return ov.Model([o for o in outs], params)


# ------------------------------------------------------------------------------- import
@pytest.mark.parametrize("sort", ["value", "index", "none"])
@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("index_type", ["i32", "i64"])
def test_topk11(sort, mode, index_type, tmp_path):
    a = ties(3, 7)
    x = ops11.parameter([3, 7], np.float32, name="x")
    t = ops11.topk(x, np.int64(3), axis=1, mode=mode, sort=sort,
                   index_element_type=index_type, stable=sort != "none")
    check_model(_model([t.output(0), t.output(1)], [x]), {"x": a}, tmp_path)


@pytest.mark.parametrize("sort", ["value", "index"])
def test_topk1_and_3(sort, tmp_path):
    a = rng.standard_normal((2, 6, 4)).astype(np.float32)
    x = ops1.parameter([2, 6, 4], np.float32, name="x")
    t1 = ops1.topk(x, np.int32(2), axis=1, mode="max", sort=sort)
    t3 = ops3.topk(x, np.int64(4), axis=-1, mode="min", sort=sort, index_element_type="i64")
    outs = [t1.output(0), t1.output(1), t3.output(0), t3.output(1)]
    check_model(_model(outs, [x]), {"x": a}, tmp_path)


def test_topk_greedy_argmax(tmp_path):
    """A greedy decoder's step: the index of the largest logit, k=1, then squeezed."""
    a = rng.standard_normal((4, 10)).astype(np.float32)
    x = ops11.parameter([4, 10], np.float32, name="x")
    t = ops11.topk(x, np.int64(1), axis=-1, mode="max", sort="value",
                   index_element_type="i32")
    idx = ops11.squeeze(t.output(1), np.int64([1]))
    check_model(_model([idx.output(0)], [x]), {"x": a}, tmp_path)


@pytest.mark.parametrize("batch_axis,seq_axis", [(0, 1), (1, 0), (0, 2), (2, 1), (-3, -1)])
def test_reverse_sequence(batch_axis, seq_axis, tmp_path):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    n = a.shape[batch_axis]
    t = a.shape[seq_axis]
    lens = rng.integers(1, t + 1, n).astype(np.int32)
    x = ops1.parameter([3, 4, 5], np.float32, name="x")
    s = ops1.parameter([n], np.int32, name="s")
    r = ops1.reverse_sequence(x, s, batch_axis, seq_axis)
    check_model(_model([r.output(0)], [x, s]), {"x": a, "s": lens}, tmp_path)


@pytest.mark.parametrize("reduction", ["none", "sum", "sub", "prod", "min", "max"])
def test_scatter_nd_update15(reduction, tmp_path):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    u = rng.standard_normal((3, 3)).astype(np.float32)
    x = ops15.parameter([4, 3], np.float32, name="x")
    uu = ops15.parameter([3, 3], np.float32, name="u")
    idx = ops15.constant(np.array([[2], [0], [2]], np.int32))  # a repeated index accumulates
    r = ops15.scatter_nd_update(x, idx, uu, reduction=reduction)
    check_model(_model([r.output(0)], [x, uu]), {"x": a, "u": u}, tmp_path)


def test_scatter_nd_update4_and_non_zero(tmp_path):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    x = ops3.parameter([4, 3], np.float32, name="x")
    idx = ops3.constant(np.array([[1, 2], [3, 0]], np.int64))
    r = ops4.scatter_nd_update(x, idx, ops3.constant(np.array([5.0, 6.0], np.float32)))
    nz = ops3.non_zero(ops3.greater(x, ops3.constant(np.float32(0))), output_type="i32")
    check_model(_model([r.output(0), nz.output(0)], [x]), {"x": a}, tmp_path)


# ------------------------------------------------------------------------------- export
@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("k_const", [True, False])
def test_export_topk(largest, k_const, tmp_path):
    a = ties(3, 8)
    inits = [const("k", np.array([3], np.int64))] if k_const else []
    inputs = [vi("x", F, [3, 8])] + ([] if k_const else [vi("k", I64, [1])])
    m = model([h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
              inputs, [vi("v", F, [3, 3]), vi("i", I64, [3, 3])], inits)
    feeds = {"x": a} if k_const else {"x": a, "k": np.array([3], np.int64)}
    # OpenVINO's own ONNX frontend does not put the lower index first among ties
    check(m, feeds, tmp_path, openvino_onnx=False)


@pytest.mark.parametrize("batch_axis,time_axis", [(0, 1), (1, 0)])
def test_export_reverse_sequence(batch_axis, time_axis, tmp_path):
    a = rng.standard_normal((4, 4, 3)).astype(np.float32)
    lens = np.array([1, 4, 2, 3], np.int64)
    m = model([h.make_node("ReverseSequence", ["x", "s"], ["y"], batch_axis=batch_axis,
                           time_axis=time_axis)],
              [vi("x", F, [4, 4, 3]), vi("s", I64, [4])], [vi("y", F, [4, 4, 3])])
    check(m, {"x": a, "s": lens}, tmp_path)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_export_scatter_nd(reduction, tmp_path):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    u = rng.standard_normal((2, 3)).astype(np.float32)
    idx = np.array([[2], [0]], np.int64)
    attrs = {} if reduction == "none" else {"reduction": reduction}
    m = model([h.make_node("ScatterND", ["x", "i", "u"], ["y"], **attrs)],
              [vi("x", F, [4, 3]), vi("i", I64, [2, 1]), vi("u", F, [2, 3])],
              [vi("y", F, [4, 3])],
              opset=18)
    check(m, {"x": a, "i": idx, "u": u}, tmp_path)


def test_export_scatter_nd_unknown_reduction_refused(tmp_path):
    m = model([h.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add", name="sc")],
              [vi("x", F, [4]), vi("i", I64, [1, 1]), vi("u", F, [1])], [vi("y", F, [4])],
              opset=18)
    g = read_onnx(m)
    node = next(n for n in g.nodes if n.op_type == "ScatterND")
    node.attrs["reduction"] = "xor"
    with pytest.raises(UnsupportedError, match="sc"):
        write(g, tmp_path / "m.xml")


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_export_compress(axis, tmp_path):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    n = 12 if axis is None else a.shape[axis]
    cond = rng.integers(0, 2, n - 1).astype(bool)  # shorter than the axis
    attrs = {} if axis is None else {"axis": axis}
    out = {None: ["n"], 0: ["n", 4], 1: [3, "n"], -1: [3, "n"]}[axis]
    m = model([h.make_node("Compress", ["x", "c"], ["y"], **attrs)],
              [vi("x", F, [3, 4]), vi("c", B, [n - 1])], [vi("y", F, out)])
    check(m, {"x": a, "c": cond}, tmp_path)
