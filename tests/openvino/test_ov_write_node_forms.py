"""ONNX forms written to IR with ops OpenVINO's own counterpart lacks, each against ONNX's
reference evaluator (ONNX Runtime where that fails): BatchNormalization in training mode (the
batch's statistics, running averages), MaxPool's column-major indices
(``storage_order=1``), a ConvTranspose ``output_shape`` beyond what the convolution makes
(zeros padded on before the bias), and a DFT whose axis is an input."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator
from ov_helpers import run_ov

import itergraph as ig

rng = np.random.default_rng(5)
F = T.FLOAT


def _agree(m: onnx.ModelProto, feeds: dict, tmp_path, atol=1e-5, oracle="reference"):
    onnx.checker.check_model(m)
    if oracle == "reference":
        want = ReferenceEvaluator(m).run(None, feeds)
    else:
        want = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    got = run_ov(xml, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol)


def _model(node, inputs, outputs, inits=(), opset=20):
    g = h.make_graph([node], "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=9)


@pytest.mark.parametrize("outputs", [1, 3])
def test_batch_norm_training_mode(outputs, tmp_path):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32) * 2 + 1
    c = [rng.standard_normal(4).astype(np.float32) for _ in range(3)] + \
        [rng.uniform(0.5, 2, 4).astype(np.float32)]
    names = ["y", "rm", "rv"][:outputs]
    node = h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], names,
                       training_mode=1, momentum=0.8, epsilon=1e-3)
    m = _model(node, [h.make_tensor_value_info("x", F, ["n", 4, "t"])],
               [h.make_tensor_value_info(n, F, s) for n, s in
                zip(names, [["n", 4, "t"], [4], [4]])],
               [h.make_tensor(k, F, [4], v) for k, v in zip("sbmv", c)], opset=15)
    _agree(m, {"x": x}, tmp_path)


def test_max_pool_column_major_indices(tmp_path):
    x = rng.standard_normal((2, 3, 5, 6, 4)).astype(np.float32)
    node = h.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3, 2], strides=[1, 2, 1],
                       pads=[0, 1, 0, 1, 1, 0], storage_order=1)
    m = _model(node, [h.make_tensor_value_info("x", F, [2, 3, 5, 6, 4])],
               [h.make_tensor_value_info("y", F, ["a", "b", "c", "d", "e"]),
                h.make_tensor_value_info("i", T.INT64, ["a", "b", "c", "d", "e"])], opset=12)
    _agree(m, {"x": x}, tmp_path)


def test_conv_transpose_output_shape_beyond_the_convolution(tmp_path):
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 2)).astype(np.float32)
    node = h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2],
                       output_shape=[8, 9])  # the convolution makes [7, 8]
    m = _model(node, [h.make_tensor_value_info("x", F, [1, 2, 3, 4])],
               [h.make_tensor_value_info("y", F, [1, 3, 8, 9])],
               [h.make_tensor("w", F, w.shape, w.ravel()), h.make_tensor("b", F, [3],
                                                                       [0.5, -1, 2])])
    _agree(m, {"x": x}, tmp_path, oracle="onnxruntime")  # onnx.reference's Col2Im refuses it


@pytest.mark.parametrize("axis", [1, 2, -2, -3])
def test_dft_axis_given_at_run_time(axis, tmp_path):
    x = rng.standard_normal((2, 5, 6, 2)).astype(np.float32)
    node = h.make_node("DFT", ["x", "", "axis"], ["y"], inverse=0)
    m = _model(node, [h.make_tensor_value_info("x", F, [2, 5, 6, 2]),
                      h.make_tensor_value_info("axis", T.INT64, [])],
               [h.make_tensor_value_info("y", F, ["a", "b", "c", 2])])
    _agree(m, {"x": x, "axis": np.array(axis, np.int64)}, tmp_path, atol=1e-4)


def test_tile_by_repeats_given_at_run_time(tmp_path):
    """OpenVINO's CPU plugin leaves zeros when run-time repeats repeat four axes."""
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    node = h.make_node("Tile", ["x", "r"], ["y"])
    m = _model(node, [h.make_tensor_value_info("x", F, [2, 3, 4, 5]),
                      h.make_tensor_value_info("r", T.INT64, [4])],
               [h.make_tensor_value_info("y", F, ["a", "b", "c", "d"])], opset=13)
    _agree(m, {"x": x, "r": np.array([2, 2, 3, 2], np.int64)}, tmp_path)


