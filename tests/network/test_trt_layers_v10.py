"""TensorRT 10 layers beyond the loop basics (fill, scatter, one-hot, top-k, non-zero,
cumulative, squeeze/unsqueeze, padding, reverse-sequence, einsum, parametric ReLU, scale,
normalization, convolution, pooling, resize, gather modes, slice modes and axes, assertion),
each against a NumPy oracle written here, on the NumPy backend and in ONNX Runtime (the ONNX
export); a few on JAX too.
"""

from __future__ import annotations

import numpy as np
import pytest
from net_helpers import new_network, run_ort

import itergraph as ig
import itergraph.network as trt

CASES = {}
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
X4 = np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4) / 10
D = np.arange(9, dtype=np.float32).reshape(3, 3)


def c(n, v, dt=None):
    a = np.asarray(v, dt)
    return n.add_constant(a.shape, a).get_output(0)


def out(n, t, name="y"):
    t.name = name
    n.mark_output(t)


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def fill_static():
    """The example of TensorRT's FillOperation docs (a per-axis delta is a tensor, input 2);
    a Python list assigned to beta is ignored, as TensorRT's binding ignores it."""
    n = new_network()
    f = n.add_fill((3, 4), trt.FillOperation.LINSPACE)
    f.alpha, f.beta = 1.0, [5.0, 5.0]
    assert f.beta == 1.0 and not f.is_alpha_beta_int64()
    f.set_input(1, c(n, np.float32(1)))
    f.set_input(2, c(n, np.array([100, 10], np.float32)))
    out(n, f.get_output(0))
    want = 1 + 100 * np.arange(3)[:, None] + 10 * np.arange(4)[None]
    return n, {}, {"y": want.astype(np.float32)}


@case
def fill_dynamic_arange():
    """Torch-TensorRT's dynamic arange: shape, start and delta as tensors."""
    n = new_network()
    length = n.add_input("L", trt.int32, (1,))
    f = n.add_fill((1,), trt.FillOperation.LINSPACE, trt.int32)
    f.set_input(0, length)
    f.set_input(1, c(n, np.int32(3)))
    f.set_input(2, c(n, np.array([2], np.int32)))
    assert f.num_inputs == 3 and f.shape is None and length.is_shape_tensor
    out(n, f.get_output(0))
    return n, {"L": np.array([5], np.int32)}, {"y": np.arange(3, 13, 2, dtype=np.int32)}


@case
def scatter_element():
    n = new_network()
    d = n.add_input("d", trt.float32, (3, 3))
    upd = c(n, np.full((1, 3), 7, np.float32))
    s = n.add_scatter(d, c(n, np.array([[1, 0, 2]], np.int32)), upd, trt.ScatterMode.ELEMENT)
    s.axis = 0
    out(n, s.get_output(0))
    want = np.zeros((3, 3), np.float32)
    want[1, 0] = want[0, 1] = want[2, 2] = 7
    return n, {"d": np.zeros((3, 3), np.float32)}, {"y": want}


@case
def scatter_nd():
    n = new_network()
    d = n.add_input("d", trt.float32, (3, 3))
    s = n.add_scatter(d, c(n, np.array([[2], [0]], np.int32)), c(n, np.ones((2, 3), np.float32)),
                      trt.ScatterMode.ND)
    out(n, s.get_output(0))
    want = D.copy()
    want[[2, 0]] = 1
    return n, {"d": D}, {"y": want}


@case
def one_hot():
    n = new_network()
    i = n.add_input("i", trt.int32, (3,))
    oh = n.add_one_hot(i, c(n, np.array([0, 5], np.float32)), c(n, np.int32(4)), -1)
    out(n, oh.get_output(0))
    want = np.eye(4, dtype=np.float32)[[0, 3, 1]] * 5
    return n, {"i": np.array([0, 3, 1], np.int32)}, {"y": want}


