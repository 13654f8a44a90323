"""ONNX Trilu, Hardmax, EyeLike, LpNormalization, LpPool, InstanceNormalization, Scatter,
Upsample and ArgMax/ArgMin with ``select_last_index=1`` -> itergraph IR -> OpenVINO IR
(itergraph's writer, `ops/basic/write_masks.py`), run by OpenVINO's CPU plugin.

Each model is one node built with onnx.helper; the oracle is ONNX Runtime. Where the op
allows, the inputs are declared with symbolic dims, so that the written IR computes its masks
and windows from shapes known only at run time.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper
from onnx import helper as h
from ov_helpers import assert_close, run_ov

import itergraph as ig
from itergraph.errors import UnsupportedError

F, D, I32, I64, B = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32,
                     TensorProto.INT64, TensorProto.BOOL)
_NP = {F: np.float32, D: np.float64, I32: np.int32, I64: np.int64, B: np.bool_}
rng = np.random.default_rng(23)


def _dims(shape, dynamic: bool):
    """`shape`, or symbolic dims of the same rank where `dynamic`."""
    return [f"d{i}" for i in range(len(shape))] if dynamic else list(shape)


def _model(node, inputs, opset, inits=(), out_elem=F):
    """One-node model; `inputs` are ``(name, elem, dims)``."""
    g = h.make_graph([node], "g", [h.make_tensor_value_info(n, e, d) for n, e, d in inputs],
                     [h.make_tensor_value_info(o, out_elem, None) for o in node.output],
                     [numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    return m


def _check(m, feeds, tmp_path, rtol=1e-5, atol=1e-5):
    """ONNX Runtime on `m` vs OpenVINO on itergraph's IR of `m`: shapes, types, values."""
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    got = run_ov(xml, feeds)
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype, f"output {i}: {a.dtype} != {b.dtype}"
        assert_close(a, b, rtol, atol, f"OpenVINO on itergraph's IR, output {i}")
    return want


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _ties(*shape, levels=3):
    """Floats drawn from a few values, so that every row has ties."""
    return rng.integers(0, levels, shape).astype(np.float32)


# -- Trilu -------------------------------------------------------------------------------------

@pytest.mark.parametrize("upper", [1, 0])
@pytest.mark.parametrize("k", [None, 0, 1, 3, -1, -2, -9, 9])
@pytest.mark.parametrize("shape", [(4, 6), (6, 3), (2, 3, 4, 5)])
def test_trilu(upper, k, shape, tmp_path):
    dyn = shape == (6, 3) or len(shape) == 4
    ins = ["x"] if k is None else ["x", "k"]
    node = h.make_node("Trilu", ins, ["y"], upper=upper)
    inputs = [("x", F, _dims(shape, dyn))] + ([] if k is None else [("k", I64, [])])
    feeds = {"x": _f(*shape)} | ({} if k is None else {"k": np.array(k, np.int64)})
    _check(_model(node, inputs, 14), feeds, tmp_path)


@pytest.mark.parametrize("elem", [I64, F])
@pytest.mark.parametrize("upper", [1, 0])
def test_trilu_constant_k_and_types(elem, upper, tmp_path):
    node = h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)
    x = (rng.integers(-9, 9, (3, 5, 5))).astype(_NP[elem])
    m = _model(node, [("x", elem, ["b", 5, 5])], 14, [("k", np.array(-1, np.int64))],
               out_elem=elem)
    _check(m, {"x": x}, tmp_path)


@pytest.mark.parametrize("shape", [(3, 0, 5), (0, 4), (4, 0)])
@pytest.mark.parametrize("dynamic", [False, True])
def test_trilu_empty(shape, dynamic, tmp_path):
    node = h.make_node("Trilu", ["x"], ["y"], upper=0)
    _check(_model(node, [("x", F, _dims(shape, dynamic))], 14), {"x": _f(*shape)}, tmp_path)


# -- Hardmax -----------------------------------------------------------------------------------

@pytest.mark.parametrize("opset,axis", [(13, None), (13, 0), (13, 1), (13, -2), (11, None),
                                        (11, 0), (11, 2), (11, -1), (11, -2), (11, -3),
                                        (9, None), (9, 1)])
