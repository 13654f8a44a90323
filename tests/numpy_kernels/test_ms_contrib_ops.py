"""ONNX Runtime's ``com.microsoft`` quantization and fused operators (what ORT-quantized and
ORT-optimized models hold) on both backends, against ONNX Runtime (one thread); the model
written back to ONNX by ``ig.save`` re-run in ONNX Runtime, and written as OpenVINO IR
(standard ops, `frontends.onnx.contrib_expand`) run by OpenVINO's CPU plugin in f32.

Integer outputs must be equal; float outputs of integer products too (same float32 operations
as MLAS), except where MLAS's own approximations enter (sigmoid/tanh polynomials, float GEMM
summation order): those are compared with the tolerance named at the case.
ONNX Runtime's uint8 x int8 products saturate int16 pair sums on AVX2 CPUs without VNNI, so
int8 weights here stay within +-63 (no pair can saturate), as the ORT quantizer's
``reduce_range`` does.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from onnx_builders import run_ort

MS = "com.microsoft"
F, U8, I8, I32 = T.FLOAT, T.UINT8, T.INT8, T.INT32
NP = {U8: np.uint8, I8: np.int8, I32: np.int32, F: np.float32}
TO_T = {np.dtype(v): k for k, v in NP.items()}
rng = np.random.default_rng(7)


def ms_model(nodes, feeds: dict, consts: dict, outputs: list[str], opset: int = 17):
    """A model of `nodes` (com.microsoft 1 imported): `feeds` as graph inputs, `consts` as
    initializers, outputs with unknown type/shape left to inference by each runtime."""
    ins = [h.make_tensor_value_info(k, TO_T[np.asarray(v).dtype], list(np.shape(v)))
           for k, v in feeds.items()]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    outs = [h.make_value_info(o, h.make_empty_tensor_value_info(o).type) for o in outputs]
    g = h.make_graph(nodes, "g", ins, outs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset), h.make_opsetid(MS, 1)],
                        ir_version=8)


def run_ov(path, feeds):
    import openvino as ov

    c = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    r = c(feeds)
    return [np.asarray(r[o]) for o in c.outputs]


def check(m, feeds, tmp_path, atol=0.0, rtol=0.0, int_atol=0, ir=True, ir_int_atol=0):
    """Both backends against ONNX Runtime; the file ``ig.save`` writes re-run in ONNX
    Runtime against the original; with `ir`, the OpenVINO IR too (integer outputs within
    `ir_int_atol`). Returns the largest absolute difference seen."""
    want = run_ort(m, feeds)
    worst = 0.0
    for backend in ("numpy", "jax"):
        got = ig.load(m).run(feeds, backend=backend)
        assert list(got) == list(want)
        for k, w in want.items():
            g = np.asarray(got[k])
            assert g.shape == w.shape and g.dtype == w.dtype, (backend, k, g.shape, g.dtype)
            d = np.abs(g.astype(np.float64) - w.astype(np.float64))
            worst = max(worst, float(d.max()) if d.size else 0.0)
            if w.dtype.kind in "iu":
                assert d.max(initial=0) <= int_atol, (backend, k, d.max())
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{backend} {k}")
    path = tmp_path / "written.onnx"
    ig.load(m).save(path)
    written = onnx.load(path)
    assert any(o.domain == MS for o in written.opset_import)
    again = run_ort(written, feeds)
    for k, w in want.items():
        np.testing.assert_array_equal(again[k], w, err_msg=f"written {k}")
    if ir:
        xml = tmp_path / "written.xml"
        ig.load(m).save(xml)
        for (k, w), g in zip(want.items(), run_ov(xml, feeds)):
            assert g.shape == w.shape, (k, g.shape, w.shape)
            d = np.abs(g.astype(np.float64) - w.astype(np.float64))
            if w.dtype.kind in "iu":
                assert d.max(initial=0) <= ir_int_atol, ("ir", k, d.max())
            else:
                np.testing.assert_allclose(g, w, rtol=max(rtol, 1e-6), atol=max(atol, 1e-6),
                                           err_msg=f"ir {k}")
    return worst


def node(op, ins, outs, **attrs):
    return h.make_node(op, ins, outs, domain=MS, **attrs)


def u8(*shape):
    return rng.integers(0, 256, shape).astype(np.uint8)


def i8(*shape, lim=127):
    return rng.integers(-lim, lim + 1, shape).astype(np.int8)


def f(*shape, s=1.0):
    return (s * rng.standard_normal(shape)).astype(np.float32)


def sc(v):
    return np.array(v, np.float32)


# ---------------------------------------------------------------------------- quantize


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_dequantize(tmp_path, dt, per_axis):
    x = f(2, 3, 4, s=3.0)
    scale = sc([0.02, 0.05, 0.1]) if per_axis else sc(0.03)
    zp = (np.array([3, 0, 250], np.uint8) if dt == np.uint8 else np.array([-3, 0, 5], np.int8)) \
        if per_axis else np.array(7 if dt == np.uint8 else -7, dt)
    # values on and next to the rounding ties
    x.reshape(-1)[:6] = (np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.5]) * 0.03).astype(np.float32)
    m = ms_model([node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
                  node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)],
                 {"x": x}, {"s": scale, "z": zp}, ["q", "y"])
    assert check(m, {"x": x}, tmp_path) == 0


def test_dynamic_quantize_linear(tmp_path):
    x = f(3, 17, s=2.0)
    m = ms_model([h.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], {"x": x}, {},
                 ["y", "s", "z"])
    assert check(m, {"x": x}, tmp_path) == 0


# ---------------------------------------------------------------------------- integer matmuls


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("per_column", [False, True])
def test_dynamic_quantize_matmul(tmp_path, signed, per_column):
    a = f(2, 3, 16)
    b = i8(16, 5, lim=63) if signed else u8(16, 5)
    bs = sc(rng.uniform(0.01, 0.05, 5)) if per_column else sc([0.02])
    bz = np.zeros(5 if per_column else 1, np.int8) if signed else \
        (np.full(5, 128, np.uint8) if per_column else np.array([128], np.uint8))
    bias = f(5)
    m = ms_model([node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz", "bias"], ["y"])],
                 {"a": a}, {"b": b, "bs": bs, "bz": bz, "bias": bias}, ["y"])
    assert check(m, {"a": a}, tmp_path) == 0


def test_matmul_integer_to_float(tmp_path):
    a, b = u8(4, 8), i8(8, 3, lim=63)
    feeds = {"a": a}
    m = ms_model([node("MatMulIntegerToFloat", ["a", "b", "as", "bs", "az", "bz", "bias"],
                       ["y"])], feeds,
                 {"b": b, "as": sc(0.05), "bs": sc(0.01), "az": np.array(120, np.uint8),
                  "bz": np.array(0, np.int8), "bias": f(3)}, ["y"])
    assert check(m, feeds, tmp_path) == 0


@pytest.mark.parametrize("per_column", [False, True])
def test_standard_integer_ops(tmp_path, per_column):
    """ONNX's own MatMulInteger / ConvInteger / DynamicQuantizeLinear, as ORT's dynamic
    quantizer writes them (itergraph's kernels and lowerings, not onnx.reference's)."""
    a, b = u8(2, 3, 6), u8(6, 4)
    x, w = u8(1, 2, 7, 5), u8(3, 2, 3, 3)
    feeds = {"a": a, "x": x, "f": f(3, 9)}
    bz = np.array([128, 3, 250, 7], np.uint8) if per_column else np.array(128, np.uint8)
    m = ms_model([h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["mm"]),
                  h.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["cv"], pads=[1, 2, 1, 0],
                              strides=[2, 1]),
                  h.make_node("DynamicQuantizeLinear", ["f"], ["q", "qs", "qz"])],
                 feeds, {"b": b, "az": np.array(3, np.uint8), "bz": bz,
                         "xz": np.array(9, np.uint8), "w": w, "wz": np.array(100, np.uint8)},
                 ["mm", "cv", "q", "qs", "qz"])
    assert check(m, feeds, tmp_path) == 0


# ---------------------------------------------------------------------------- QLinear elementwise


def _qparams(dt):
    if dt == np.uint8:
        return [sc(0.031), np.array(120, dt), sc(0.017), np.array(131, dt), sc(0.045),
                np.array(127, dt)]
    return [sc(0.031), np.array(-8, dt), sc(0.017), np.array(3, dt), sc(0.045),
            np.array(0, dt)]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [((2, 3, 5, 7), (2, 3, 5, 7)), ((2, 3, 5, 7), ()),
                                    ((), (3, 37)), ((2, 3, 5, 7), (1, 3, 1, 1)),
                                    ((4, 1), (1, 33))])
def test_qlinear_binary(tmp_path, op, dt, shapes):
    lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
    a = rng.integers(lo, hi, shapes[0]).astype(dt)
    b = rng.integers(lo, hi, shapes[1]).astype(dt)
    sa, za, sb, zb, sc_, zc = _qparams(dt)
    feeds = {"a": a, "b": b}
    m = ms_model([node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"])], feeds,
                 {"sa": sa, "za": za, "sb": sb, "zb": zb, "sc": sc_, "zc": zc}, ["c"])
    assert check(m, feeds, tmp_path) == 0


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
def test_qlinear_lookup(tmp_path, op, dt):
    lo = 0 if dt == np.uint8 else -128
    x = np.arange(lo, lo + 256).astype(dt).reshape(4, 64)
    sx, zx, _, _, sy, zy = _qparams(dt)
    if op == "QLinearSigmoid":
        sy = sc(1 / 256)
        zy = np.array(0 if dt == np.uint8 else -128, dt)
    attrs = {"alpha": 0.1} if op == "QLinearLeakyRelu" else {}
    m = ms_model([node(op, ["x", "sx", "zx", "sy", "zy"], ["y"], **attrs)], {"x": x},
                 {"sx": sx, "zx": zx, "sy": sy, "zy": zy}, ["y"])
    assert check(m, {"x": x}, tmp_path) == 0


def test_qlinear_lookup_of_an_untyped_input(tmp_path):
    """A QLinearLeakyRelu after a MaxPool of a QLinearAdd (quantize_static's QOperator CNNs):
    nothing types the MaxPool's output; the IR's lookup table takes the 8-bit type from the
    zero point (it failed with an AttributeError)."""
    x = np.arange(0, 256).astype(np.uint8).reshape(1, 4, 8, 8)
    sx, zx, _, _, sy, zy = _qparams(np.uint8)
    nodes = [node("QLinearAdd", ["x", "sx", "zx", "x", "sx", "zx", "sy", "zy"], ["a"]),
             h.make_node("MaxPool", ["a"], ["p"], kernel_shape=[2, 2]),
             node("QLinearLeakyRelu", ["p", "sy", "zy", "sx", "zx"], ["y"], alpha=0.1)]
    m = ms_model(nodes, {"x": x}, {"sx": sx, "zx": zx, "sy": sy, "zy": zy}, ["y"])
    assert check(m, {"x": x}, tmp_path) == 0


@pytest.mark.parametrize("seed", [0, 10, 11])  # inputs with near-tie requantizations
def test_qlinear_concat(tmp_path, seed):
    r = np.random.default_rng(seed)
    xs = [r.integers(0, 256, s).astype(np.uint8) for s in ((2, 3, 4), (2, 5, 4), (2, 1, 4))]
    feeds = {f"x{i}": x for i, x in enumerate(xs)}
    consts = {"sy": sc(0.05), "zy": np.array(128, np.uint8),
              "s0": sc(0.05), "z0": np.array(128, np.uint8),  # the output's: copied
              "s1": sc(0.021), "z1": np.array(100, np.uint8),
              "s2": sc(0.13), "z2": np.array(140, np.uint8)}
    ins = ["sy", "zy"] + [n for i in range(3) for n in (f"x{i}", f"s{i}", f"z{i}")]
    m = ms_model([node("QLinearConcat", ins, ["y"], axis=1)], feeds, consts, ["y"])
    assert check(m, feeds, tmp_path) == 0


# ---------------------------------------------------------------------------- QLinear pools


@pytest.mark.parametrize("attrs", [dict(kernel_shape=[3, 3]),
                                   dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
                                   dict(kernel_shape=[2, 3], pads=[1, 0, 1, 2],
                                        count_include_pad=1, ceil_mode=1, strides=[2, 2])])
def test_qlinear_average_pool(tmp_path, attrs):
    x = u8(1, 3, 8, 9)
    m = ms_model([node("QLinearAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"], **attrs)],
                 {"x": x}, {"sx": sc(0.02), "zx": np.array(128, np.uint8), "sy": sc(0.015),
                            "zy": np.array(120, np.uint8)}, ["y"])
    assert check(m, {"x": x}, tmp_path) == 0


@pytest.mark.parametrize("nhwc", [0, 1])
@pytest.mark.parametrize("dt", [np.uint8, np.int8])
def test_qlinear_global_average_pool(tmp_path, nhwc, dt):
    lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
    x = rng.integers(lo, hi, (2, 5, 7, 6)).astype(dt)
    zx, zy = (np.array(128, dt), np.array(100, dt)) if dt == np.uint8 else \
        (np.array(-3, dt), np.array(4, dt))
    m = ms_model([node("QLinearGlobalAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"],
                       channels_last=nhwc)],
                 {"x": x}, {"sx": sc(0.02), "zx": zx, "sy": sc(0.011), "zy": zy}, ["y"])
    assert check(m, {"x": x}, tmp_path) == 0


# ---------------------------------------------------------------------------- QGemm


@pytest.mark.parametrize("quantized_out", [False, True])
@pytest.mark.parametrize("trans", [(0, 0), (1, 1)])
def test_qgemm(tmp_path, quantized_out, trans):
    ta, tb = trans
    a = u8(*((8, 3) if ta else (3, 8)))
    b = i8(*((4, 8) if tb else (8, 4)), lim=63)
    c = rng.integers(-500, 500, (4,)).astype(np.int32)
    consts = {"b": b, "as": sc(0.04), "az": np.array(113, np.uint8), "bs": sc(0.02),
              "bz": np.array(0, np.int8), "c": c}
    ins = ["a", "as", "az", "b", "bs", "bz", "c"]
    if quantized_out:
        consts.update(ys=sc(0.3), yz=np.array(128, np.uint8))
        ins += ["ys", "yz"]
    m = ms_model([node("QGemm", ins, ["y"], transA=ta, transB=tb, alpha=1.5)], {"a": a},
                 consts, ["y"])
    assert check(m, {"a": a}, tmp_path) == 0


# ---------------------------------------------------------------------------- fused float ops


@pytest.mark.parametrize("attrs,sa,sb", [
    (dict(alpha=0.5), (3, 4), (4, 5)),
    (dict(transA=1, transB=1), (2, 4, 3), (5, 4)),
    (dict(transBatchA=1), (3, 2, 4), (2, 4, 5)),
    (dict(transBatchB=1, transB=1), (2, 3, 4), (5, 2, 4)),
    (dict(transBatchA=1, transA=1, alpha=2.0), (4, 2, 3, 6), (2, 3, 4, 5)),
    (dict(), (4,), (2, 4, 3)),
])
def test_fused_matmul(tmp_path, attrs, sa, sb):
    a, b = f(*sa), f(*sb)
    m = ms_model([node("FusedMatMul", ["a", "b"], ["y"], **attrs)], {"a": a, "b": b}, {},
                 ["y"])
    check(m, {"a": a, "b": b}, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act", [("Relu", {}), ("LeakyRelu", dict(activation_alpha=0.2)),
                                 ("Sigmoid", {}), ("Tanh", {}),
                                 ("HardSigmoid", dict(activation_alpha=0.3,
                                                      activation_beta=0.4))])
def test_fused_gemm(tmp_path, act):
    a, b, c = f(3, 4), f(5, 4), f(5)
    attrs = dict(transB=1, alpha=0.7, beta=1.3)
    if act:
        attrs.update(activation=act[0], **act[1])
    m = ms_model([node("FusedGemm", ["a", "b", "c"], ["y"], **attrs)], {"a": a, "b": b, "c": c},
                 {}, ["y"])
    check(m, {"a": a, "b": b, "c": c}, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act,params,with_z", [("Relu", None, False), ("Relu", None, True),
                                               ("LeakyRelu", [0.1], False),
                                               ("Clip", [-0.5, 0.5], False),
                                               ("HardSigmoid", [0.25, 0.5], False),
                                               ("Sigmoid", None, True), ("Tanh", None, False)])
def test_fused_conv(tmp_path, act, params, with_z):
    x, w, b = f(1, 2, 6, 6), f(4, 2, 3, 3), f(4)
    feeds = {"x": x, "w": w, "b": b}
    ins = ["x", "w", "b"]
    if with_z:
        feeds["z"] = f(1, 4, 6, 6)
        ins.append("z")
    attrs = dict(activation=act, pads=[1, 1, 1, 1])
    if params:
        attrs["activation_params"] = params
    m = ms_model([node("FusedConv", ins, ["y"], **attrs)], feeds, {}, ["y"])
    check(m, feeds, tmp_path, rtol=1e-5, atol=1e-5)


def test_explain_and_ir_refusal_name_the_lstm(tmp_path):
    """DynamicQuantizeLSTM compiles on the JAX backend (its sequence_lens, scales and zero
    points are constants), and ``explain`` says so; with ``sequence_lens`` the OpenVINO
    writer refuses it by name."""
    H = 2
    consts = {"W": i8(1, 3, 4 * H, lim=63), "R": i8(1, H, 4 * H, lim=63), "ws": sc([0.01]),
              "wz": np.zeros(1, np.int8), "rs": sc([0.02]), "rz": np.zeros(1, np.int8),
              "lens": np.array([4], np.int32)}
    x = f(4, 1, 3)
    m = ms_model([node("DynamicQuantizeLSTM", ["x", "W", "R", "", "lens", "", "", "", "ws",
                                               "wz", "rs", "rz"], ["Y"], hidden_size=H,
                       name="qlstm")],
                 {"x": x}, consts, ["Y"])
    text = ig.load(m).explain("jax")
    assert "[xla] DynamicQuantizeLSTM node 'qlstm': compiles with XLA" in text
    want = run_ort(m, {"x": x})["Y"]
    np.testing.assert_allclose(ig.load(m).run({"x": x}, backend="jax")["Y"], want, atol=1e-6)
    with pytest.raises(ig.UnsupportedError, match="qlstm.*sequence_lens"):
        ig.load(m).save(tmp_path / "m.xml")


def test_unsupported_activation_names_node(tmp_path):
    a, b = f(2, 3), f(3, 2)
    m = ms_model([node("FusedGemm", ["a", "b"], ["y"], activation="Gelu", name="fg")],
                 {"a": a, "b": b}, {}, ["y"])
    with pytest.raises(ig.UnsupportedError, match="fg.*Gelu"):
        ig.load(m).run({"a": a, "b": b}, backend="numpy")


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("form", ["full", "outer"])
@pytest.mark.parametrize("seed", [0, 1])
def test_qlinear_binary_every_pair(tmp_path, op, dt, form, seed):
    """Every pair of codes: both full (MLAS's vector-vector kernel), or as a column and a row
    (MLAS's scalar-vector runs); the products land next to rounding ties often."""
    lo = 0 if dt == np.uint8 else -128
    codes = np.arange(lo, lo + 256).astype(dt)
    if form == "full":
        a, b = np.repeat(codes, 256).reshape(256, 256), np.tile(codes, 256).reshape(256, 256)
    else:
        a, b = codes.reshape(256, 1), codes.reshape(1, 256)
    r = np.random.default_rng(seed)
    sa, sb, sc_ = (sc(v) for v in r.uniform(0.001, 0.1, 3))
    za, zb, zc = (np.array(v, dt) for v in r.integers(lo, lo + 256, 3))
    feeds = {"a": a, "b": b}
    m = ms_model([node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"])], feeds,
                 {"sa": sa, "za": za, "sb": sb, "zb": zb, "sc": sc_, "zc": zc}, ["c"])
    assert check(m, feeds, tmp_path) == 0


# ---------------------------------------------------------------------------- DynamicQuantizeLSTM


@pytest.mark.parametrize("direction,batch,signed,per_channel,extras", [
    ("forward", 1, True, False, False),
    ("forward", 3, True, True, True),
    ("reverse", 2, False, False, True),
    ("bidirectional", 1, True, True, False),
    ("bidirectional", 3, False, True, True),
])
def test_dynamic_quantize_lstm(tmp_path, direction, batch, signed, per_channel, extras):
    """Against ONNX Runtime with one thread (it quantizes the hidden state of the whole batch
    at once then). Its sigmoid/tanh are MLAS polynomials, a few ulps from NumPy's: outputs
    agree within 4e-7 here; a hidden value within an ulp of a quantization tie could take the
    neighbouring code, which would move later steps by about one step of R's product."""
    seq, inp, H = 6, 5, 4
    dirs = 2 if direction == "bidirectional" else 1
    cols = (dirs, 4 * H) if per_channel else (dirs,)
    if signed:
        w, r = i8(dirs, inp, 4 * H, lim=63), i8(dirs, H, 4 * H, lim=63)
        wz, rz = np.zeros(cols, np.int8), np.zeros(cols, np.int8)
    else:
        w, r = u8(dirs, inp, 4 * H), u8(dirs, H, 4 * H)
        wz, rz = np.full(cols, 128, np.uint8), np.full(cols, 120, np.uint8)
    ws = sc(rng.uniform(0.005, 0.02, cols))
    rs = sc(rng.uniform(0.005, 0.02, cols))
    x = f(seq, batch, inp)
    consts = {"W": w, "R": r, "B": f(dirs, 8 * H, s=0.2), "ws": ws, "wz": wz, "rs": rs,
              "rz": rz}
    names = ["x", "W", "R", "B", "", "", "", "", "ws", "wz", "rs", "rz"]
    feeds = {"x": x}
    if extras:
        feeds.update(h0=f(dirs, batch, H, s=0.5), c0=f(dirs, batch, H, s=0.5))
        consts["P"] = f(dirs, 3 * H, s=0.3)
        names[5:8] = ["h0", "c0", "P"]
    m = ms_model([node("DynamicQuantizeLSTM", names, ["Y", "Y_h", "Y_c"], hidden_size=H,
                       direction=direction)], feeds, consts, ["Y", "Y_h", "Y_c"])
    check(m, feeds, tmp_path, atol=1e-5, rtol=1e-5)
