"""The JAX lowering of Conv writes 1x1 and depthwise convolutions as products
(`backends/jax/ops/conv.py`): every geometry against ONNX Runtime."""

from types import SimpleNamespace

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig


def _conv_model(x_shape, w_shape, bias: bool, **attrs):
    inits = [onnx.numpy_helper.from_array(
        np.random.default_rng(1).standard_normal(w_shape).astype(np.float32), "w")]
    ins = ["x", "w"]
    if bias:
        inits.append(onnx.numpy_helper.from_array(
            np.random.default_rng(2).standard_normal(w_shape[0]).astype(np.float32), "b"))
        ins.append("b")
    g = h.make_graph([h.make_node("Conv", ins, ["y"], name="conv", **attrs)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, list(x_shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


CASES = [
    # pointwise
    ((1, 8, 5, 7), (6, 8, 1, 1), {}),
    ((2, 8, 5, 7), (6, 8, 1, 1), {"strides": [2, 3]}),
    ((1, 4, 6), (3, 4, 1), {"pads": [1, 2], "strides": [2]}),
    ((1, 4, 3, 4, 5), (2, 4, 1, 1, 1), {}),
    # depthwise
    ((1, 6, 9, 9), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),
    ((2, 6, 9, 8), (6, 1, 5, 5), {"group": 6, "pads": [2, 2, 2, 2], "strides": [2, 1]}),
    ((1, 4, 10, 9), (8, 1, 3, 3), {"group": 4, "dilations": [2, 1], "pads": [0, 1, 2, 0]}),
    ((1, 5, 12), (5, 1, 4), {"group": 5, "auto_pad": "SAME_UPPER", "strides": [3]}),
    ((1, 5, 12), (5, 1, 4), {"group": 5, "auto_pad": "SAME_LOWER"}),
    ((1, 3, 5, 6, 7), (3, 1, 2, 3, 2), {"group": 3, "strides": [1, 2, 1]}),
    # strided depthwise, some windows wholly in the padding
    ((1, 16, 9, 10), (16, 1, 3, 3), {"group": 16, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 8, 8, 7), (16, 1, 5, 3), {"group": 8, "strides": [3, 2], "pads": [2, 1, 3, 0]}),
    ((1, 16, 3, 4), (16, 1, 3, 3), {"group": 16, "strides": [2, 2], "pads": [3, 3, 3, 3],
                                    "dilations": [2, 1]}),
    ((1, 16, 11), (16, 1, 4), {"group": 16, "strides": [2], "auto_pad": "SAME_UPPER"}),
    ((1, 16, 5, 1), (16, 1, 3, 3), {"group": 16, "strides": [1, 3], "pads": [1, 3, 1, 3]}),
    # neither: the general convolution
    ((1, 6, 8, 8), (4, 3, 3, 3), {"group": 2}),
    ((1, 16, 64, 96), (8, 16, 3, 3), {"pads": [1, 1, 1, 1]}),
]

# few input channels or a short signal: one product over the stacked windows
COLUMNS = [
    ((1, 3, 48, 64), (8, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 3, 9, 11), (5, 3, 2, 3), {"dilations": [2, 1], "pads": [0, 1, 2, 0]}),
    ((1, 128, 16), (64, 128, 3), {"strides": [2], "pads": [1, 1]}),
    ((1, 7, 20), (4, 7, 5), {"auto_pad": "SAME_LOWER"}),
    ((1, 7, 20), (4, 7, 3), {"pads": [3, 1], "dilations": [3]}),
    ((1, 4, 13), (6, 4, 4), {"auto_pad": "SAME_UPPER", "strides": [3]}),
    ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"strides": [1, 2, 1]}),
]
CASES += COLUMNS


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,attrs", CASES)
def test_conv_forms_match_onnx_runtime(x_shape, w_shape, attrs, bias):
    m = _conv_model(x_shape, w_shape, bias, **attrs)
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    model = ig.load(m)
    got = model.run({"x": x}, backend="jax")["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert all(r.compiles for r in model._jax.explain())


@pytest.mark.parametrize("x_shape,w_shape,attrs", COLUMNS)
def test_the_column_cases_take_the_column_form(x_shape, w_shape, attrs):
    """The cases above reach `_columns_product`, and the big general case does not."""
    from itergraph.backends.jax.ops import conv

    def geometry(x_shape, w_shape, attrs):
        n = len(x_shape) - 2
        kernel = list(w_shape[2:])
        strides = attrs.get("strides", [1] * n)
        dilations = attrs.get("dilations", [1] * n)
        cx = SimpleNamespace(node=SimpleNamespace(attrs=attrs))
        return kernel, strides, dilations, conv._pads(cx, x_shape[2:], kernel, strides,
                                                     dilations)

    assert conv._few_columns(x_shape, *geometry(x_shape, w_shape, attrs))
    big = CASES[-len(COLUMNS) - 1]
    assert not conv._few_columns(big[0], *geometry(*big))


def test_a_large_first_layer_takes_the_column_form():
    """An image's first layer (3 input channels) is a product over the stacked windows up
    to 320x320, on 16 input channels only while the column matrix is small; and a large
    3-channel one matches ONNX Runtime."""
    from itergraph.backends.jax.ops import conv

    geometry = ([3, 3], [2, 2], [1, 1], [(1, 1), (1, 1)])
    assert conv._few_columns((1, 3, 224, 224), *geometry)
    assert not conv._few_columns((1, 16, 224, 224), *geometry)
    assert not conv._few_columns((1, 3, 800, 608), *geometry)
    m = _conv_model((1, 3, 160, 192), (8, 3, 3, 3), True, strides=[2, 2], pads=[1, 1, 1, 1])
    x = np.random.default_rng(0).standard_normal((1, 3, 160, 192)).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(ig.load(m).run({"x": x}, backend="jax")["y"], want,
                               rtol=1e-4, atol=1e-4)
