"""Values between CNN layers held channels last (`backends/jax/channels_last.py`): graphs
whose convolutions feed batch normalization, activations, residual sums, per-channel
products, pooling and the consumers that read the channel-first order, against ONNX Runtime;
and the rule that decides which element-wise nodes compute on the channels-last forms."""

from types import SimpleNamespace

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig

RNG = np.random.default_rng(7)


def _w(name, *shape):
    return onnx.numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def _positive(name, *shape):
    return onnx.numpy_helper.from_array(RNG.uniform(0.5, 1.5, shape).astype(np.float32), name)


def _model(nodes, inits, x_shape, opset=18):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, list(x_shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _block(c, k, spatial, tail):
    """Conv (c -> c, 1x1) -> BatchNormalization -> HardSwish -> depthwise Conv (k) ->
    Relu -> `tail` nodes (reading "a", writing "y")."""
    ones = [1] * spatial
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=ones),
        h.make_node("BatchNormalization", ["c1", "s", "t", "m", "v"], ["n1"], epsilon=1e-3),
        h.make_node("HardSwish", ["n1"], ["h1"]),
        h.make_node("Conv", ["h1", "wd"], ["c2"], group=c, kernel_shape=[k] * spatial,
                    pads=[k // 2] * (2 * spatial)),
        h.make_node("Relu", ["c2"], ["a"]),
        *tail,
    ]
    inits = [_w("w1", c, c, *ones), _w("b1", c), _w("s", c), _w("t", c), _w("m", c),
             _positive("v", c), _w("wd", c, 1, *[k] * spatial)]
    return nodes, inits


def _se_tail(c):
    """Squeeze-and-excitation, a residual sum with the block's input, a 1x1 Conv."""
    return [
        h.make_node("GlobalAveragePool", ["a"], ["g"]),
        h.make_node("Conv", ["g", "ws"], ["gs"], kernel_shape=[1, 1]),
        h.make_node("HardSigmoid", ["gs"], ["e"], alpha=0.2, beta=0.5),
        h.make_node("Mul", ["a", "e"], ["se"]),
        h.make_node("Add", ["se", "x"], ["r"]),
        h.make_node("Conv", ["r", "wo"], ["y"], kernel_shape=[1, 1]),
    ], [_w("ws", c, c, 1, 1), _w("wo", c, c, 1, 1)]


def _consts(c, spatial):
    return [_w("per_c", c, *[1] * spatial), _w("per_w", *[1] * spatial, 5),
            _w("scalar", 1), onnx.numpy_helper.from_array(
                RNG.uniform(0.1, 0.3, (c, *[1] * spatial)).astype(np.float32), "slope")]


TAILS = {
    # per-channel and scalar operands, reversed operand order, a unary chain
    "per-channel": lambda c, s: ([
        h.make_node("Mul", ["per_c", "a"], ["p"]),
        h.make_node("Sub", ["p", "scalar"], ["q"]),
        h.make_node("PRelu", ["q", "slope"], ["u"]),
        h.make_node("Clip", ["u", "lo", "hi"], ["y"]),
    ], _consts(c, s) + [onnx.numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
                        onnx.numpy_helper.from_array(np.array(0.7, np.float32), "hi")]),
    # an operand broadcast along a spatial axis: computed channels first
    "spatial-operand": lambda c, s: ([
        h.make_node("Mul", ["a", "per_w"], ["p"]),
        h.make_node("Sigmoid", ["p"], ["q"]),
        h.make_node("Mul", ["p", "q"], ["y"]),
    ], _consts(c, s)),
    # a full-size operand held channels first (the block input) next to one held last
    "mixed-sum": lambda c, s: ([
        h.make_node("Add", ["a", "x"], ["p"]),
        h.make_node("Greater", ["p", "scalar"], ["gt"]),
        h.make_node("Where", ["gt", "p", "a"], ["y"]),
    ], _consts(c, s)),
    # consumers of the channel-first order
    "flatten": lambda c, s: ([
        h.make_node("Relu", ["a"], ["p"]),
        h.make_node("Flatten", ["p"], ["y"], axis=1),
    ], []),
    # joined and split along the channel and the last axes
    "concat-split": lambda c, s: ([
        h.make_node("Concat", ["a", "a"], ["p"], axis=1),
        h.make_node("Split", ["p", "sizes"], ["q", "r"], axis=1),
        h.make_node("Concat", ["r", "q"], ["rq"], axis=1),
        h.make_node("Concat", ["rq", "p"], ["wide"], axis=-1),
        h.make_node("Split", ["wide"], ["lo_half", "hi_half"], axis=-1, num_outputs=2),
        h.make_node("Sub", ["lo_half", "hi_half"], ["y"]),
    ], [onnx.numpy_helper.from_array(np.array([c - 1, c + 1], np.int64), "sizes")]),
    "resize": lambda c, s: ([
        h.make_node("Resize", ["a", "", "scales"], ["p"], mode="nearest"),
        h.make_node("Resize", ["p", "", "", "sizes"], ["y"], mode="linear"),
    ], [onnx.numpy_helper.from_array(np.array([1, 1] + [2.0] * s, np.float32), "scales"),
        onnx.numpy_helper.from_array(np.array([1, c] + [3] * s, np.int64), "sizes")]),
    "transpose-concat": lambda c, s: ([
        h.make_node("Transpose", ["a"], ["p"], perm=[0, *range(2, s + 2), 1]),
        h.make_node("Concat", ["a", "x"], ["q"], axis=1),
        h.make_node("ReduceSum", ["q"], ["r"], keepdims=0),
        h.make_node("ReduceSum", ["p"], ["rp"], keepdims=0),
        h.make_node("Add", ["r", "rp"], ["y"]),
    ], []),
}

POOLS = {
    "max": lambda s: h.make_node("MaxPool", ["a"], ["y"], kernel_shape=[3] * s,
                                 strides=[2] * s, pads=[1] * (2 * s)),
    "average": lambda s: h.make_node("AveragePool", ["a"], ["y"], kernel_shape=[2] * s,
                                     strides=[1] * s, pads=[0, 1] * s),
    "average-with-pads": lambda s: h.make_node("AveragePool", ["a"], ["y"],
                                               kernel_shape=[3] * s, pads=[1] * (2 * s),
                                               count_include_pad=1),
    "global-max": lambda s: h.make_node("GlobalMaxPool", ["a"], ["y"]),
}


def _check(m, x_shape):
    x = RNG.standard_normal(x_shape).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    model = ig.load(m)
    got = model.run({"x": x}, backend="jax")["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert all(r.compiles for r in model._jax.explain())


@pytest.mark.parametrize("x_shape", [(1, 8, 6, 5), (2, 8, 7, 7)])
def test_squeeze_excitation_block_matches_onnx_runtime(x_shape):
    nodes, inits = _block(8, 3, 2, [])
    tail, more = _se_tail(8)
    _check(_model(nodes + tail, inits + more, x_shape), x_shape)


@pytest.mark.parametrize("tail", sorted(TAILS))
@pytest.mark.parametrize("x_shape", [(1, 4, 5, 5), (2, 4, 5), (1, 4, 3, 4, 5)])
def test_element_wise_tails_match_onnx_runtime(tail, x_shape):
    s = len(x_shape) - 2
    nodes, inits = _block(4, 3, s, [])
    more_nodes, more_inits = TAILS[tail](4, s)
    _check(_model(nodes + more_nodes, inits + more_inits, x_shape), x_shape)


@pytest.mark.parametrize("pool", sorted(POOLS))
@pytest.mark.parametrize("x_shape", [(1, 4, 7, 6), (2, 4, 9)])
def test_pooling_after_convolutions_matches_onnx_runtime(pool, x_shape):
    s = len(x_shape) - 2
    nodes, inits = _block(4, 3, s, [POOLS[pool](s)])
    _check(_model(nodes, inits, x_shape), x_shape)


def test_general_convolution_chain_matches_onnx_runtime():
    """XLA's own convolution (3x3 over 16 channels, strided, grouped) on held values."""
    x_shape = (2, 16, 12, 10)
    nodes = [
        h.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Sigmoid", ["c1"], ["s1"]),
        h.make_node("Mul", ["c1", "s1"], ["a1"]),
        h.make_node("Conv", ["a1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], strides=[2, 2],
                    group=2, auto_pad="SAME_UPPER"),
        h.make_node("LeakyRelu", ["c2"], ["y"], alpha=0.1),
    ]
    inits = [_w("w1", 16, 16, 3, 3), _w("w2", 16, 8, 3, 3), _w("b2", 16)]
    _check(_model(nodes, inits, x_shape), x_shape)


# ---------------------------------------------------------------- which nodes go channels last


class _Held:
    """A traced value stand-in: a NumPy array that is not one (`context.is_static`)."""

    def __init__(self, a):
        self.a = a
        self.shape, self.ndim, self.dtype = a.shape, a.ndim, a.dtype


def _rule_sees(op, operand_shape, attrs=None):
    """The shapes the rule of `op` is called with, for a held [2, 3, 4, 5] value and an
    operand of `operand_shape`; None when the node is computed channels first."""
    from itergraph.backends.jax import channels_last

    tc = SimpleNamespace(channels_last={})
    x = _Held(np.zeros((2, 3, 4, 5), np.float32))
    tc.channels_last[id(x)] = (np.zeros((2, 4, 5, 3), np.float32), x)
    node = SimpleNamespace(op_type=op, domain="", attrs=attrs or {}, outputs=[object()])
    seen = []

    def call(args):
        seen.append([a.shape for a in args])
        return np.zeros((2, 4, 5, 3), np.float32)

    other = np.zeros(operand_shape, np.float32)
    out = channels_last.elementwise(tc, node, [x, other], call)
    return None if out is None else seen[0]


@pytest.mark.parametrize("shape,seen", [
    ((3, 1, 1), [(2, 4, 5, 3), (1, 1, 1, 3)]),
    ((1, 3, 1, 1), [(2, 4, 5, 3), (1, 1, 1, 3)]),
    ((), [(2, 4, 5, 3), (1, 1, 1, 1)]),
    ((5,), None),             # broadcasts along the last spatial axis
    ((2, 3, 4, 5), None),     # a full-size operand held channels first
    ((1, 1, 4, 1), None),
])
def test_which_element_wise_nodes_compute_channels_last(shape, seen):
    assert _rule_sees("Add", shape) == seen


def test_legacy_broadcast_and_other_ops_stay_channels_first():
    assert _rule_sees("Add", (3,), {"broadcast": 1, "axis": 1}) is None
    assert _rule_sees("MatMul", (3, 1, 1)) is None
