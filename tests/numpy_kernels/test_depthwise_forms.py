"""The four forms of the NumPy depthwise Conv (`backends.numpy.kernels.conv_depthwise`):
each case says which form it must take, and its result is compared with ONNX Runtime and
``onnx.reference`` (strides, dilations, symmetric and asymmetric pads, ``auto_pad``, batch
2, 1-D to 3-D, weights as initializers and as inputs)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import itergraph as ig
from itergraph.backends.numpy.kernels.conv_depthwise import Depthwise

F32 = np.float32

# (form, x shape, kernel, attrs): the form the geometry must take
CASES = [
    # merged, the run cut into blocks (96 columns x 88 channels: 12 columns a block)
    ("merged", (1, 88, 3, 96), (5, 5), dict(pads=[2, 2, 2, 2])),
    # merged, rows strided, 5x5 over 2 rows (a box of 3 rows), blocks of 8 x 200
    ("merged", (1, 200, 3, 96), (5, 5), dict(pads=[2, 2, 2, 2], strides=[2, 1])),
    # merged, too few columns x channels for two blocks: one block
    ("merged", (2, 8, 6, 13), (3, 3), dict(pads=[1, 0, 2, 1], dilations=[1, 2])),
    ("merged", (2, 6, 5, 7), (3, 3), dict(auto_pad="SAME_UPPER")),
    ("merged", (1, 6, 5, 8), (2, 3), dict(auto_pad="SAME_LOWER", strides=[2, 1])),
    ("merged", (2, 5, 7, 9), (3, 2), dict(auto_pad="VALID", dilations=[2, 3])),
    ("merged", (2, 16, 40), (5,), dict(pads=[2, 2])),  # 1-D (silero's shapes)
    ("merged", (1, 4, 4, 5, 6), (3, 3, 3), dict(pads=[1, 0, 1, 1, 2, 0])),  # 3-D
    # merged: a strided last axis with one output column
    ("merged", (1, 4, 5, 3), (3, 3), dict(strides=[1, 3])),
    # a strided last axis over 16 output columns or more: one merged einsum per phase
    ("phased", (1, 16, 9, 40), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ("phased", (2, 8, 7, 55), (3, 5), dict(pads=[0, 2, 1, 1], strides=[1, 3])),
    ("phased", (1, 4, 3, 4, 40), (3, 3, 3), dict(pads=[1] * 6, strides=[1, 1, 2])),
    # a strided last axis: channels alone innermost (many channels) or one product per tap
    ("last", (2, 64, 6, 10), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ("last", (1, 48, 4, 7), (3, 5), dict(pads=[0, 2, 1, 0], strides=[1, 2], dilations=[2, 1])),
    ("taps", (2, 4, 6, 20), (3, 3), dict(pads=[1, 1, 1, 1], strides=[1, 2])),
    ("taps", (1, 2, 9), (4,), dict(auto_pad="SAME_UPPER", strides=[3])),
    ("taps", (1, 32, 2), (3,), dict(pads=[1, 1])),  # at most 3 taps
    ("taps", (2, 40, 1, 1), (3, 1), dict(pads=[1, 0, 1, 0])),
]


def _model(x_shape, kernel, attrs, w, b, weights_as_input):
    c = x_shape[1]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits = [numpy_helper.from_array(b, "b")]
    if weights_as_input:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape))
    else:
        inits.append(numpy_helper.from_array(w, "w"))
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=c, kernel_shape=list(kernel),
                            **attrs)
    graph = helper.make_graph([node], "dw", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _form(model, x_shape) -> str:
    """The form the backend's plan takes for the model's one Conv."""
    import itergraph.backends.numpy.kernels.conv_depthwise as mod

    seen = []
    init = Depthwise.__init__

    def spy(self, *a, **k):
        init(self, *a, **k)
        seen.append(self.form)

    mod.Depthwise.__init__ = spy
    try:
        m = ig.load(model)
        m.run({"x": np.zeros(x_shape, F32), **({"w": _w(model)} if _w(model) is not None
                                                  else {})}, backend="numpy")
    finally:
        mod.Depthwise.__init__ = init
    return seen[-1]


def _w(model):
    return None if any(i.name == "w" for i in model.graph.initializer) else np.ones(
        [d.dim_value for d in model.graph.input[1].type.tensor_type.shape.dim], F32)


@pytest.mark.parametrize("weights_as_input", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_depthwise_form_against_ort_and_reference(case, weights_as_input):
    form, x_shape, kernel, attrs = CASES[case]
    rng = np.random.default_rng(case)
    c = x_shape[1]
    w = rng.standard_normal((c, 1, *kernel)).astype(F32)
    b = rng.standard_normal(c).astype(F32)
    model = _model(x_shape, kernel, attrs, w, b, weights_as_input)
    assert _form(model, x_shape) == form
    feeds = {"x": rng.standard_normal(x_shape).astype(F32)}
    if weights_as_input:
        feeds["w"] = w
    m = ig.load(model)
    for _ in range(2):  # the second run reuses the plan's prepared weights
        got = m.run(feeds, backend="numpy")["y"]
        want = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        ref = ReferenceEvaluator(model).run(None, feeds)[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        feeds["x"] = rng.standard_normal(x_shape).astype(F32)


def test_row_groups_of_a_low_map():
    """A 5x5 kernel padded by 2 over 3 rows: output row o reads kernel rows 2-o .. 4-o, so
    each row runs with its own 3 taps (9 row-taps where the union box costs 15); over 12
    rows only the border rows differ and the split is not worth it."""
    from itergraph.backends.numpy.kernels.conv_depthwise import _row_groups

    assert _row_groups(5, 1, 1, 3, 2, 3) == [(slice(0, 1), [2, 3, 4]), (slice(1, 2), [1, 2, 3]),
                                             (slice(2, 3), [0, 1, 2])]
    assert _row_groups(5, 1, 1, 12, 2, 12) is None