def test_space_to_depth_crd(tmp_path):
    x = np.arange(48, dtype=np.float32).reshape(1, 2, 4, 6)
    node = h.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode="CRD")
    m = _model(node, [h.make_tensor_value_info("x", F, [1, 2, 4, 6])],
               [h.make_tensor_value_info("y", F, [1, 8, 2, 3])], opset=28)
    m.ir_version = 14
    _agree(m, {"x": x}, tmp_path)


def test_nms_threshold_given_at_run_time_suppresses_only_above_it(tmp_path):
    """Two boxes whose IoU is exactly the threshold (1/7) both stay, as ONNX says."""
    boxes = np.array([[[0, 0, 1, 1], [0.5, 0.5, 1.5, 1.5]]], np.float32)
    node = h.make_node("NonMaxSuppression", ["b", "s", "k", "iou"], ["sel"])
    m = _model(node, [h.make_tensor_value_info("b", F, [1, 2, 4]),
                      h.make_tensor_value_info("s", F, [1, 1, 2]),
                      h.make_tensor_value_info("k", T.INT64, [1]),
                      h.make_tensor_value_info("iou", F, [1])],
               [h.make_tensor_value_info("sel", T.INT64, ["n", 3])], opset=11)
    feeds = {"b": boxes, "s": np.array([[[0.9, 0.8]]], np.float32),
             "k": np.array([3], np.int64), "iou": np.array([1 / 7], np.float32)}
    _agree(m, feeds, tmp_path)


@pytest.mark.parametrize("what", ["dropout", "float8", "antialias", "align_corners",
                                  "half_pixel_symmetric", "grid_sample_3d"])
def test_refused_where_openvino_cannot_compute_it(what, tmp_path):
    """Dropout in training mode draws random masks; OpenVINO's Convert from float32 to
    float8 rounds twice (through float16) and does not saturate; its antialiased Interpolate
    weighs other taps than ONNX's Resize when downscaling, and its align_corners divides by
    the output length where ONNX divides by the unrounded ``length * scale``."""
    if what == "grid_sample_3d":
        node = h.make_node("GridSample", ["x", "g"], ["y"])
        m = _model(node, [h.make_tensor_value_info("x", F, [1, 1, 2, 2, 2]),
                          h.make_tensor_value_info("g", F, [1, 2, 2, 2, 3])],
                   [h.make_tensor_value_info("y", F, [1, 1, 2, 2, 2])])
        with pytest.raises(ig.UnsupportedError, match="4-D input only"):
            ig.load(m).save(tmp_path / "m.xml")
        return
    if what == "half_pixel_symmetric":
        node = h.make_node("Resize", ["x", "", "s"], ["y"], mode="linear",
                           coordinate_transformation_mode=what)
        m = _model(node, [h.make_tensor_value_info("x", F, [1, 1, 4, 4])],
                   [h.make_tensor_value_info("y", F, [1, 1, 8, 8])],
                   [h.make_tensor("s", F, [4], [1, 1, 2, 2])], opset=19)
        with pytest.raises(ig.UnsupportedError, match=what):
            ig.load(m).save(tmp_path / "m.xml")
        return
    if what in ("antialias", "align_corners"):
        attrs = {"antialias": 1} if what == "antialias" else \
            {"coordinate_transformation_mode": "align_corners"}
        node = h.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", **attrs)
        m = _model(node, [h.make_tensor_value_info("x", F, [1, 1, 4, 4])],
                   [h.make_tensor_value_info("y", F, [1, 1, 2, 2])],
                   [h.make_tensor("s", F, [4], [1, 1, 0.6, 0.6])], opset=18)
        with pytest.raises(ig.UnsupportedError, match=what):
            ig.load(m).save(tmp_path / "m.xml")
        return
    if what == "dropout":
        node = h.make_node("Dropout", ["x", "", "t"], ["y"])
        inputs = [h.make_tensor_value_info("x", F, [3]),
                  h.make_tensor_value_info("t", T.BOOL, [])]
        out, words = h.make_tensor_value_info("y", F, [3]), "training mode"
    else:
        node = h.make_node("Cast", ["x"], ["y"], to=T.FLOAT8E4M3FN)
        inputs = [h.make_tensor_value_info("x", F, [3])]
        out, words = h.make_tensor_value_info("y", T.FLOAT8E4M3FN, [3]), "nearest even"
    with pytest.raises(ig.UnsupportedError, match=words):
        ig.load(_model(node, inputs, [out], opset=13)).save(tmp_path / "m.xml")