@pytest.mark.parametrize("dynamic", [False, True])
def test_hardmax_ties_pick_the_first(opset, axis, dynamic, tmp_path):
    kw = {} if axis is None else {"axis": axis}
    node = h.make_node("Hardmax", ["x"], ["y"], **kw)
    shape = (2, 3, 4)
    x = _ties(*shape)
    _check(_model(node, [("x", F, _dims(shape, dynamic))], opset), {"x": x}, tmp_path)


def test_hardmax_random(tmp_path):
    node = h.make_node("Hardmax", ["x"], ["y"], axis=1)
    _check(_model(node, [("x", F, ["n", "c", 5])], 13), {"x": _f(3, 7, 5)}, tmp_path)


# -- EyeLike -----------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, -2, 4, -9])
@pytest.mark.parametrize("shape", [(3, 4), (5, 2), (3, 3)])
@pytest.mark.parametrize("dynamic", [False, True])
def test_eye_like(k, shape, dynamic, tmp_path):
    node = h.make_node("EyeLike", ["x"], ["y"], k=k)
    _check(_model(node, [("x", F, _dims(shape, dynamic))], 9), {"x": _f(*shape)}, tmp_path)


@pytest.mark.parametrize("in_elem,dtype", [(F, I32), (F, I64), (I32, F), (I64, None),
                                           (I32, None), (F, D), (D, None)])
def test_eye_like_types(in_elem, dtype, tmp_path):
    kw = {} if dtype is None else {"dtype": dtype}
    node = h.make_node("EyeLike", ["x"], ["y"], k=1, **kw)
    out = in_elem if dtype is None else dtype
    m = _model(node, [("x", in_elem, ["r", "c"])], 9, out_elem=out)
    _check(m, {"x": np.zeros((4, 3), _NP[in_elem])}, tmp_path)


# -- LpNormalization ---------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [None, 0, 1, -2])
@pytest.mark.parametrize("dynamic", [False, True])
def test_lp_normalization(p, axis, dynamic, tmp_path):
    kw = {} if axis is None else {"axis": axis}
    node = h.make_node("LpNormalization", ["x"], ["y"], p=p, **kw)
    x = _f(3, 4, 5)
    x[1, :, 2] = 0  # a zero vector along axis 1
    x[2, 3, :] = 0  # and along the last axis
    x[:, 1, 1] = 0  # and along the first
    _check(_model(node, [("x", F, _dims(x.shape, dynamic))], 17), {"x": x}, tmp_path)


def test_lp_normalization_p3_is_refused(tmp_path):
    node = h.make_node("LpNormalization", ["x"], ["y"], p=3, name="norm3")
    m = _model(node, [("x", F, [2, 3])], 1)
    with pytest.raises(UnsupportedError, match="LpNormalization node 'norm3'"):
        ig.load(m).save(tmp_path / "m.xml")


# -- LpPool ------------------------------------------------------------------------------------

_LP_POOL = {
    "2d": dict(kernel_shape=[3, 3]),
    "2d_p1": dict(kernel_shape=[2, 2], p=1),
    "2d_p3": dict(kernel_shape=[2, 3], p=3),
    "2d_strides": dict(kernel_shape=[2, 2], strides=[2, 3]),
    "2d_pads": dict(kernel_shape=[3, 2], pads=[1, 0, 2, 1]),
    "2d_same_upper": dict(kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    "2d_same_lower": dict(kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_LOWER"),
    "2d_valid": dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="VALID"),
    "2d_dilations": dict(kernel_shape=[2, 2], dilations=[2, 3]),
    "2d_dilations_pads_strides": dict(kernel_shape=[2, 2], dilations=[2, 1], strides=[2, 2],
                                      pads=[1, 1, 1, 0]),
    "2d_ceil": dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
    "2d_ceil_pads": dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 2, 1], ceil_mode=1),
    "2d_ceil_dropped": dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1],
                            ceil_mode=1),
    "2d_ceil_valid": dict(kernel_shape=[2, 3], strides=[2, 2], auto_pad="VALID", ceil_mode=1),
    "2d_ceil_same": dict(kernel_shape=[1, 2], strides=[3, 3], auto_pad="SAME_UPPER",
                         ceil_mode=1),
    "2d_ceil_dilations": dict(kernel_shape=[2, 2], strides=[2, 3], dilations=[2, 2],
                              ceil_mode=1),
    "1d": dict(kernel_shape=[3], strides=[2], pads=[1, 1]),
    "1d_ceil": dict(kernel_shape=[2], strides=[2], ceil_mode=1),
    "1d_ceil_crop": dict(kernel_shape=[2], strides=[4], ceil_mode=1),  # a window dropped
    "3d": dict(kernel_shape=[2, 2, 2], pads=[0, 1, 0, 1, 0, 1]),
}
_LP_SHAPES = {1: (2, 3, 7), 2: (2, 3, 7, 8), 3: (1, 2, 4, 5, 3)}


