"""A ``Slice`` without ``steps`` written to OpenVINO IR, read back and written to ONNX: its
steps are a constant of ones (its starts have a static length), not one computed from their
shape. ONNX Runtime's shape inference took the computed form for an empty tensor and refused
the ``Resize`` whose sizes the slice fed ("Number of elements of input 'sizes' (0) does not
match the number of axes (4)": DINOv2's interpolated position embeddings, exported by
``torch.onnx``)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig


def _resize_to_shape_of():
    """``Resize(x, sizes=Concat(Shape(x)[:2], Shape(y)[2:]))``, the bounds from Constant
    nodes and the Slices without steps."""
    consts = [h.make_node("Constant", [], [n], value=h.make_tensor(n, T.INT64, [1], [v]))
              for n, v in (("zero", 0), ("two", 2), ("four", 4))]
    nodes = [*consts, h.make_node("Shape", ["x"], ["sx"]), h.make_node("Shape", ["y"], ["sy"]),
             h.make_node("Slice", ["sx", "zero", "two"], ["head"]),
             h.make_node("Slice", ["sy", "two", "four"], ["hw"]),
             h.make_node("Concat", ["head", "hw"], ["sizes"], axis=0),
             h.make_node("Resize", ["x", "", "", "sizes"], ["out"], mode="cubic")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 3, 3]),
                                  h.make_tensor_value_info("y", T.FLOAT, [1, 1, "h", "w"])],
                     [h.make_tensor_value_info("out", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def test_ir_written_back_to_onnx_runs_in_onnx_runtime(tmp_path):
    m = _resize_to_shape_of()
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((1, 2, 3, 3)).astype(np.float32),
             "y": np.zeros((1, 1, 5, 4), np.float32)}
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    ig.save(ig.load(m), tmp_path / "m.xml")
    ig.save(ig.load(tmp_path / "m.xml"), tmp_path / "back.onnx")
    got = ort.InferenceSession(str(tmp_path / "back.onnx"),
                               providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert got.shape == want.shape == (1, 2, 5, 4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