@case
def topk_values_and_indices():
    n = new_network()
    x = n.add_input("x", trt.float32, X.shape)
    t = n.add_topk(x, trt.TopKOperation.MAX, 2, 1 << 2)
    out(n, t.get_output(0), "v")
    out(n, t.get_output(1), "i")
    assert t.get_output(1).dtype == trt.int32
    return n, {"x": X}, {"v": np.sort(X, -1)[..., ::-1][..., :2],
                         "i": np.argsort(-X, -1)[..., :2].astype(np.int32)}


@case
def non_zero():
    n = new_network()
    x = n.add_input("x", trt.float32, (2, 3))
    out(n, n.add_non_zero(x).get_output(0))
    xx = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    return n, {"x": xx}, {"y": np.array(np.nonzero(xx), np.int32)}


@case
def cumulative_reverse():
    n = new_network()
    x = n.add_input("x", trt.float32, X.shape)
    cu = n.add_cumulative(x, c(n, np.int32(2)), trt.CumulativeOperation.SUM, False, True)
    out(n, cu.get_output(0))
    return n, {"x": X}, {"y": np.flip(np.cumsum(np.flip(X, 2), 2), 2)}


@case
def squeeze_unsqueeze():
    n = new_network()
    x = n.add_input("x", trt.float32, X.shape)
    u = n.add_unsqueeze(x, c(n, np.array([0, 3], np.int32))).get_output(0)
    assert tuple(u.shape) == (1, 2, 3, 1, 4)
    out(n, n.add_squeeze(u, c(n, np.array([0], np.int64))).get_output(0))
    return n, {"x": X}, {"y": X[:, :, None]}


@case
def padding_pads_and_crops():
    n = new_network()
    x = n.add_input("x", trt.float32, X.shape)
    out(n, n.add_padding_nd(x, (1, -1), (0, 2)).get_output(0))
    return n, {"x": X}, {"y": np.pad(X[:, :, 1:], ((0, 0), (1, 0), (0, 2)))}


@case
def reverse_sequence():
    n = new_network()
    x = n.add_input("x", trt.float32, (4, 2, 3))
    out(n, n.add_reverse_sequence(x, c(n, np.array([2, 4], np.int32))).get_output(0))
    xr = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    want = xr.copy()
    want[:2, 0] = xr[:2, 0][::-1]
    want[:, 1] = xr[:, 1][::-1]
    return n, {"x": xr}, {"y": want}


@case
def einsum_matmul():
    n = new_network()
    a = n.add_input("a", trt.float32, (2, 3))
    b = n.add_input("b", trt.float32, (3, 4))
    out(n, n.add_einsum([a, b], "ij,jk->ik").get_output(0))
    av, bv = np.ones((2, 3), np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)
    return n, {"a": av, "b": bv}, {"y": av @ bv}


@case
def parametric_relu():
    n = new_network()
    x = n.add_input("x", trt.float32, X.shape)
    out(n, n.add_parametric_relu(x, c(n, np.full((1, 3, 1), 0.5, np.float32))).get_output(0))
    return n, {"x": X}, {"y": np.where(X >= 0, X, 0.5 * X)}


@case
def scale_channel():
    n = new_network()
    x = n.add_input("x", trt.float32, X4.shape)
    s = n.add_scale(x, trt.ScaleMode.CHANNEL, shift=np.array([1, 2, 3], np.float32),
                    scale=np.array([2, 2, 2], np.float32), power=None)
    out(n, s.get_output(0))
    return n, {"x": X4}, {"y": X4 * 2 + np.array([1, 2, 3], np.float32)[None, :, None, None]}


@case
def normalization_instance():
    n = new_network()
    x = n.add_input("x", trt.float32, X4.shape)
    nm = n.add_normalization(x, c(n, np.ones((1, 3, 1, 1), np.float32)),
                             c(n, np.zeros((1, 3, 1, 1), np.float32)), 0b1100)
    out(n, nm.get_output(0))
    mu, var = X4.mean((2, 3), keepdims=True), X4.var((2, 3), keepdims=True)
    return n, {"x": X4}, {"y": (X4 - mu) / np.sqrt(var + 1e-5)}