def test_float_floor_modulo_by_infinity(tmp_path):
    """Python's ``x % inf``: ``x`` where the signs agree or x is 0, else the divisor;
    OpenVINO's FloorMod gives NaN."""
    x = np.array([-3, 3, -1, 1, 0, 5.5, -7.25, np.inf], np.float32)
    y = np.array([np.inf, np.inf, -np.inf, -np.inf, np.inf, 2, -3, 2], np.float32)
    node = h.make_node("Mod", ["x", "y"], ["z"], fmod=0)
    m = _model(node, [h.make_tensor_value_info("x", F, [8]),
                      h.make_tensor_value_info("y", F, [8])],
               [h.make_tensor_value_info("z", F, [8])], opset=13)
    want = np.mod(x.astype(np.float64), y).astype(np.float32)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    np.testing.assert_array_equal(run_ov(xml, {"x": x, "y": y})[0], want)


@pytest.mark.parametrize("to", [T.FLOAT8E4M3FN, T.FLOAT8E5M2], ids=["e4m3fn", "e5m2"])
def test_saturating_cast_from_half_to_float8(to, tmp_path):
    """From float16, a saturating Cast to float8 is written as Clamp then Convert: one
    rounding to nearest even (ties included) and values past the range, infinities too,
    saturated, as ONNX Runtime computes it (the float8 values cast back to float16 to be
    compared)."""
    import ml_dtypes

    top = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn if to == T.FLOAT8E4M3FN
                                else ml_dtypes.float8_e5m2).max)
    grid = np.linspace(-1.5 * top, 1.5 * top, 4001)
    ties = np.array([-52, -50, 9, 11, 13, 17, 19, 0.0078125 * 3, top + 1, top * 4])
    with np.errstate(over="ignore"):  # past float16's range: infinities, saturated too
        x = np.concatenate([grid, ties, [np.inf, -np.inf, 0.0, -0.0]]).astype(np.float16)
    nodes = [h.make_node("Cast", ["x"], ["q"], to=to),
             h.make_node("Cast", ["q"], ["y"], to=T.FLOAT16)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT16, [x.size])],
                     [h.make_tensor_value_info("y", T.FLOAT16, [x.size])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    _agree(m, {"x": x}, tmp_path, atol=0, oracle="ort")


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_normalization_past_float32s_range(axis, tmp_path):
    """LayerNormalization as ONNX Runtime computes it, the deviations first: rows whose
    variance overflows float32 give the bias (ONNX's function body, ``E[x^2] - E[x]^2``,
    gives NaN there), ordinary rows the normalized values; the mean and inverse standard
    deviation outputs too. (An input whose rank only OpenVINO knows, in a lowered
    generation loop's decoder, is in tests/generation/test_lower_generation.py.)"""
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    x[0, 1] = [1e30, -1e30, 3e30, 0.5, 2e31, -7e30]
    shape = [6] if axis == -1 else [4, 6]
    node = h.make_node("LayerNormalization", ["x", "s", "b"], ["y", "m", "r"], axis=axis)
    m = _model(node, [h.make_tensor_value_info("x", F, [3, 4, 6])],
               [h.make_tensor_value_info("y", F, [3, 4, 6])] +
               [h.make_tensor_value_info(n, F, [3, 1, 1] if axis == 1 else [3, 4, 1])
                for n in ("m", "r")],
               [h.make_tensor("s", F, shape, rng.standard_normal(shape)),
                h.make_tensor("b", F, shape, rng.standard_normal(shape))], opset=17)
    _agree(m, {"x": x}, tmp_path, atol=1e-5, oracle="ort")
