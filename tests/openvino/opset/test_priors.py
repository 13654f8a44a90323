"""PriorBox-1/8 and PriorBoxClustered-1 against OpenVINO: sizes given as constants and as
run-time inputs; min/max sizes with both prior orders, aspect ratios with flip, clip, steps and
offsets, the MXNet form (scale_all_sizes false), fixed sizes with densities and fixed ratios,
one or four variances. Read as ``org.openvinotoolkit`` ops, run on NumPy and JAX, written back,
and the ONNX copy run by OpenVINO's ONNX frontend (ONNX Runtime knows no such op)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from opcheck import check_op

BASE = {"offset": 0.5, "min_size": [4.0], "max_size": [9.0], "aspect_ratio": [2.0, 3.0],
        "flip": True, "clip": False, "step": 0.0, "variance": [0.1, 0.1, 0.2, 0.2]}

PRIOR_BOX = [
    {},
    {"clip": True, "flip": False, "variance": [0.2]},
    {"step": 8.0, "offset": 0.25, "min_size": [3.0, 7.0], "max_size": [6.0, 12.0]},
    {"aspect_ratio": [2.0, 2.0, 0.5, 1.0], "variance": []},
    {"min_size": [0.2, 0.4], "max_size": [], "scale_all_sizes": False, "step": 0.0},
    {"min_size": [0.2], "max_size": [], "scale_all_sizes": False, "step": 0.5},
    {"fixed_size": [8.0], "density": [2.0], "min_size": [], "max_size": []},
    {"fixed_size": [8.0, 16.0], "density": [1.0, 2.0], "fixed_ratio": [1.0, 2.0],
     "min_size": [], "max_size": [], "aspect_ratio": [2.0], "flip": False},
]


def _sizes(ops, runtime: bool):
    """The feature-map and image sizes, as inputs or constants: the CPU plugin infers the
    output shape of PriorBox-1, and of PriorBox-8 with min_max_aspect_ratios_order false, from
    constant sizes only ("Unexpected op type in PriorBox shape inference factory")."""
    fmap, img = np.array([3, 4], np.int64), np.array([40, 48], np.int64)
    if runtime:
        p, q = ops.parameter([2], np.int64, name="fmap"), ops.parameter([2], np.int64, name="img")
        return p, q, [p, q], {"fmap": fmap, "img": img}
    x = ops.parameter([1], np.float32, name="x")
    return ops.constant(fmap), ops.constant(img), [x], {"x": np.zeros(1, np.float32)}


@pytest.mark.parametrize("version,order", [(1, None), (8, True), (8, False)])
@pytest.mark.parametrize("case", range(len(PRIOR_BOX)))
def test_prior_box(version, order, case, tmp_path):
    ops = importlib.import_module(f"openvino.opset{version}")
    attrs = {**BASE, **PRIOR_BOX[case]}
    if order is not None:
        attrs["min_max_aspect_ratios_order"] = order
    fmap, img, params, feeds = _sizes(ops, version == 8 and order)
    y = ops.prior_box(fmap, img, attrs)
    outs = [y] if len(params) == 2 else [y, ops.add(params[0], params[0])]
    check_op(outs, params, feeds, tmp_path, rtol=1e-6, atol=1e-6, onnx_runner="openvino")


def test_prior_box_fixed_ratio_count_refused(tmp_path):
    """With two fixed ratios and one aspect ratio OpenVINO sizes the output for fewer boxes
    than its own algorithm generates (its reference writes past the buffer): refused."""
    import openvino as ov
    import openvino.opset8 as ops8
    from ov_helpers import save

    import itergraph as ig
    from itergraph.errors import ModelError

    attrs = {**BASE, "fixed_size": [8.0, 16.0], "density": [1.0, 2.0],
             "fixed_ratio": [1.0, 2.0], "min_size": [], "max_size": [], "aspect_ratio": []}
    fmap, img, params, feeds = _sizes(ops8, True)
    y = ops8.prior_box(fmap, img, attrs)
    assert y.get_output_partial_shape(0)[0].get_length() == 2
    m = ig.load(save(ov.Model([y.output(0)], params), tmp_path))
    with pytest.raises(ModelError, match="8"):
        m.run(feeds)


def test_prior_box_constant_sizes(tmp_path):
    import openvino.opset8 as ops8

    x = ops8.parameter([1], np.float32, name="x")
    y = ops8.prior_box(ops8.constant(np.array([5, 2], np.int32)),
                       ops8.constant(np.array([50, 20], np.int32)), BASE)
    out = ops8.concat([ops8.reshape(y, [-1], False), x], 0)
    check_op([out], [x], {"x": np.ones(1, np.float32)}, tmp_path, rtol=1e-6, atol=1e-6,
             onnx_runner="openvino")


CLUSTERED = [
    {},
    {"clip": False, "step": 6.0},
    {"step_w": 5.0, "step_h": 9.0, "offset": 0.25, "variance": [0.3]},
    {"clip": True, "variance": []},
]


@pytest.mark.parametrize("case", range(len(CLUSTERED)))
def test_prior_box_clustered(case, tmp_path):
    import openvino.opset1 as ops1

    # the attribute names of the layer (the Python API's checks name others)
    attrs = {"width": [4.0, 10.0, 30.0], "height": [6.0, 10.0, 12.0], "clip": True,
             "offset": 0.5, "variance": [0.1, 0.1, 0.2, 0.2], **CLUSTERED[case]}
    fmap = ops1.parameter([2], np.int64, name="fmap")
    img = ops1.parameter([2], np.int64, name="img")
    y = ops1.prior_box_clustered(fmap, img, attrs)
    feeds = {"fmap": np.array([3, 5], np.int64), "img": np.array([24, 40], np.int64)}
    check_op([y], [fmap, img], feeds, tmp_path, rtol=1e-6, atol=1e-6,
             onnx_runner="openvino")


@pytest.mark.parametrize("dynamic", [False, True])
def test_prior_box_sizes_from_shapes(dynamic, tmp_path):
    """The usual SSD graph: the sizes are dims 2 and 3 of the feature map and of the image
    (ShapeOf, StridedSlice), here with static and dynamic spatial dims."""
    import openvino.opset8 as ops8

    fmap = ops8.parameter([1, 3, -1, -1] if dynamic else [1, 3, 4, 6], np.float32, name="fmap")
    img = ops8.parameter([1, 3, -1, -1] if dynamic else [1, 3, 32, 40], np.float32,
                         name="img")

    def hw(x):
        return ops8.strided_slice(ops8.shape_of(x), [2], [4], [1], [0], [0])

    y = ops8.prior_box(hw(fmap), hw(img), BASE)
    c = ops8.prior_box_clustered(hw(fmap), hw(img), {"width": [3.0, 9.0],
                                                     "height": [5.0, 4.0], "offset": 0.5})
    feeds = {"fmap": rng_feed((1, 3, 4, 6)), "img": rng_feed((1, 3, 32, 40))}
    check_op([y, c], [fmap, img], feeds, tmp_path, rtol=1e-6, atol=1e-6,
             onnx_runner="openvino")


def rng_feed(shape):
    return np.random.default_rng(5).standard_normal(shape).astype(np.float32)
