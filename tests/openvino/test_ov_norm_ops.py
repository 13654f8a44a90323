"""BatchNormInference, MVN, NormalizeL2, LRN, DepthToSpace, SpaceToDepth and Unique read from
OpenVINO IR: one-op models built with OpenVINO's Python API, OpenVINO the oracle, then
itergraph's written IR run by OpenVINO again (`check_model`)."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset2 as ops2
import openvino.opset5 as ops5
import openvino.opset6 as ops6
import openvino.opset10 as ops10
import pytest
from ov_helpers import check_model, run_itergraph, run_ov, save
from test_ov_order_ops import _model

from itergraph.frontends.openvino import read, write

rng = np.random.default_rng(19)


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("version", [1, 5])
def test_batch_norm_inference(version, tmp_path):
    a = _f(2, 3, 4, 2)
    x = ops1.parameter([2, 3, 4, 2], np.float32, name="x")
    gamma, beta, mean = (ops1.constant(_f(3)) for _ in range(3))
    var = ops1.constant(np.abs(_f(3)) + 0.1)
    ops = ops1 if version == 1 else ops5
    bn = ops.batch_norm_inference(x, gamma, beta, mean, var, 1e-3)
    assert bn.get_type_info().version_id == f"opset{version}"
    check_model(_model([bn.output(0)], [x]), {"x": a}, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("across", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
def test_mvn1(across, normalize, tmp_path):
    a = _f(2, 3, 4, 5)
    x = ops2.parameter([2, 3, 4, 5], np.float32, name="x")
    m = ops2.mvn(x, across, normalize, 1e-3)
    check_model(_model([m.output(0)], [x]), {"x": a}, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("eps_mode", ["inside_sqrt", "outside_sqrt"])
@pytest.mark.parametrize("axes", [[1], [2, 3], [-1]])
def test_mvn6(eps_mode, axes, tmp_path):
    a = _f(2, 3, 4, 5)
    x = ops6.parameter([2, 3, 4, 5], np.float32, name="x")
    m = ops6.mvn(x, ops6.constant(np.array(axes, np.int64)), True, 1e-2, eps_mode)
    check_model(_model([m.output(0)], [x]), {"x": a}, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("eps_mode", ["add", "max"])
@pytest.mark.parametrize("axes", [[1], [1, 2], [-1]])
def test_normalize_l2(eps_mode, axes, tmp_path):
    a = _f(2, 3, 4)
    a[0, 0] = 0.0
    x = ops1.parameter([2, 3, 4], np.float32, name="x")
    n = ops1.normalize_l2(x, ops1.constant(np.array(axes, np.int64)), 0.5, eps_mode)
    check_model(_model([n.output(0)], [x]), {"x": a}, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size", [3, 4, 5])
@pytest.mark.parametrize("axes", [[1], [2, 3]])  # the CPU plugin takes no other axes
def test_lrn(size, axes, tmp_path):
    a = _f(2, 6, 4, 5)
    x = ops1.parameter([2, 6, 4, 5], np.float32, name="x")
    r = ops1.lrn(x, ops1.constant(np.array(axes, np.int64)), 0.3, 0.75, 2.0, size)
    check_model(_model([r.output(0)], [x]), {"x": a}, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
def test_depth_and_space(mode, tmp_path):
    a = _f(1, 8, 2, 3)
    c = _f(1, 2, 4, 6)
    x = ops1.parameter([1, 8, 2, 3], np.float32, name="x")
    y = ops1.parameter([1, 2, 4, 6], np.float32, name="y")
    d = ops1.depth_to_space(x, mode, 2)
    s = ops1.space_to_depth(y, mode, 2)
    check_model(_model([d.output(0), s.output(0)], [x, y]), {"x": a, "y": c}, tmp_path)


@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique(sorted_, axis, tmp_path):
    a = rng.integers(0, 3, (4, 3)).astype(np.float32)
    a[2] = a[0]
    x = ops10.parameter([4, 3], np.float32, name="x")
    ax = None if axis is None else ops10.constant(np.int64(axis))
    u = ops10.unique(x, ax, sorted_, "i32", "i64")
    check_model(_model([u.output(k) for k in range(4)], [x]), {"x": a}, tmp_path)


def test_lrn_fractional_bias_follows_the_spec(tmp_path):
    """OpenVINO 2026.4's CPU plugin truncates a fractional LRN bias (1.5 acts as 1); itergraph
    follows the spec, and the IR it writes gives the spec's result on OpenVINO."""
    a = _f(2, 8, 3, 3)
    x = ops1.parameter([2, 8, 3, 3], np.float32, name="x")
    r = ops1.lrn(x, ops1.constant(np.array([1], np.int64)), 0.2, 0.75, 1.5, 3)
    path = save(_model([r.output(0)], [x]), tmp_path)
    sq = a * a
    spec = np.stack([a[:, c] / (1.5 + 0.2 / 3 * sq[:, max(0, c - 1):c + 2].sum(1)) ** 0.75
                     for c in range(8)], 1)
    assert not np.allclose(run_ov(path, {"x": a})[0], spec, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(run_itergraph(path, {"x": a})[0], spec, rtol=1e-5, atol=1e-5)
    write(read(path), tmp_path / "written.xml")
    np.testing.assert_allclose(run_ov(tmp_path / "written.xml", {"x": a})[0], spec, rtol=1e-5,
                               atol=1e-5)