@pytest.mark.parametrize("name", list(_LP_POOL))
@pytest.mark.parametrize("dynamic", [False, True])
def test_lp_pool(name, dynamic, tmp_path):
    attrs = dict(_LP_POOL[name])
    shape = _LP_SHAPES[len(attrs["kernel_shape"])]
    node = h.make_node("LpPool", ["x"], ["y"], **attrs)
    m = _model(node, [("x", F, _dims(shape, dynamic))], 18)
    _check(m, {"x": _f(*shape)}, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [2, 11])
def test_lp_pool_older_opsets(opset, tmp_path):
    node = h.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[1, 2], p=3,
                       pads=[0, 1, 1, 0])
    m = _model(node, [("x", F, ["n", 2, "h", "w"])], opset)
    _check(m, {"x": _f(2, 2, 5, 6)}, tmp_path, rtol=1e-4, atol=1e-5)


# -- InstanceNormalization ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 4, 2)])
@pytest.mark.parametrize("epsilon", [None, 1e-2])
@pytest.mark.parametrize("dynamic", [False, True])
def test_instance_normalization(shape, epsilon, dynamic, tmp_path):
    kw = {} if epsilon is None else {"epsilon": epsilon}
    node = h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], **kw)
    c = shape[1]
    dims = _dims(shape, dynamic)
    dims[1] = c if not dynamic else "c"
    m = _model(node, [("x", F, dims), ("s", F, [dims[1]]), ("b", F, [dims[1]])], 17)
    feeds = {"x": _f(*shape) * 3 + 1, "s": _f(c), "b": _f(c)}
    _check(m, feeds, tmp_path, rtol=1e-4, atol=1e-4)


# -- Scatter -----------------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [9, 10])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dynamic", [False, True])
def test_scatter(opset, axis, dynamic, tmp_path):
    kw = {} if axis is None else {"axis": axis}
    node = h.make_node("Scatter", ["x", "i", "u"], ["y"], **kw)
    x = _f(4, 5)
    ax = 0 if axis is None else axis % 2
    ishape = [3, 2] if ax == 0 else [4, 3]
    # distinct indices along the axis: duplicates leave the written order undefined
    idx = np.stack([rng.permutation(x.shape[ax])[:ishape[ax]]
                    for _ in range(ishape[1 - ax])], axis=1 - ax).astype(np.int64)
    m = _model(node, [("x", F, _dims(x.shape, dynamic)), ("i", I64, _dims(ishape, dynamic)),
                      ("u", F, _dims(ishape, dynamic))], opset)
    _check(m, {"x": x, "i": idx, "u": _f(*ishape)}, tmp_path)


# -- Upsample ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 2, 3], [1, 1, 1.5, 2.5],
                                    [1, 1, 3, 1]])
@pytest.mark.parametrize("dynamic", [False, True])
def test_upsample7(mode, scales, dynamic, tmp_path):
    node = h.make_node("Upsample", ["x"], ["y"], mode=mode, scales=[float(s) for s in scales])
    shape = (2, 3, 3, 4)
    _check(_model(node, [("x", F, _dims(shape, dynamic))], 7), {"x": _f(*shape)}, tmp_path)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales_input", [False, True])
@pytest.mark.parametrize("dynamic", [False, True])
def test_upsample9(mode, scales_input, dynamic, tmp_path):
    node = h.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
    shape = (1, 2, 3, 4)
    scales = np.array([1, 1, 2, 1.5], np.float32)
    inputs = [("x", F, _dims(shape, dynamic))]
    feeds = {"x": _f(*shape)}
    if scales_input:
        inputs.append(("s", F, [4]))
        feeds["s"] = scales
        inits = ()
    else:
        inits = [("s", scales)]
    _check(_model(node, inputs, 9, inits), feeds, tmp_path)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("opset", [7, 9])
