"""ONNX quantization ops written to OpenVINO IR (`frontends/openvino/export_quant_onnx.py`):
small ONNX models built with onnx.helper, loaded with ``ig.load`` and saved as IR, run by
OpenVINO's CPU plugin and compared with ONNX Runtime, exactly on integer outputs.

The inputs sit on and next to the rounding ties (``(k + 0.5) * scale`` and its float
neighbours), where a quotient taken as a product with the reciprocal, as OpenVINO's ``Divide``
computes it, rounds the other way. ONNX Runtime's uint8 x int8 integer products saturate on CPUs
without VNNI (AVX2); for those the exact product computed here with NumPy is the oracle (and
ONNX Runtime is checked against it only where its arithmetic is exact)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from ov_helpers import run_ov

import itergraph as ig

rng = np.random.default_rng(31)
F, F16 = T.FLOAT, T.FLOAT16
NP = {T.UINT8: np.uint8, T.INT8: np.int8, T.UINT16: np.uint16, T.INT16: np.int16,
      T.INT32: np.int32, F: np.float32, F16: np.float16}


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, inits=(), opset=21):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    ir = 10 if opset <= 21 else 11
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)
    onnx.checker.check_model(m)
    return m


def _ort(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def _ov(m, feeds, tmp_path):
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    return run_ov(xml, feeds)


def _same(got, want, what=""):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, f"{what} output {i}"
        if b.dtype.kind in "iub":
            np.testing.assert_array_equal(a, b, err_msg=f"{what} output {i}")
        else:
            # float outputs: a few ulps (OpenVINO may fuse (x - zp) * s otherwise than ORT)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7, err_msg=f"{what} output {i}")


def _inputs(values: dict, types: dict, const: set):
    """(graph inputs, initializers, feeds) for named values; those in `const` as
    initializers."""
    ins, inits, feeds = [], [], {}
    for name, v in values.items():
        v = np.asarray(v)
        if name in const:
            inits.append(numpy_helper.from_array(v, name))
        else:
            ins.append(_vi(name, types[name], list(v.shape)))
            feeds[name] = v
    return ins, inits, feeds


def _ties(scale, zp, lo, hi, n):
    """f32 values whose quotient by `scale` lies on or next to half-integers over the output
    range, some beyond it, and some ordinary ones."""
    k = rng.integers(lo - int(zp) - 3, hi - int(zp) + 3, n).astype(np.float64)
    x = ((k + 0.5) * np.float64(scale)).astype(np.float32)
    step = rng.choice([-1, 0, 1], n).astype(np.float32)
    x = np.nextafter(x, x + step).astype(np.float32)
    x[::5] = (rng.standard_normal(len(x[::5])) * float(scale) * (hi - lo) / 3).astype(np.float32)
    return x


# -- QuantizeLinear ---------------------------------------------------------------------------
_QL_CASES = [
    # opset, output type, granularity, zero point, scale (and zero point) a constant
    (10, T.UINT8, "tensor", True, False),
    (10, T.UINT8, "tensor", False, True),
    (10, T.INT8, "tensor", True, True),
    (13, T.UINT8, "axis", True, False),
    (13, T.INT8, "axis", True, True),
    (13, T.INT8, "axis-neg", False, False),
    (13, T.UINT8, "tensor", False, False),
    (19, T.INT8, "axis", True, False),
    (19, T.UINT8, "tensor", True, True),
    (21, T.UINT16, "tensor", True, False),
    (21, T.INT16, "axis", True, True),
    (21, T.INT16, "axis-neg", True, False),
    (21, T.UINT8, "axis", False, True),
    (23, T.INT8, "tensor", True, False),
    (25, T.UINT8, "axis", True, True),
]


@pytest.mark.parametrize("opset,qt,gran,with_zp,const", _QL_CASES)
def test_quantize_linear(opset, qt, gran, with_zp, const, tmp_path):
    lo, hi = np.iinfo(NP[qt]).min, np.iinfo(NP[qt]).max
    c, n = 3, 400
    per_axis = gran != "tensor"
    scales = (10.0 ** rng.uniform(-4, 1, c if per_axis else 1)).astype(np.float32)
    zps = rng.integers(lo, hi + 1, len(scales)).astype(NP[qt]) if with_zp else \
        np.zeros(len(scales), NP[qt])
    cols = [_ties(scales[i % len(scales)], zps[i % len(scales)], lo, hi, n) for i in range(c)]
    x = np.stack(cols, 1).reshape(n // 4, 4, c).transpose(0, 2, 1).copy()  # axis 1 has c
    values = {"x": x, "s": scales if per_axis else scales[0]}
    if with_zp:
        values["z"] = zps if per_axis else zps[0]
    elif qt != T.UINT8:
        values["z"] = np.zeros_like(values["s"], NP[qt])  # the type comes from the zero point
    ins, inits, feeds = _inputs(values, {"x": F, "s": F, "z": qt}, {"s", "z"} if const else set())
    attrs = {"axis": -2} if gran == "axis-neg" else {}
    node = h.make_node("QuantizeLinear", list(values), ["y"], **attrs)
    m = _model([node], ins, [_vi("y", qt, list(x.shape))], inits, opset)
    got, want = _ov(m, feeds, tmp_path), _ort(m, feeds)
    _same(got, want)
    # the ties matter: the quotient as a product with the reciprocal rounds some of them off
    s = values["s"].reshape(-1, 1) if per_axis else values["s"]
    near = np.rint(x * (np.float32(1) / s)) != np.rint(x / s)
    assert near.any()


@pytest.mark.parametrize("const", [False, True])
@pytest.mark.parametrize("with_zp", [False, True])
def test_quantize_linear_blocked(const, with_zp, tmp_path):
    x = rng.standard_normal((3, 7, 2)).astype(np.float32)
    scale = (10.0 ** rng.uniform(-2, 0, (3, 3, 2))).astype(np.float32)
    x = (np.round(x / np.repeat(scale, 3, 1)[:, :7]) + 0.5) * np.repeat(scale, 3, 1)[:, :7]
    values = {"x": x.astype(np.float32), "s": scale}
    attrs = {"axis": 1, "block_size": 3}
    if with_zp:
        values["z"] = rng.integers(-20, 20, (3, 3, 2)).astype(np.int8)
    else:
        attrs["output_dtype"] = T.INT8
    ins, inits, feeds = _inputs(values, {"x": F, "s": F, "z": T.INT8},
                                {"s", "z"} if const else set())
    m = _model([h.make_node("QuantizeLinear", list(values), ["y"], **attrs)], ins,
               [_vi("y", T.INT8, [3, 7, 2])], inits)
    _same(_ov(m, feeds, tmp_path), _ort(m, feeds))


@pytest.mark.parametrize("precision", [None, T.FLOAT, T.FLOAT16])
def test_quantize_linear_precision(precision, tmp_path):
    """``precision`` float16 casts x and the scale to float16 and divides in float16."""
    s = np.float32(0.0137)
    x = _ties(s, 0, 0, 255, 2000)
    attrs = {} if precision is None else {"precision": precision}
    m = _model([h.make_node("QuantizeLinear", ["x", "s"], ["y"], **attrs)],
               [_vi("x", F, [2000]), _vi("s", F, [])], [_vi("y", T.UINT8, [2000])], opset=25)
    feeds = {"x": x, "s": np.asarray(s)}
    _same(_ov(m, feeds, tmp_path), _ort(m, feeds))


def test_quantize_linear_float16_input(tmp_path):
    s = np.float16(0.0123)
    x = _ties(np.float32(s), 10, -128, 127, 1000).astype(np.float16)
    m = _model([h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
               [_vi("x", F16, [1000]), _vi("s", F16, []), _vi("z", T.INT8, [])],
               [_vi("y", T.INT8, [1000])], opset=19)
    feeds = {"x": x, "s": np.asarray(s), "z": np.asarray(np.int8(10))}
    _same(_ov(m, feeds, tmp_path), _ort(m, feeds))


def test_quantize_linear_after_other_ops(tmp_path):
    """Quantizing inside a chain of element-wise ops (which OpenVINO fuses into its generated
    kernels), with input shapes the writer does not know."""
    c = 5
    s = (10 ** rng.uniform(-4, -2, c)).astype(np.float32)
    z = rng.integers(-100, 100, c).astype(np.int16)
    nodes = [h.make_node("Mul", ["x", "a"], ["t1"]), h.make_node("Add", ["t1", "b"], ["t2"]),
             h.make_node("Sigmoid", ["t2"], ["t3"]), h.make_node("Mul", ["t3", "x"], ["t4"]),
             h.make_node("QuantizeLinear", ["t4", "s", "z"], ["q"], axis=1),
             h.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], axis=1),
             h.make_node("Add", ["d", "x"], ["e"]), h.make_node("Abs", ["e"], ["f"]),
             h.make_node("QuantizeLinear", ["f", "s2"], ["q2"])]
    inits = [numpy_helper.from_array(np.float32(v), k)
             for k, v in (("a", 1.3), ("b", 0.2), ("s2", 0.0137))]
    m = _model(nodes, [_vi("x", F, [2, c, 4, 4]), _vi("s", F, [c]), _vi("z", T.INT16, [c])],
               [_vi("q", T.INT16, [2, c, 4, 4]), _vi("e", F, [2, c, 4, 4]),
                _vi("q2", T.UINT8, [2, c, 4, 4])], inits)
    feeds = {"x": rng.standard_normal((2, c, 4, 4)).astype(np.float32), "s": s, "z": z}
    _same(_ov(m, feeds, tmp_path), _ort(m, feeds))


# -- DequantizeLinear -------------------------------------------------------------------------
@pytest.mark.parametrize("opset,xt,st,gran,with_zp,const", [
    (10, T.UINT8, F, "tensor", True, False),
    (10, T.INT8, F, "tensor", False, True),
    (10, T.INT32, F, "tensor", False, False),
    (13, T.UINT8, F, "axis", True, True),
    (13, T.INT8, F, "axis", True, False),
    (19, T.INT8, F16, "axis", True, False),
    (19, T.UINT8, F16, "tensor", False, True),
    (21, T.INT16, F, "axis", True, False),
    (21, T.UINT16, F16, "tensor", True, True),
    (21, T.INT32, F, "axis", False, True),
])
def test_dequantize_linear(opset, xt, st, gran, with_zp, const, tmp_path):
    info = np.iinfo(NP[xt])
    x = rng.integers(info.min, info.max, (4, 3, 5), dtype=np.int64).astype(NP[xt])
    shape = (3,) if gran == "axis" else ()
    values = {"x": x, "s": (10.0 ** rng.uniform(-3, 1, shape)).astype(NP[st])}
    if with_zp:
        values["z"] = rng.integers(info.min, info.max, shape, dtype=np.int64).astype(NP[xt])
    ins, inits, feeds = _inputs(values, {"x": xt, "s": st, "z": xt},
                                {"s", "z"} if const else set())
    m = _model([h.make_node("DequantizeLinear", list(values), ["y"])], ins,
               [_vi("y", st, [4, 3, 5])], inits, opset)
    _same(_ov(m, feeds, tmp_path), _ort(m, feeds))


def test_dequantize_linear_blocked_and_output_dtype(tmp_path):
    x = rng.integers(-128, 128, (2, 6, 3)).astype(np.int8)
    values = {"x": x, "s": (10.0 ** rng.uniform(-3, 0, (2, 3, 3))).astype(np.float32),
              "z": rng.integers(-10, 10, (2, 3, 3)).astype(np.int8)}
    ins, inits, feeds = _inputs(values, {"x": T.INT8, "s": F, "z": T.INT8}, {"s"})
    node = h.make_node("DequantizeLinear", list(values), ["y"], axis=-2, block_size=2,
                       output_dtype=F16)
    m = _model([node], ins, [_vi("y", F16, [2, 6, 3])], inits, opset=23)
    _same(_ov(m, feeds, tmp_path), _ort(m, feeds))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("elem", [T.INT4, T.UINT4, T.INT8, T.FLOAT8E4M3FN, T.FLOAT8E5M2])
def test_dequantize_linear_constant_weights(elem, axis, tmp_path):
    """Weights (4-bit and float8 stored packed in the IR's constants) dequantized in front of a
    MatMul, per row (the inner dimension, which OpenVINO's compressed weights scale wrongly:
    written folded) and per column. ONNX Runtime runs unoptimized: its fusion of the two
    scales per-column weights wrongly (1.32)."""
    n = 6 if axis == 0 else 5
    if elem in (T.INT4, T.UINT4, T.INT8):
        lo, hi = (0, 16) if elem == T.UINT4 else (-8, 8)
        vals = rng.integers(lo, hi, (6, 5))
        inits = [h.make_tensor("x", elem, [6, 5], vals.ravel().tolist()),
                 h.make_tensor("z", elem, [n], rng.integers(lo, hi, n).tolist())]
        names = ["x", "s", "z"]
    else:
        vals = (rng.standard_normal((6, 5)) * 4).astype(np.float32)
        inits, names = [h.make_tensor("x", elem, [6, 5], vals.ravel().tolist())], ["x", "s"]
    inits.append(numpy_helper.from_array((10.0 ** rng.uniform(-2, 0, n)).astype(np.float32),
                                         "s"))
    nodes = [h.make_node("DequantizeLinear", names, ["w"], axis=axis),
             h.make_node("MatMul", ["v", "w"], ["y"])]
    m = _model(nodes, [_vi("v", F, [2, 6])], [_vi("y", F, [2, 5])], inits)
    feeds = {"v": rng.standard_normal((2, 6)).astype(np.float32)}
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(m.SerializeToString(), so,
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(_ov(m, feeds, tmp_path)[0], want[0], rtol=1e-5, atol=1e-5)


# -- integer products -------------------------------------------------------------------------
def _exact(ta, tb):
    """Whether ONNX Runtime's integer product is exact for these operand types here: uint8 x
    int8 goes through saturating 16-bit pair sums on CPUs without VNNI."""
    return not (ta == T.UINT8 and tb == T.INT8)


def _int8(t, shape, extreme=False):
    info = np.iinfo(NP[t])
    if extreme:
        return np.full(shape, info.max if info.min == 0 else info.min, NP[t])
    return rng.integers(info.min, info.max + 1, shape).astype(NP[t])


@pytest.mark.parametrize("k", [5, 300, 5000])
@pytest.mark.parametrize("ta,tb", [(T.UINT8, T.UINT8), (T.UINT8, T.INT8), (T.INT8, T.INT8)])
@pytest.mark.parametrize("zps,b_const,extreme", [
    ("none", False, False), ("tensor", True, False), ("rows-cols", False, False),
    ("tensor", False, True), ("none", True, True)])
def test_matmul_integer(k, ta, tb, zps, b_const, extreme, tmp_path):
    """Inner sums beyond 2**24 (k=300 of extremes, k=5000) need the 4-bit halves."""
    a, b = _int8(ta, (2, 3, k), extreme), _int8(tb, (k, 4), extreme)
    values, az, bz = {"A": a, "B": b}, 0, 0
    if zps == "tensor":
        az, bz = _int8(ta, ()), _int8(tb, ())
    elif zps == "rows-cols":  # a per-row zero point only for 2-D A
        a = a[0]
        values["A"] = a
        az, bz = _int8(ta, (3,)), _int8(tb, (4,))
    if zps != "none":
        values |= {"az": az, "bz": bz}
    ins, inits, feeds = _inputs(values, {"A": ta, "B": tb, "az": ta, "bz": tb},
                                {"B"} if b_const else set())
    out = list(a.shape[:-1]) + [4]
    m = _model([h.make_node("MatMulInteger", list(values), ["y"])], ins,
               [_vi("y", T.INT32, out)], inits, opset=10)
    exact = (a.astype(np.int64) - np.asarray(az, np.int64).reshape(
        (-1, 1) if np.ndim(az) else ())) @ (b.astype(np.int64) - np.asarray(bz, np.int64))
    got = _ov(m, feeds, tmp_path)
    _same(got, [exact.astype(np.int32)])
    if _exact(ta, tb) and zps != "rows-cols":  # ONNX Runtime takes no per-row A zero point
        _same(got, _ort(m, feeds))


def _requant(acc, mult, yz, t):
    info = np.iinfo(NP[t])
    y = np.rint(acc.astype(np.float32) * np.asarray(mult, np.float32)) + np.float32(yz)
    return np.clip(y, info.min, info.max).astype(NP[t])


@pytest.mark.parametrize("ta,tb", [(T.UINT8, T.UINT8), (T.UINT8, T.INT8), (T.INT8, T.INT8)])
@pytest.mark.parametrize("st,const,per_column,opset", [
    (F, False, False, 10), (F, True, True, 10), (F, False, True, 21), (F, True, False, 21),
    (F16, False, True, 21), (F16, True, False, 21)])  # float16 scales from opset 21
def test_qlinear_matmul(ta, tb, st, const, per_column, opset, tmp_path):
    a, b = _int8(ta, (2, 5, 64)), _int8(tb, (64, 6))
    az, yz = _int8(ta, ()), _int8(ta, ())
    bz = _int8(tb, (6,) if per_column else ())
    a_s = NP[st](10 ** rng.uniform(-3, -1))
    b_s = (10 ** rng.uniform(-3, -1, (6,) if per_column else ())).astype(NP[st])
    acc = (a.astype(np.int64) - np.int64(az)) @ (b.astype(np.int64) - bz.astype(np.int64))
    # a y_scale that spreads the results over the output range, ties included
    y_s = NP[st](np.abs(acc).mean() * np.float32(a_s) * np.float32(np.mean(b_s)) / 60)
    mult = np.float32(a_s) * np.asarray(b_s, np.float32) / np.float32(y_s)
    values = {"a": a, "as": a_s, "az": az, "b": b, "bs": b_s, "bz": bz, "ys": y_s, "yz": yz}
    types = {"a": ta, "az": ta, "yz": ta, "b": tb, "bz": tb, "as": st, "bs": st, "ys": st}
    ins, inits, feeds = _inputs(values, types, {"as", "bs", "ys", "b"} if const else set())
    m = _model([h.make_node("QLinearMatMul", list(values), ["y"])], ins,
               [_vi("y", ta, [2, 5, 6])], inits, opset)
    got = _ov(m, feeds, tmp_path)
    _same(got, [_requant(acc, mult, yz, ta)])
    if _exact(ta, tb):
        _same(got, _ort(m, feeds))


@pytest.mark.parametrize("kind", ["normal", "positive", "negative", "zeros", "ties", "wide"])
def test_dynamic_quantize_linear(kind, tmp_path):
    x = rng.standard_normal((9, 7)).astype(np.float32)
    if kind == "positive":
        x = np.abs(x) * 3
    elif kind == "negative":
        x = -np.abs(x)
    elif kind == "zeros":
        x = np.zeros_like(x)
    elif kind == "wide":
        x = x * np.float32(1e4)
    elif kind == "ties":
        lo, hi = np.float32(-1.7), np.float32(2.9)
        s = (hi - lo) / np.float32(255)
        x = ((rng.integers(0, 255, (9, 7)) + 0.5) * s + lo).astype(np.float32)
        x[0, :2] = lo, hi
    m = _model([h.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
               [_vi("x", F, [None, 7])],
               [_vi("y", T.UINT8, [None, 7]), _vi("s", F, []), _vi("z", T.UINT8, [])],
               opset=11)
    got, want = _ov(m, {"x": x}, tmp_path), _ort(m, {"x": x})
    _same(got, want)
    assert got[1] == want[1]  # the scale bit for bit


def _conv_exact(x, w, pads, strides, group):
    n, c, _, _ = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    ho = (xp.shape[2] - kh) // strides[0] + 1
    wo = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, ho, wo), np.int64)
    mg = m // group
    for g in range(group):
        for i in range(ho):
            for j in range(wo):
                patch = xp[:, g * cg:(g + 1) * cg, i * strides[0]:i * strides[0] + kh,
                           j * strides[1]:j * strides[1] + kw]
                y[:, g * mg:(g + 1) * mg, i, j] = np.einsum("nchw,mchw->nm", patch,
                                                            w[g * mg:(g + 1) * mg])
    return y


@pytest.mark.parametrize("c,group", [(3, 1), (8, 2), (300, 1)])
@pytest.mark.parametrize("tx,tw", [(T.UINT8, T.UINT8), (T.UINT8, T.INT8)])
@pytest.mark.parametrize("w_const", [False, True])
def test_conv_integer(c, group, tx, tw, w_const, tmp_path):
    """300 channels of 3x3 windows: sums beyond 2**24, written in 4-bit halves."""
    x, w = _int8(tx, (1, c, 5, 5), c == 300), _int8(tw, (4, c // group, 3, 3), c == 300)
    xz, wz = _int8(tx, ()), _int8(tw, (4,))
    if c == 300:
        xz = np.asarray(np.iinfo(NP[tx]).min, NP[tx])
    values = {"x": x, "w": w, "xz": xz, "wz": wz}
    ins, inits, feeds = _inputs(values, {"x": tx, "xz": tx, "w": tw, "wz": tw},
                                {"w"} if w_const else set())
    node = h.make_node("ConvInteger", list(values), ["y"], pads=[1, 1, 1, 1], strides=[2, 1],
                       group=group)
    m = _model([node], ins, [_vi("y", T.INT32, [1, 4, 3, 5])], inits, opset=10)
    exact = _conv_exact(x.astype(np.int64) - np.int64(xz),
                        w.astype(np.int64) - wz.astype(np.int64).reshape(-1, 1, 1, 1),
                        [1, 1, 1, 1], [2, 1], group)
    _same(_ov(m, feeds, tmp_path), [exact.astype(np.int32)])
    # the IR states its ports' shapes, so itergraph reads it back (a port without dims is a
    # scalar to a reader: the convolution's filter once read as one)
    _same(list(ig.load(tmp_path / "m.xml").run(feeds).values()), [exact.astype(np.int32)],
          "read back")


@pytest.mark.parametrize("c,group", [(3, 1), (48, 1), (8, 2)])
@pytest.mark.parametrize("tx,tw", [(T.UINT8, T.UINT8), (T.UINT8, T.INT8), (T.INT8, T.INT8)])
@pytest.mark.parametrize("const,per_channel", [(False, False), (True, True)])
def test_qlinear_conv(c, group, tx, tw, const, per_channel, tmp_path):
    x, w = _int8(tx, (1, c, 6, 6)), _int8(tw, (4, c // group, 3, 3))
    xz = _int8(tx, ())
    wz = np.asarray(0 if tw == T.INT8 else rng.integers(0, 256), NP[tw])
    x_s = np.float32(10 ** rng.uniform(-3, -1))
    w_s = (10 ** rng.uniform(-3, -1, (4,) if per_channel else ())).astype(np.float32)
    bias = rng.integers(-5000, 5000, 4).astype(np.int32)
    acc = _conv_exact(x.astype(np.int64) - np.int64(xz), w.astype(np.int64) - np.int64(wz),
                      [1, 1, 1, 1], [2, 1], group) + bias.reshape(1, -1, 1, 1)
    y_s = np.float32(np.abs(acc).mean() * x_s * np.mean(w_s) / 50)
    yz = _int8(tx, ())
    mult = x_s * w_s / y_s
    mult = mult.reshape(1, -1, 1, 1) if per_channel else mult
    values = {"x": x, "xs": x_s, "xz": xz, "w": w, "ws": w_s, "wz": wz, "ys": y_s, "yz": yz,
              "B": bias}
    types = {"x": tx, "xz": tx, "yz": tx, "w": tw, "wz": tw, "xs": F, "ws": F, "ys": F,
             "B": T.INT32}
    ins, inits, feeds = _inputs(values, types, set(values) - {"x"} if const else set())
    node = h.make_node("QLinearConv", list(values), ["y"], pads=[1, 1, 1, 1], strides=[2, 1],
                       group=group)
    m = _model([node], ins, [_vi("y", tx, [1, 4, 3, 6])], inits, opset=10)
    got = _ov(m, feeds, tmp_path)
    _same(got, [_requant(acc, mult, yz, tx)])
    if _exact(tx, tw):
        _same(got, _ort(m, feeds))


# -- refusals ---------------------------------------------------------------------------------
def _refused(m, tmp_path, words):
    with pytest.raises(ig.UnsupportedError) as info:
        ig.load(m).save(tmp_path / "m.xml")
    assert "node" in str(info.value) and words in str(info.value)


def test_quantize_linear_refuses_float8_outputs(tmp_path):
    m = _model([h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
               [_vi("x", F, [4]), _vi("s", F, [])], [_vi("y", T.FLOAT8E4M3FN, [4])],
               [h.make_tensor("z", T.FLOAT8E4M3FN, [], [0])])
    _refused(m, tmp_path, "not to")


@pytest.mark.parametrize(("zt", "z"), [(T.INT4, -3), (T.INT4, 1), (T.UINT4, 2)])
def test_4_bit_quantize_dequantize_computed_at_run_time(zt, z, tmp_path):
    """QuantizeLinear to int4/uint4 (saturating) and DequantizeLinear of that run-time tensor,
    as ONNX's reference computes them (ONNX Runtime has no 4-bit QuantizeLinear kernel)."""
    from onnx.reference import ReferenceEvaluator
    from ov_helpers import CORE, run_compiled

    m = _model([h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
               [_vi("x", F, [12])], [_vi("y", F, [12]), _vi("q", zt, [12])],
               [h.make_tensor("z", zt, [], [z]), h.make_tensor("s", F, [], [0.5])])
    x = np.array([-20, -9, -4.25, -3.2, -0.25, 0, 0.25, 0.75, 1.26, 3.9, 7.75, 20], np.float32)
    want = ReferenceEvaluator(m).run(None, {"x": x})
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    got = run_compiled(CORE.compile_model(str(xml), "CPU"), ["x"], [x])
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].dtype == want[1].dtype
    np.testing.assert_array_equal(got[1].astype(np.int8), want[1].astype(np.int8))


def test_quantize_linear_refuses_bfloat16_precision(tmp_path):
    m = _model([h.make_node("QuantizeLinear", ["x", "s"], ["y"], precision=T.BFLOAT16)],
               [_vi("x", F, [4]), _vi("s", F, [])], [_vi("y", T.UINT8, [4])], opset=25)
    _refused(m, tmp_path, "precision")


def test_dequantize_linear_refuses_2_bit_input(tmp_path):
    m = _model([h.make_node("DequantizeLinear", ["x", "s"], ["y"])],
               [_vi("x", T.UINT2, [4]), _vi("s", F, [])], [_vi("y", F, [4])], opset=25)
    _refused(m, tmp_path, "not uint2")


def test_matmul_integer_refuses_sums_it_cannot_bound(tmp_path):
    m = _model([h.make_node("MatMulInteger", ["A", "B"], ["y"])],
               [_vi("A", T.UINT8, [2, 70000]), _vi("B", T.UINT8, [70000, 3])],
               [_vi("y", T.INT32, [2, 3])], opset=10)
    _refused(m, tmp_path, "more than 65536")


@pytest.mark.parametrize("k", [7, 5000])
def test_integer_products_of_an_inner_dimension_known_at_run_time(k, tmp_path):
    """An inner dimension the file leaves unknown (attention's scores times values in an
    ORT-quantized encoder) is written for up to 65,536 products per output: extreme codes
    summed over 5,000 terms pass 2**24 and still come out exact, as ONNX Runtime's."""
    a, b = _int8(T.UINT8, (2, k), extreme=True), _int8(T.UINT8, (k, 3), extreme=True)
    m = _model([h.make_node("MatMulInteger", ["A", "B", "az"], ["y"])],
               [_vi("A", T.UINT8, [2, "k"]), _vi("B", T.UINT8, ["k", 3])],
               [_vi("y", T.INT32, [2, 3])], [h.make_tensor("az", T.UINT8, [], [1])], opset=10)
    feeds = {"A": a, "B": b}
    exact = (a.astype(np.int64) - 1) @ b.astype(np.int64)
    got = _ov(m, feeds, tmp_path)
    _same(got, [exact.astype(np.int32)])
    _same(got, _ort(m, feeds))
    a_s, y_s = np.float32(0.02), np.float32(40.0)
    q = _model([h.make_node("QLinearMatMul", ["A", "as", "az", "B", "as", "az", "ys", "az"],
                            ["y"])],
               [_vi("A", T.UINT8, [2, "k"]), _vi("B", T.UINT8, ["k", 3])],
               [_vi("y", T.UINT8, [2, 3])],
               [h.make_tensor("az", T.UINT8, [], [1]), h.make_tensor("as", F, [], [a_s]),
                h.make_tensor("ys", F, [], [y_s])], opset=10)
    got = _ov(q, feeds, tmp_path)
    acc = (a.astype(np.int64) - 1) @ (b.astype(np.int64) - 1)
    _same(got, [_requant(acc, a_s * a_s / y_s, 1, T.UINT8)])
    _same(got, _ort(q, feeds))
