"""Clip on NumPy -- its own kernel (bounds as inputs or, before opset 11, attributes) and the
in-place form after an arithmetic node (`inplace`) -- against ``onnx.reference`` on special
values: signed zeros at and between the bounds, NaN, infinities, ``min > max``, one bound
only, per-channel bounds."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import itergraph as ig

SPECIAL = np.array([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 3.0, 6.0, 5.5, 1e-45,
                    -1e-45, 7.0, -3.0], np.float32)


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def _run_both(m, feeds):
    want = ReferenceEvaluator(m).run(None, feeds)[0]
    got = ig.load(m).run(feeds, backend="numpy")["y"]
    _same_bits(np.asarray(got), want)


@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (-0.0, 0.0), (0.0, -0.0), (4.0, 2.0),
                                   (None, 6.0), (0.0, None), (np.nan, 1.0)])
@pytest.mark.parametrize("after_add", [False, True])
def test_clip_matches_onnx_reference(lo, hi, after_add):
    x = np.concatenate([SPECIAL, SPECIAL - 3]).astype(np.float32)
    nodes, inits = [], [numpy_helper.from_array(np.array(3, np.float32), "three")]
    src = "x"
    if after_add:  # Add then Clip: the pair runs in place
        nodes.append(h.make_node("Add", ["x", "three"], ["t"]))
        src = "t"
    names = [src, "", ""]
    for i, (name, v) in enumerate((("lo", lo), ("hi", hi))):
        if v is not None:
            inits.append(numpy_helper.from_array(np.array(v, np.float32), name))
            names[1 + i] = name
    nodes.append(h.make_node("Clip", names, ["y"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [x.size])],
                     [h.make_tensor_value_info("y", T.FLOAT, [x.size])], inits)
    _run_both(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), {"x": x})


def test_clip_attributes_and_per_channel_bounds():
    x = np.tile(SPECIAL, (2, 3, 1)).astype(np.float32)
    g = h.make_graph([h.make_node("Clip", ["x"], ["y"], min=-0.0, max=6.0)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, list(x.shape))])
    _run_both(h.make_model(g, opset_imports=[h.make_opsetid("", 6)]), {"x": x})
    lo = numpy_helper.from_array(np.array([[0.0], [-1.0], [2.0]], np.float32), "lo")
    g = h.make_graph([h.make_node("Mul", ["x", "x"], ["t"]),
                      h.make_node("Clip", ["t", "lo", "hi"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, list(x.shape))],
                     [lo, numpy_helper.from_array(np.array(5.0, np.float32), "hi")])
    _run_both(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), {"x": x})


@pytest.mark.parametrize("op", ["HardSwish", "HardSigmoid"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("shape", [(), (2, 3, 5)])
def test_hard_activations_computed_in_place_keep_their_bits(op, dtype, shape):
    """In place on one array: bitwise the plain expressions (x * clip(x / 6 + 0.5, 0, 1),
    clip(alpha * x + beta, 0, 1); the attributes as the file
    stores them, float32)."""
    x = np.resize(np.concatenate([SPECIAL, np.linspace(-4, 4, 17, dtype=np.float32)]),
                  shape).astype(dtype)
    attrs = {} if op == "HardSwish" else {"alpha": 0.3, "beta": 0.4}
    code = {np.float32: T.FLOAT, np.float16: T.FLOAT16, np.float64: T.DOUBLE}[dtype]
    g = h.make_graph([h.make_node(op, ["x"], ["y"], **attrs)], "g",
                     [h.make_tensor_value_info("x", code, list(shape))],
                     [h.make_tensor_value_info("y", code, list(shape))])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    got = np.asarray(ig.load(m).run({"x": x}, backend="numpy")["y"])
    want = x * np.clip(x / 6 + 0.5, 0, 1) if op == "HardSwish" \
        else np.clip(float(np.float32(0.3)) * x + float(np.float32(0.4)), 0, 1)
    _same_bits(got, np.asarray(want, dtype))
