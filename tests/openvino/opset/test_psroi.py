"""PSROIPooling-1 (average, bilinear), DeformablePSROIPooling-1 (with and without offsets) and
ROIAlignRotated-15 against OpenVINO: read as ``org.openvinotoolkit`` ops, run on NumPy and JAX
(JAX lowerings), written back. No ONNX op pools position-sensitively or over rotated boxes, and
OpenVINO's ONNX frontend reads none of them, so there is no ONNX leg."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset15 as ops15
import pytest
from opcheck import check_op
from ov_helpers import run_ov, save

import itergraph as ig
from itergraph.backends.jax import explain
from itergraph.errors import ModelError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(47)


def _pixel_rois(n, batch, size):
    xy = rng.uniform(0, size * 0.6, (n, 2))
    wh = rng.uniform(1, size * 0.4, (n, 2))
    return np.concatenate([rng.integers(0, batch, (n, 1)), xy, xy + wh], 1).astype(np.float32)


def _unit_rois(n, batch):
    xy = rng.uniform(0, 0.6, (n, 2))
    wh = rng.uniform(0.05, 0.4, (n, 2))
    return np.concatenate([rng.integers(0, batch, (n, 1)), xy, xy + wh], 1).astype(np.float32)


@pytest.mark.parametrize("output_dim,group", [(3, 2), (2, 3), (4, 1)])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_psroi_average(output_dim, group, scale, tmp_path):
    data = rng.standard_normal((2, output_dim * group * group, 10, 12)).astype(np.float32)
    rois = _pixel_rois(5, 2, 10 / scale)
    x = ops1.parameter(list(data.shape), np.float32, name="x")
    r = ops1.parameter(list(rois.shape), np.float32, name="r")
    y = ops1.psroi_pooling(x, r, output_dim, group, scale, 1, 1, "average")
    check_op([y], [x, r], {"x": data, "r": rois}, tmp_path, rtol=1e-5, atol=1e-5,
             to_onnx=False)


@pytest.mark.parametrize("group,bins_x,bins_y", [(1, 1, 1), (3, 2, 3), (2, 2, 2)])
def test_psroi_bilinear(group, bins_x, bins_y, tmp_path):
    data = rng.standard_normal((2, 3 * bins_x * bins_y, 9, 11)).astype(np.float32)
    rois = _unit_rois(6, 2)
    x = ops1.parameter(list(data.shape), np.float32, name="x")
    r = ops1.parameter(list(rois.shape), np.float32, name="r")
    y = ops1.psroi_pooling(x, r, 3, group, 1.0, bins_x, bins_y, "bilinear")
    check_op([y], [x, r], {"x": data, "r": rois}, tmp_path, rtol=1e-5, atol=1e-5,
             to_onnx=False)


@pytest.mark.parametrize("pairs,part", [(None, 1), (1, 1), (2, 3), (4, 2)])
@pytest.mark.parametrize("bins", [1, 2])
def test_deformable_psroi(pairs, part, bins, tmp_path):
    output_dim, group = 4, 3
    data = rng.standard_normal((2, output_dim * group * group, 10, 12)).astype(np.float32)
    rois = _pixel_rois(5, 2, 16)
    x = ops1.parameter(list(data.shape), np.float32, name="x")
    r = ops1.parameter(list(rois.shape), np.float32, name="r")
    params, feeds, offsets = [x, r], {"x": data, "r": rois}, None
    if pairs:
        off = (rng.standard_normal((5, 2 * pairs, part, part)) * 0.3).astype(np.float32)
        offsets = ops1.parameter(list(off.shape), np.float32, name="o")
        params.append(offsets)
        feeds["o"] = off
    y = ops1.deformable_psroi_pooling(x, r, output_dim, 0.5, group, "bilinear_deformable", bins,
                                      bins, 0.7, part, offsets=offsets)
    check_op([y], params, feeds, tmp_path, rtol=1e-5, atol=1e-5, to_onnx=False)


def test_deformable_psroi_negative_batch(tmp_path):
    """A negative batch index (outside the spec's range) gives 0 for that box, as OpenVINO's
    reference implementation does; the CPU plugin instead ends the list there, zeroing every
    later box too (asserted here as the plugin's disagreement)."""
    data = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    rois = np.array([[0, 1, 1, 5, 5], [-1, 0, 0, 4, 4], [0, 1, 1, 5, 5]], np.float32)
    x = ops1.parameter(list(data.shape), np.float32, name="x")
    r = ops1.parameter(list(rois.shape), np.float32, name="r")
    y = ops1.deformable_psroi_pooling(x, r, 1, 1.0, 2)
    feeds = {"x": data, "r": rois}
    want = run_ov(ov.Model([y], [x, r]), feeds)[0]
    g = read(save(ov.Model([y], [x, r]), tmp_path))
    for backend in ("numpy", "jax"):
        got = list(ig.load(g).run(feeds, backend=backend).values())[0]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        assert np.all(got[1] == 0)
        np.testing.assert_allclose(got[2], got[0])
    assert np.any(want[0] != 0) and np.all(want[1:] == 0)


def _rotated_rois(n):
    return np.concatenate([rng.uniform(0, 12, (n, 2)), rng.uniform(1, 8, (n, 2)),
                           rng.uniform(-2, 2, (n, 1))], 1).astype(np.float32)


@pytest.mark.parametrize("sampling", [0, 1, 2])
@pytest.mark.parametrize("clockwise", [False, True])
@pytest.mark.parametrize("scale", [1.0, 0.6])
def test_roi_align_rotated(sampling, clockwise, scale, tmp_path):
    data = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    rois = _rotated_rois(6) / np.float32([scale, scale, scale, scale, 1])
    batch = rng.integers(0, 2, 6).astype(np.int32)
    x = ops15.parameter(list(data.shape), np.float32, name="x")
    r = ops15.parameter(list(rois.shape), np.float32, name="r")
    b = ops15.parameter([6], np.int32, name="b")
    y = ops15.roi_align_rotated(x, r, b, 3, 2, sampling, scale, clockwise)
    check_op([y], [x, r, b], {"x": data, "r": rois, "b": batch}, tmp_path, rtol=1e-5,
             atol=1e-5, to_onnx=False)


def test_jax_lowering(tmp_path):
    """The pooling ops compile with XLA; ROIAlignRotated with sampling_ratio=0 (sample counts
    from run-time box sizes) falls back to NumPy."""
    data = rng.standard_normal((1, 8, 6, 6)).astype(np.float32)
    x = ops15.parameter(list(data.shape), np.float32, name="x")
    r = ops15.parameter([2, 5], np.float32, name="r")
    b = ops15.parameter([2], np.int64, name="b")
    outs = [ops15.roi_align_rotated(x, r, b, 2, 2, 2, 1.0, False),
            ops15.roi_align_rotated(x, r, b, 2, 2, 0, 1.0, False),
            ops1.psroi_pooling(x, r, 2, 2, 1.0, 1, 1, "average"),
            ops1.deformable_psroi_pooling(x, r, 2, 1.0, 2)]
    g = read(save(ov.Model(outs, [x, r, b]), tmp_path))
    feeds = {"x": data, "r": np.array([[0, 1, 1, 4, 4], [0, 2, 2, 5, 5]], np.float32),
             "b": np.zeros(2, np.int64)}
    records = explain(g, feeds)
    fallback = sorted(str(rec.element) for rec in records if not rec.compiles)
    assert len(fallback) == 1 and "ROIAlignRotated" in fallback[0], fallback


def test_psroi_bad_mode_is_refused(tmp_path):
    x = ops1.parameter([1, 4, 5, 5], np.float32, name="x")
    r = ops1.parameter([1, 5], np.float32, name="r")
    y = ops1.psroi_pooling(x, r, 1, 2, 1.0, 1, 1, "average")
    path = save(ov.Model([y], [x, r]), tmp_path)
    text = path.read_text().replace('mode="average"', 'mode="maximum"')
    path.write_text(text)
    with pytest.raises(ModelError, match="mode 'maximum'"):
        read(path)


@pytest.mark.parametrize("op", ["psroi", "deformable", "rotated"])
def test_f16_and_dynamic_shapes(op, tmp_path):
    """Half-precision maps; for ROIAlignRotated a box count known only at run time too (the
    CPU plugin refuses dynamic shapes for the PS pooling ops)."""
    data = rng.standard_normal((2, 8, 9, 9)).astype(np.float16)
    dyn = op == "rotated"
    x = ops15.parameter([-1, 8, -1, -1] if dyn else list(data.shape), np.float16, name="x")
    if op == "rotated":
        rois = _rotated_rois(4).astype(np.float16)
        r = ops15.parameter([-1, 5], np.float16, name="r")
        b = ops15.parameter([-1], np.int32, name="b")
        y = ops15.roi_align_rotated(x, r, b, 2, 2, 2, 1.0, True)
        params, feeds = [x, r, b], {"x": data, "r": rois, "b": np.array([0, 1, 1, 0], np.int32)}
    else:
        rois = _pixel_rois(4, 2, 9).astype(np.float16)
        r = ops15.parameter([4, 5], np.float16, name="r")
        y = ops1.psroi_pooling(x, r, 2, 2, 1.0, 1, 1, "average") if op == "psroi" else \
            ops1.deformable_psroi_pooling(x, r, 2, 1.0, 2, spatial_bins_x=2, spatial_bins_y=2)
        params, feeds = [x, r], {"x": data, "r": rois}
    check_op([y], params, feeds, tmp_path, rtol=5e-3, atol=5e-3, to_onnx=False)