@pytest.mark.parametrize("dynamic", [False, True])
def test_upsample_size_a_hair_under_an_integer(mode, opset, dynamic, tmp_path):
    """25 * 1.5999994 is 39.99998 in f32: ONNX Runtime makes 39 rows, OpenVINO's Interpolate
    40 (cut back to 39)."""
    scales = np.array([1, 1, 1.5999994, 2.079999], np.float32)
    shape = (1, 2, 25, 25)
    inputs = [("x", F, _dims(shape, dynamic))]
    feeds = {"x": _f(*shape)}
    if opset == 7:
        node = h.make_node("Upsample", ["x"], ["y"], mode=mode, scales=scales.tolist())
    else:
        node = h.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
        inputs.append(("s", F, [4]))
        feeds["s"] = scales
    want = _check(_model(node, inputs, opset), feeds, tmp_path)
    assert want[0].shape == (1, 2, 39, 51)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_2d_input(mode, tmp_path):
    node = h.make_node("Upsample", ["x"], ["y"], mode=mode, scales=[2.0, 3.0])
    _check(_model(node, [("x", F, ["a", "b"])], 7), {"x": _f(3, 4)}, tmp_path)


def test_upsample_nearest_int32(tmp_path):
    node = h.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 3.0])
    x = rng.integers(-50, 50, (1, 2, 3, 3)).astype(np.int32)
    _check(_model(node, [("x", I32, [1, 2, 3, 3])], 7, out_elem=I32), {"x": x}, tmp_path)


# -- ArgMax / ArgMin ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("dynamic", [False, True])
def test_arg_select_last_index_ties(op, last, axis, keepdims, dynamic, tmp_path):
    node = h.make_node(op, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last)
    x = _ties(3, 4, 5)
    m = _model(node, [("x", F, _dims(x.shape, dynamic))], 12, out_elem=I64)
    _check(m, {"x": x}, tmp_path)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_select_last_index_random_int(op, tmp_path):
    node = h.make_node(op, ["x"], ["y"], axis=1, select_last_index=1)
    x = rng.integers(0, 4, (6, 7)).astype(np.int32)
    _check(_model(node, [("x", I32, ["a", "b"])], 13, out_elem=I64), {"x": x}, tmp_path)


# -- edges -------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [-2 ** 62, 2 ** 40 + 1, -2 ** 31 - 1, 2 ** 31])
@pytest.mark.parametrize("upper", [1, 0])
@pytest.mark.parametrize("const_k", [False, True])
def test_trilu_k_beyond_int32(k, upper, const_k, tmp_path):
    """OpenVINO's CPU plugin computes i64 in i32: a k outside it must not wrap."""
    node = h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)
    x = _f(4, 3)
    if const_k:
        m = _model(node, [("x", F, ["a", 3])], 14, [("k", np.array(k, np.int64))])
        feeds = {"x": x}
    else:
        m = _model(node, [("x", F, ["a", 3]), ("k", I64, [])], 14)
        feeds = {"x": x, "k": np.array(k, np.int64)}
    _check(m, feeds, tmp_path)


@pytest.mark.parametrize("opset", [11, 13])
def test_hardmax_1d(opset, tmp_path):
    node = h.make_node("Hardmax", ["x"], ["y"], axis=0)
    x = np.array([1, 3, 3, 2, -1], np.float32)
    _check(_model(node, [("x", F, ["a"])], opset), {"x": x}, tmp_path)


@pytest.mark.parametrize("dtype", [B, TensorProto.INT8, TensorProto.FLOAT16, TensorProto.UINT16])
@pytest.mark.parametrize("k", [0, -1, 2 ** 33])
def test_eye_like_types_onnx_runtime_lacks(dtype, k, tmp_path):
    """Output types ONNX Runtime's EyeLike does not implement: NumPy's ``eye`` is the oracle."""
    node = h.make_node("EyeLike", ["x"], ["y"], dtype=dtype, k=k)
    m = _model(node, [("x", F, ["a", "b"])], 9, out_elem=dtype)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    want = np.eye(3, 4, k, dtype=h.tensor_dtype_to_np_dtype(dtype))
    got = run_ov(xml, {"x": np.zeros((3, 4), np.float32)})[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)