@case
def convolution_padded():
    n = new_network()
    x = n.add_input("x", trt.float32, X4.shape)
    cv = n.add_convolution_nd(x, 2, (3, 3), np.ones((2, 3, 3, 3), np.float32),
                              np.array([1, 2], np.float32))
    cv.padding_nd = (1, 1)
    out(n, cv.get_output(0))
    xp = np.pad(X4, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 2, 4, 4), np.float32)
    for o in range(2):
        for i in range(4):
            for j in range(4):
                want[0, o, i, j] = xp[0, :, i:i + 3, j:j + 3].sum() + (1, 2)[o]
    return n, {"x": X4}, {"y": want}


@case
def pooling_max():
    n = new_network()
    x = n.add_input("x", trt.float32, X4.shape)
    pl = n.add_pooling_nd(x, trt.PoolingType.MAX, (2, 2))
    pl.stride_nd = (2, 2)
    assert pl.type is trt.PoolingType.MAX
    out(n, pl.get_output(0))
    return n, {"x": X4}, {"y": X4.reshape(1, 3, 2, 2, 2, 2).max((3, 5))}


@case
def resize_nearest():
    n = new_network()
    x = n.add_input("x", trt.float32, X4.shape)
    rz = n.add_resize(x)
    rz.shape = (1, 3, 8, 8)
    out(n, rz.get_output(0))
    return n, {"x": X4}, {"y": X4.repeat(2, 2).repeat(2, 3)}


@case
def gather_element_mode():
    n = new_network()
    d = n.add_input("d", trt.float32, (3, 3))
    g = n.add_gather_v2(d, c(n, np.array([[2, 1, 0]], np.int32)), trt.GatherMode.ELEMENT)
    g.axis = 0
    out(n, g.get_output(0))
    return n, {"d": D}, {"y": np.take_along_axis(D, np.array([[2, 1, 0]]), 0)}


@case
def gather_nd_mode():
    n = new_network()
    d = n.add_input("d", trt.float32, (3, 3))
    g = n.add_gather_v2(d, c(n, np.array([[2, 1], [0, 0]], np.int32)), trt.GatherMode.ND)
    out(n, g.get_output(0))
    return n, {"d": D}, {"y": np.array([D[2, 1], D[0, 0]])}


@case
def gather_elementwise_dim():
    n = new_network()
    d = n.add_input("d", trt.float32, (3, 3))
    g = n.add_gather(d, c(n, np.array([[2, 0], [1, 1], [0, 2]], np.int32)), 1)
    g.num_elementwise_dims = 1
    out(n, g.get_output(0))
    return n, {"d": D}, {"y": np.array([[D[0, 2], D[0, 0]], [D[1, 1], D[1, 1]],
                                        [D[2, 0], D[2, 2]]])}


def _slice_mode(mode):
    n = new_network()
    x = n.add_input("x", trt.float32, (5,))
    sl = n.add_slice(x, [-2], [9], [1])
    sl.mode = getattr(trt.SampleMode, mode)
    out(n, sl.get_output(0))
    v = np.arange(5, dtype=np.float32) + 1
    idx = np.arange(-2, 7)
    inside = (idx >= 0) & (idx < 5)
    want = {"WRAP": v[idx % 5], "CLAMP": v[np.clip(idx, 0, 4)],
            "FILL": np.where(inside, v[np.clip(idx, 0, 4)], 0),
            "REFLECT": v[[2, 1, 0, 1, 2, 3, 4, 3, 2]]}[mode]
    return n, {"x": v}, {"y": want.astype(np.float32)}


for _m in ("WRAP", "CLAMP", "FILL", "REFLECT"):
    CASES[f"slice_{_m.lower()}"] = lambda m=_m: _slice_mode(m)


