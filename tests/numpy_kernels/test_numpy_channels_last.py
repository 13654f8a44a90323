"""Channels-last activations on the NumPy backend (`backends.numpy.kernels.conv_nd`): a
depthwise Conv hands its output on channels last (a transposed view, not copied back; maps
of `conv_depthwise._LAST_MIN` elements or more), and a
Conv of one group reading such an input computes its windows and product channels last.
Each case chains a depthwise Conv into a second Conv of another geometry (1x1, strided,
padded, dilated, ``auto_pad``, 1-D and 3-D, several groups, batch 2), with a residual Add
and a HardSwish between them, and compares with ONNX Runtime; the path taken is checked."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import itergraph as ig
from itergraph.backends.numpy.kernels import conv_depthwise, conv_nd

F32 = np.float32

# (x shape, depthwise kernel, second Conv: output channels, kernel, group, attrs)
CASES = [
    ((1, 16, 9, 12), (3, 3), (24, (1, 1), 1, {})),
    ((2, 8, 7, 10), (3, 3), (12, (3, 3), 1, dict(pads=[1, 1, 1, 1]))),
    ((1, 8, 9, 11), (3, 3), (6, (3, 3), 1, dict(pads=[0, 1, 2, 1], strides=[2, 2]))),
    ((1, 8, 8, 8), (5, 5), (4, (3, 2), 1, dict(dilations=[2, 1], pads=[2, 0, 1, 1]))),
    ((2, 8, 7, 8), (3, 3), (4, (3, 3), 1, dict(auto_pad="SAME_LOWER", strides=[2, 2]))),
    ((1, 6, 6, 7), (3, 3), (5, (1, 1), 1, dict(strides=[2, 3]))),
    ((1, 12, 20), (5,), (16, (3,), 1, dict(pads=[1, 1]))),  # 1-D
    ((1, 4, 4, 5, 6), (3, 3, 3), (8, (1, 2, 2), 1, dict(pads=[0, 1, 0, 0, 0, 1]))),  # 3-D
    ((1, 8, 9, 12), (3, 3), (8, (3, 3), 2, dict(pads=[1, 1, 1, 1]))),  # 2 groups: NCHW path
]


def _model(x_shape, dw_kernel, second, rng):
    c = x_shape[1]
    m, kernel, group, attrs = second
    n = len(x_shape) - 2
    inits = [
        numpy_helper.from_array(rng.standard_normal((c, 1, *dw_kernel)).astype(F32), "wd"),
        numpy_helper.from_array(rng.standard_normal(c).astype(F32), "bd"),
        numpy_helper.from_array(
            rng.standard_normal((m, c // group, *kernel)).astype(F32) * 0.3, "w2"),
        numpy_helper.from_array(rng.standard_normal(m).astype(F32), "b2"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "wd", "bd"], ["d"], group=c,
                         pads=[k // 2 for k in dw_kernel] * 2),
        helper.make_node("HardSwish", ["d"], ["h"]),
        helper.make_node("Add", ["h", "d"], ["r"]),  # both operands channels last
        helper.make_node("Conv", ["r", "w2", "b2"], ["y"], group=group, kernel_shape=list(kernel),
                         **attrs),
    ]
    graph = helper.make_graph(nodes, "cl", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, x_shape)], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    assert n == len(dw_kernel)
    return model


@pytest.mark.parametrize("x_shape, dw_kernel, second", CASES)
def test_depthwise_then_conv_channels_last(x_shape, dw_kernel, second, monkeypatch):
    rng = np.random.default_rng(len(CASES) + sum(x_shape))
    model = _model(x_shape, dw_kernel, second, rng)
    x = rng.standard_normal(x_shape).astype(F32)
    taken = []
    init = conv_nd._Plan.__init__

    def spy(self, *a, **k):
        init(self, *a, **k)
        taken.append((self.dw is not None, self.cl))

    monkeypatch.setattr(conv_nd._Plan, "__init__", spy)
    monkeypatch.setattr(conv_depthwise, "_LAST_MIN", 0)  # small maps: channels last too
    got = ig.load(model).run({"x": x}, backend="numpy")["y"]
    expect = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)
    # the depthwise Conv, then the second: channels last when it has one group
    assert taken[0][0] and not taken[0][1]
    assert taken[1] == (False, second[2] == 1)


@pytest.mark.parametrize("x_shape", [(1, 32, 16, 24), (1, 16, 9, 12)])
def test_channels_last_output_is_a_plain_array(x_shape):
    """The depthwise output, handed out as the model's output, is C-contiguous: channels
    last inside the plan (a map of `_LAST_MIN` elements or more) or copied back (fewer)."""
    rng = np.random.default_rng(3)
    model = _model(x_shape, (3, 3), (24, (1, 1), 1, {}), rng)
    model.graph.output.append(helper.make_tensor_value_info("d", TensorProto.FLOAT, None))
    x = rng.standard_normal(x_shape).astype(F32)
    got = ig.load(model).run({"x": x}, backend="numpy")
    expect = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for name, e in zip(("y", "d"), expect):
        np.testing.assert_allclose(got[name], e, rtol=1e-5, atol=1e-5)
        assert got[name].flags.c_contiguous  # as other engines hand out their outputs
