"""``Resize`` as gathers along its axes (`semantics.resize`) on both backends, against ONNX
Runtime: every mode, coordinate transform, nearest rounding, antialias and exclude_outside
ONNX Runtime accepts, sized by scales and by sizes, with axes; on JAX one XLA program."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig

COORDS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric", "tf_crop_and_resize")
SIZINGS = (("scales", [1, 1, 2.0, 1.5]), ("scales", [1, 1, 0.5, 0.7]),
           ("scales", [1, 1, 1 / 3, 3.0]), ("sizes", [1, 2, 7, 3]), ("sizes", [1, 2, 2, 9]))


def _model(attrs, x_shape, dtype=T.FLOAT, roi=None, scales=None, sizes=None, opset=19):
    inits, names = [], ["x", "", "", ""]
    for k, (name, value, np_type) in enumerate((("roi", roi, np.float32),
                                                ("scales", scales, np.float32),
                                                ("sizes", sizes, np.int64))):
        if value is not None:
            inits.append(onnx.numpy_helper.from_array(np.array(value, np_type), name))
            names[k + 1] = name
    while names[-1] == "":
        names.pop()
    g = h.make_graph([h.make_node("Resize", names, ["y"], name="resize", **attrs)], "g",
                     [h.make_tensor_value_info("x", dtype, list(x_shape))],
                     [h.make_tensor_value_info("y", dtype, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _cases():
    """One case per attribute set; its sizings are the Resize nodes of one model (one XLA
    program per case)."""
    for mode, coord in itertools.product(("nearest", "linear", "cubic"), COORDS):
        roundings = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil") \
            if mode == "nearest" else ("round_prefer_floor",)
        options = [(0, 0)] if mode == "nearest" else \
            [(0, 0), (1, 0), (1, 1)] + ([(0, 1)] if mode == "cubic" else [])
        for rounding, (antialias, exclude) in itertools.product(roundings, options):
            sizings = [(kind, value) for kind, value in SIZINGS
                       if not (coord == "tf_crop_and_resize" and kind == "scales")]
            attrs = dict(mode=mode, coordinate_transformation_mode=coord, nearest_mode=rounding,
                         antialias=antialias, exclude_outside=exclude, extrapolation_value=-7.0,
                         cubic_coeff_a=-0.5 if exclude else -0.75)
            roi = [0, 0, 0.1, 0.2, 1, 1, 0.9, 1.3] if coord == "tf_crop_and_resize" else None
            yield pytest.param(attrs, roi, sizings,
                               id=f"{mode}-{coord}-{rounding}-aa{antialias}-ex{exclude}")


def _sized_model(attrs, x_shape, roi, sizings):
    """`x` resized once per sizing: output ``y{k}`` is the k-th sizing's Resize."""
    nodes, inits = [], []
    if roi is not None:
        inits.append(onnx.numpy_helper.from_array(np.array(roi, np.float32), "roi"))
    for k, (kind, value) in enumerate(sizings):
        arr = np.array(value, np.float32 if kind == "scales" else np.int64)
        inits.append(onnx.numpy_helper.from_array(arr, f"{kind}{k}"))
        names = ["x", "roi" if roi is not None else "",
                 f"scales{k}" if kind == "scales" else "", f"sizes{k}" if kind == "sizes" else ""]
        while names[-1] == "":
            names.pop()
        nodes.append(h.make_node("Resize", names, [f"y{k}"], name=f"resize{k}", **attrs))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, list(x_shape))],
                     [h.make_tensor_value_info(f"y{k}", T.FLOAT, None)
                      for k in range(len(sizings))], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 19)])


def _ort(m, feeds):
    return ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _check(m, feeds, want, compiles=True):
    for backend in ("numpy", "jax"):
        model = ig.load(m)
        got = model.run(feeds, backend=backend)["y"]
        assert got.shape == want.shape, backend
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=backend)
    if compiles:
        assert all(r.compiles for r in model._jax.explain())


@pytest.mark.parametrize("attrs,roi,sizings", list(_cases()))
def test_resize_matches_onnx_runtime(attrs, roi, sizings):
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 6)).astype(np.float32)
    m = _sized_model(attrs, x.shape, roi, sizings)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    model = ig.load(m)
    for backend in ("numpy", "jax"):
        got = model.run({"x": x}, backend=backend)
        for k, (kind, value) in enumerate(sizings):
            assert got[f"y{k}"].shape == want[k].shape, (backend, kind, value)
            np.testing.assert_allclose(got[f"y{k}"], want[k], rtol=1e-5, atol=1e-5,
                                       err_msg=f"{backend} {kind} {value}")
    assert all(r.compiles for r in model._jax.explain())


@pytest.mark.parametrize("dtype,np_type,mode", [(T.UINT8, np.uint8, "nearest"),
                                                (T.INT32, np.int32, "nearest"),
                                                (T.INT8, np.int8, "nearest"),
                                                (T.FLOAT16, np.float16, "cubic")])
def test_resize_of_other_element_types(dtype, np_type, mode):
    x = (np.random.default_rng(1).random((1, 3, 4, 5)) * 100).astype(np_type)
    m = _model(dict(mode=mode), x.shape, dtype=dtype, scales=[1, 1, 1.5, 2.0])
    want = _ort(m, {"x": x})
    for backend in ("numpy", "jax"):
        got = ig.load(m).run({"x": x}, backend=backend)["y"]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=2e-3 if np_type is np.float16 else 1e-6, atol=1e-3)


def test_resize_of_some_axes_opset_18():
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 4)).astype(np.float32)
    m = _model(dict(mode="linear", axes=[3, -2]), x.shape, sizes=[9, 2], opset=18)
    _check(m, {"x": x}, _ort(m, {"x": x}))


def test_resize_sized_at_run_time_by_the_input_shape():
    """torch.onnx's upsampling: sizes computed from ``Shape``; static while compiling."""
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Constant", [], ["two"], value=h.make_tensor("t", T.INT64, [4],
                                                                      [1, 1, 2, 2])),
             h.make_node("Mul", ["s", "two"], ["size"]),
             h.make_node("Resize", ["x", "", "", "size"], ["y"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4, "h", "w"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    x = np.random.default_rng(3).standard_normal((1, 4, 3, 5)).astype(np.float32)
    _check(m, {"x": x}, _ort(m, {"x": x}))


def test_resize_errors_name_the_node():
    x = np.zeros((1, 1, 2, 2), np.float32)
    m = _model(dict(mode="linear"), x.shape, scales=[1, 1, 2])
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.Error, match="resize.*3 entries for 4 axes"):
            ig.load(m).run({"x": x}, backend=backend)