@case
def slice_axes_and_python_lists():
    """The slice example of ISliceLayer's docs with axes; lists set after creation."""
    n = new_network()
    x = n.add_input("x", trt.float32, (2, 3))
    sl = n.add_slice(x, trt.Dims([0]), trt.Dims([1]), trt.Dims([1]))
    sl.start, sl.shape, sl.stride, sl.axes = [1], [2], [1], [1]
    assert sl.start == (1,) and isinstance(sl.shape, trt.Dims)
    out(n, sl.get_output(0))
    xv = np.array([[0, 2, 4], [1, 3, 5]], np.float32)
    return n, {"x": xv}, {"y": np.array([[2, 4], [3, 5]], np.float32)}


@case
def grid_sample_bilinear():
    """Against hand-computed bilinear samples (align_corners off: -1 is the pixel's edge)."""
    n = new_network()
    x = n.add_input("x", trt.float32, (1, 1, 3, 3))
    g = n.add_input("g", trt.float32, (1, 1, 2, 2))
    out(n, n.add_grid_sample(x, g).get_output(0))
    xv = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    grid = np.array([[[[0.0, 0.0], [-1.0, -1.0]]]], np.float32)  # centre, top-left corner
    return n, {"x": xv, "g": grid}, {"y": np.array([[[[4.0, 0.0]]]], np.float32)}


@case
def assertion_passes():
    return _assertion(), {"x": np.ones(3, np.float32)}, {"y": np.ones(3, np.float32)}


def _assertion():
    n = new_network()
    x = n.add_input("x", trt.float32, (-1,))
    sh = n.add_shape(x).get_output(0)
    eq = n.add_elementwise(sh, c(n, np.array([3], np.int64)), trt.ElementWiseOperation.EQUAL)
    n.add_assertion(eq.get_output(0), "need length 3")
    out(n, n.add_identity(x).get_output(0))
    return n


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("engine", ["numpy", "onnxruntime"])
def test_layer(name, engine):
    net, feeds, want = CASES[name]()
    got = run_ort(net, feeds) if engine == "onnxruntime" else ig.load(net).run(feeds)
    for k, w in want.items():
        assert got[k].dtype == w.dtype, (k, got[k].dtype, w.dtype)
        np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("name", ["fill_dynamic_arange", "topk_values_and_indices",
                                  "slice_reflect", "gather_elementwise_dim"])
def test_layer_jax(name):
    net, feeds, want = CASES[name]()
    got = ig.load(net).run(feeds, backend="jax")
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("engine", ["numpy", "jax"])
def test_failed_assertion_names_its_message(engine):
    with pytest.raises(ig.ExecutionError, match="need length 3"):
        ig.load(_assertion()).run({"x": np.ones(4, np.float32)}, backend=engine)


def test_failed_assertion_in_onnxruntime():
    from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument

    with pytest.raises(InvalidArgument, match="need length 3"):
        run_ort(_assertion(), {"x": np.ones(4, np.float32)})


@pytest.mark.parametrize("op", [trt.FillOperation.RANDOM_UNIFORM, trt.FillOperation.RANDOM_NORMAL])
def test_random_fill_of_a_2d_shape(op):
    """add_fill with a random operation on a 2-D shape: alpha and beta are the bounds (the mean
    and deviation), scalars whatever the rank; the draws have the shape and lie in the range."""
    n = new_network()
    f = n.add_fill((64, 32), op)
    f.alpha, f.beta = 2.0, 3.0
    out(n, f.get_output(0))
    y = ig.load(n).run({}, backend="numpy")["y"]
    assert y.shape == (64, 32) and y.dtype == np.float32
    if op is trt.FillOperation.RANDOM_UNIFORM:
        assert 2.0 <= y.min() and y.max() <= 3.0 and abs(y.mean() - 2.5) < 0.05
    else:
        assert abs(y.mean() - 2.0) < 0.2 and abs(y.std() - 3.0) < 0.2
