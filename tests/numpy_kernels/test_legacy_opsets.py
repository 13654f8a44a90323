"""Attribute forms of older opsets (before axes/shapes/bounds became inputs), against ONNX
Runtime running the same model at the same opset."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto
from onnx import helper as h

from onnx_builders import assert_same, const, model, run_ig, run_ort, vi

F = TensorProto.FLOAT
X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)


def _check(nodes, outputs, opset, inits=(), extra=None):
    """Compare on input x (plus `extra` name -> array inputs: IR < 4 has no free initializers)."""
    extra = extra or {}
    ins = [vi("x", F, [2, 3, 4])] + [
        h.make_tensor_value_info(k, h.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
        for k, v in extra.items()]
    m = model(nodes, ins, outputs, inits=inits, opset=opset)
    feeds = {"x": X, **extra}
    assert_same(run_ig(m, feeds), run_ort(m, feeds), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_softmax_before_13_flattens_at_axis(op, axis):
    _check([h.make_node(op, ["x"], ["y"], axis=axis)], [vi("y", F, [2, 3, 4])], opset=11)


def test_softmax_before_13_default_axis_is_1():
    _check([h.make_node("Softmax", ["x"], ["y"])], [vi("y", F, [2, 3, 4])], opset=9)


def test_shape_ops_with_attributes_opset_11():
    nodes = [
        h.make_node("Unsqueeze", ["x"], ["u"], axes=[0, -1]),
        h.make_node("Squeeze", ["u"], ["s"], axes=[0]),
        h.make_node("Split", ["x"], ["p0", "p1"], axis=2, split=[1, 3]),
        h.make_node("ReduceSum", ["x"], ["rs"], axes=[0, 2], keepdims=0),
        h.make_node("ReduceMax", ["x"], ["rm"], keepdims=1),
        h.make_node("ReduceLogSumExp", ["x"], ["rl"], axes=[-1]),
        h.make_node("Flatten", ["x"], ["fl"], axis=-1),
        h.make_node("ArgMin", ["x"], ["am"], axis=-1, keepdims=0),
    ]
    outs = [vi("s", F, [2, 3, 4, 1]), vi("p0", F, [2, 3, 1]),
            vi("p1", F, [2, 3, 3]), vi("rs", F, [3]), vi("rm", F, [1, 1, 1]),
            vi("rl", F, [2, 3, 1]), vi("fl", F, [6, 4]), vi("am", TensorProto.INT64, [2, 3])]
    _check(nodes, outs, opset=11)


def test_slice_with_attributes_opset_9():
    nodes = [h.make_node("Slice", ["x"], ["y"], starts=[1, -2], ends=[100, -1], axes=[2, 1])]
    _check(nodes, [vi("y", F, [2, 1, 3])], opset=9)


def test_slice_negative_steps_and_clamping_opset_13():
    nodes = [h.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])]
    inits = [const("st", [-1, 10], np.int64), const("en", [-100, 0], np.int64),
             const("ax", [2, 1], np.int64), const("sp", [-2, -1], np.int64)]
    _check(nodes, [vi("y", F, [2, 2, 2])], opset=13, inits=inits)


def test_clip_with_attributes_opset_6_and_reshape_with_zero_opset_5():
    nodes = [h.make_node("Clip", ["x"], ["c"], min=-0.5, max=0.25),
             h.make_node("Reshape", ["x", "shape"], ["r"])]
    _check(nodes, [vi("c", F, [2, 3, 4]), vi("r", F, [2, 12])], opset=6,
           extra={"shape": np.array([0, -1], np.int64)})


def test_dropout_inference_with_mask():
    nodes = [h.make_node("Dropout", ["x"], ["y", "mask"])]
    _check(nodes, [vi("y", F, [2, 3, 4]), vi("mask", TensorProto.BOOL, [2, 3, 4])], opset=13)
    # Before opset 12 ONNX Runtime returns an all-false mask; we follow onnx.reference (and
    # opset 12+): every element is kept. Before opset 10 the mask has the input's type.
    m = model(nodes, [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 4]), vi("mask", F, [2, 3, 4])],
              opset=7)
    got = run_ig(m, {"x": X})
    np.testing.assert_array_equal(got["y"], X)
    assert got["mask"].dtype == np.float32 and (got["mask"] == 1).all()


def test_legacy_broadcast_attribute_opset_6():
    """Opset < 7 ``broadcast=1, axis=1``: B aligns with A's axis 1 (ONNX Runtime no longer
    implements these opsets; the oracle is NumPy with B reshaped by hand)."""
    b = np.arange(3, dtype=np.float32) + 1
    nodes = [h.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1),
             h.make_node("Div", ["x", "b"], ["z"], broadcast=1, axis=1)]
    m = model(nodes, [vi("x", F, [2, 3, 4]), vi("b", F, [3])],
              [vi("y", F, [2, 3, 4]), vi("z", F, [2, 3, 4])], opset=6)
    got = run_ig(m, {"x": X, "b": b})
    np.testing.assert_allclose(got["y"], X + b[:, None])
    np.testing.assert_allclose(got["z"], X / b[:, None], rtol=1e-6)
