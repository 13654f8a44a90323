"""Forms from the generation bench's standard-ONNX decoders (bench/generation_models.py),
written as IR and run in OpenVINO's CPU plugin against ONNX Runtime."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as h
import onnx.numpy_helper as nh
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

import itergraph as ig  # noqa: E402

T = onnx.TensorProto


def _ort(model: onnx.ModelProto, feeds: dict) -> list:
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def _ov(xml, feeds: dict) -> list:
    core = ov.Core()
    c = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    res = c.create_infer_request().infer(feeds)
    return [np.asarray(res[o]) for o in c.outputs]


def test_layer_norm_negative_axis_dynamic_dims(tmp_path):
    """LayerNormalization axis=-1 (expanded with a Flatten of negative axis) on an input of
    dynamic dims: written without fixed shapes, right in OpenVINO."""
    g = h.make_graph(
        [h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
        "ln", [h.make_tensor_value_info("x", T.FLOAT, ["B", "S", 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["B", "S", 8])],
        [nh.from_array(np.linspace(0.5, 1.5, 8, dtype=np.float32), "g"),
         nh.from_array(np.linspace(-1, 1, 8, dtype=np.float32), "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "ln.onnx"
    onnx.save(m, str(path))
    xml = tmp_path / "ln.xml"
    ig.save(ig.load(path), xml)
    for shape in [(1, 3, 8), (2, 5, 8)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        want = _ort(m, {"x": x})[0]
        np.testing.assert_allclose(_ov(xml, {"x": x})[0], want, rtol=1e-4, atol=1e-5)


def _growing_loop() -> onnx.ModelProto:
    """A Loop carrying `k` [1, n], grown by Concat each step, its final value unused (as the
    decoders' K/V caches): only the per-step sums are stacked out."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond"], ["cond_out"]),
         h.make_node("ReduceSum", ["k", "ax"], ["s"], keepdims=1),
         h.make_node("Concat", ["k", "s"], ["kn"], axis=1),
         h.make_node("Identity", ["s"], ["s_scan"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("cond", T.BOOL, []),
                 h.make_tensor_value_info("k", T.FLOAT, [1, None])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("kn", T.FLOAT, [1, None]),
         h.make_tensor_value_info("s_scan", T.FLOAT, [1, 1])],
        [nh.from_array(np.array([1], np.int64), "ax")])
    g = h.make_graph([h.make_node("Loop", ["n", "", "k0"], ["kf", "y"], body=body)], "g",
                     [h.make_tensor_value_info("n", T.INT64, []),
                      h.make_tensor_value_info("k0", T.FLOAT, [1, "S"])],
                     [h.make_tensor_value_info("y", T.FLOAT, [None, 1, 1])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("fixed", [False, True])
def test_loop_growing_carried_value_unused(tmp_path, fixed):
    m = _growing_loop()
    path = tmp_path / "grow.onnx"
    onnx.save(m, str(path))
    feeds = {"n": np.array(4, np.int64), "k0": np.array([[1, 2]], np.float32)}
    model = ig.load(path)
    if fixed:
        model = model.with_input_shapes({k: v.shape for k, v in feeds.items()})
    xml = tmp_path / "grow.xml"
    ig.save(model, xml)
    want = _ort(m, feeds)[0]
    np.testing.assert_array_equal(_ov(xml, feeds)[0], want)
