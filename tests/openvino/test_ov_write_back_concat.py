"""Loops whose joined outputs are written to ONNX from OpenVINO IR (a ``Concat`` on an
existing axis: the ONNX Loop stacks the pieces, a ``Reshape`` merges the stacking axis into
the joined one). ONNX Runtime on the written file computes what the oracle computes: ONNX
Runtime on the original ONNX file, or OpenVINO on the original IR."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import helper as h
from openvino import opset13 as ops
from ov_helpers import run_ov, save

import itergraph as ig
from onnx_builders import I32, I64, B, F, body, const, model, run_ort, vi


def _row_counts(elem: int):
    """Over the 7 rows of X (a static trip count): n += (row sum > 0), n scanned out; the
    IR holds it as a TensorIterator joining [1]-pieces on axis 0."""
    b = body([h.make_node("Gather", ["X", "i"], ["row"], axis=0),
              h.make_node("ReduceSum", ["row"], ["s"], keepdims=0),
              h.make_node("Greater", ["s", "fz"], ["pos"]),
              h.make_node("Cast", ["pos"], ["step"], to=elem),
              h.make_node("Add", ["n_in", "step"], ["n_out"]),
              h.make_node("Identity", ["n_out"], ["y"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("n_in", elem, [])],
             [vi("c_out", B, []), vi("n_out", elem, []), vi("y", elem, [])],
             [const("fz", np.float32(0))])
    return model([h.make_node("Loop", ["M", "", "n0"], ["n", "ys"], body=b)],
                 [vi("n0", elem, []), vi("X", F, [7, 3])], [vi("n", elem, []), vi("ys", elem, [7])],
                 [const("M", np.int64(7))])


@pytest.mark.parametrize("elem,dtype", [(I32, np.int32), (F, np.float32)])
def test_joined_scalars_written_back_load_in_onnx_runtime(elem, dtype, tmp_path):
    """Rank-1 pieces are merged with the constant shape [-1]: a shape computed by a Reshape
    feeding the merging Reshape made ONNX Runtime's Reshape fusion refuse the graph (a
    fused node typed as the shape's int64)."""
    m = _row_counts(elem)
    feeds = {"n0": np.array(1, dtype),
             "X": np.random.default_rng(0).standard_normal((7, 3)).astype(np.float32)}
    want = run_ort(m, feeds)
    ig.save(ig.load(m), tmp_path / "m.xml")
    ig.save(ig.load(tmp_path / "m.xml"), tmp_path / "back.onnx")
    got = run_ort(onnx.load(str(tmp_path / "back.onnx")), feeds)  # default optimizations
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def _doubling_loop() -> ov.Model:
    """Loop-5, n iterations: x doubles, each step's x joined on axis 0 as a [1, B] piece."""
    n = ops.parameter([], np.int64, name="n")
    x = ops.parameter([-1], np.float32, name="x")
    xi = ops.parameter([-1], np.float32, name="xi")
    x2 = ops.multiply(xi, ops.constant(np.float32(2)))
    piece = ops.unsqueeze(x2, ops.constant(np.array([0])))
    rx, rp, rc = ops.result(x2), ops.result(piece), ops.result(ops.constant(True))
    loop = ops.loop(n, ops.constant(True))
    loop.set_function(ov.Model([rc, rx, rp], [xi], "body"))
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(xi, x.output(0), rx.output(0))
    return ov.Model([loop.get_iter_value(rx.output(0), -1),
                     loop.get_concatenated_slices(rp.output(0), 0, 1, 1, -1, 0)], [n, x], "dbl")


@pytest.mark.parametrize("steps", [0, 3])
def test_joined_output_after_no_iteration_keeps_its_empty_shape(steps, tmp_path):
    """After no iteration the stacked pieces' unknown axis is 0, and merging it must not
    read that 0 as Reshape's "copy the input's dimension" (allowzero): OpenVINO's (0, 0),
    not (0, 1)."""
    xml = save(_doubling_loop(), tmp_path)
    feeds = {"n": np.array(steps), "x": np.ones(2, np.float32)}
    want = run_ov(xml, feeds)
    ig.save(ig.load(xml), tmp_path / "back.onnx")
    got = list(run_ort(onnx.load(str(tmp_path / "back.onnx")), feeds).values())
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
