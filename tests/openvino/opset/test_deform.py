"""DeformableConvolution-1 and -8 against OpenVINO: read, run on NumPy and JAX, written back.
``bilinear_interpolation_pad=true`` is ONNX ``DeformConv`` (ONNX Runtime leg); ``false`` and
opset 1 are ``org.openvinotoolkit`` ``DeformableConv2D``, whose ONNX copy runs in OpenVINO's
ONNX frontend. Offsets are large enough that many samples fall outside the input, where the
two paddings differ; a plain Python loop pins the semantics of each (checked against OpenVINO
in the same tests)."""

from __future__ import annotations

import math

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset8 as ops8
import pytest
from opcheck import check_op
from ov_helpers import save

from itergraph.backends.jax import explain
from itergraph.errors import ModelError, UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(83)


def _out(size, k, s, d, pb, pe):
    return (size + pb + pe - ((k - 1) * d + 1)) // s + 1


def _loop_sample(img, y, x, zero_pad):
    h, w = img.shape
    if not zero_pad and not (0 <= y < h and 0 <= x < w):
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if not zero_pad:
                yy, xx = min(yy, h - 1), min(xx, w - 1)
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * float(img[yy, xx])
    return total


def _loop(x, off, w, mask, s, pb, pe, d, g, dg, zero_pad):
    """OpenVINO's DeformableConvolution as a plain loop (the oracle of the semantics)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = _out(h, kh, s[0], d[0], pb[0], pe[0]), _out(wd, kw, s[1], d[1], pb[1], pe[1])
    out = np.zeros((n, o, oh, ow))
    for b in range(n):
        for oc in range(o):
            gi = oc // (o // g)
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ci in range(c // g):
                        ch = gi * (c // g) + ci
                        di = ch // (c // dg)
                        for a in range(kh):
                            for e in range(kw):
                                k = a * kw + e
                                oc2 = di * 2 * kh * kw + 2 * k
                                y = i * s[0] - pb[0] + a * d[0] + off[b, oc2, i, j]
                                xx = j * s[1] - pb[1] + e * d[1] + off[b, oc2 + 1, i, j]
                                m = 1.0 if mask is None else mask[b, di * kh * kw + k, i, j]
                                acc += _loop_sample(x[b, ch], y, xx, zero_pad) * w[oc, ci, a, e] * m
                    out[b, oc, i, j] = acc
    return out


CASES = {
    # name: (N, C, H, W, O, k, strides, pads_begin, pads_end, dilations, group, deformable_group)
    "plain": (1, 2, 5, 6, 3, 3, [1, 1], [1, 1], [1, 1], [1, 1], 1, 1),
    "groups": (2, 4, 6, 5, 4, 2, [2, 1], [0, 1], [1, 0], [1, 2], 2, 2),
    "deform_groups": (1, 4, 6, 5, 6, 3, [1, 2], [1, 1], [1, 1], [1, 1], 1, 4),
    "rect_kernel": (1, 3, 7, 6, 2, (2, 3), [1, 1], [0, 2], [1, 0], [2, 1], 1, 3),
}


def _make(case, mask: bool, dtype=np.float32):
    n, c, h, wd, o, k, s, pb, pe, d, g, dg = CASES[case]
    kh, kw = k if isinstance(k, tuple) else (k, k)
    oh, ow = _out(h, kh, s[0], d[0], pb[0], pe[0]), _out(wd, kw, s[1], d[1], pb[1], pe[1])
    feeds = {"x": rng.standard_normal((n, c, h, wd)).astype(dtype),
             "off": (2.5 * rng.standard_normal((n, dg * 2 * kh * kw, oh, ow))).astype(dtype),
             "w": rng.standard_normal((o, c // g, kh, kw)).astype(dtype)}
    if mask:
        feeds["m"] = rng.uniform(0, 1, (n, dg * kh * kw, oh, ow)).astype(dtype)
    return feeds, (s, pb, pe, d, g, dg)


def _params(feeds, dtype=np.float32):
    return [ops8.parameter(list(v.shape), dtype, name=k) for k, v in feeds.items()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_deformable_v1(case, tmp_path):
    feeds, (s, pb, pe, d, g, dg) = _make(case, mask=False)
    p = _params(feeds)
    y = ops1.deformable_convolution(p[0], p[1], p[2], s, pb, pe, d, group=g, deformable_group=dg)
    _, want = check_op([y], p, feeds, tmp_path, rtol=1e-4, atol=1e-4, onnx_runner="openvino")
    loop = _loop(feeds["x"], feeds["off"], feeds["w"], None, s, pb, pe, d, g, dg, False)
    np.testing.assert_allclose(want[0], loop, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("pad", [False, True])
def test_deformable_v8(case, mask, pad, tmp_path):
    feeds, (s, pb, pe, d, g, dg) = _make(case, mask)
    p = _params(feeds)
    y = ops8.deformable_convolution(p[0], p[1], p[2], s, pb, pe, d, mask=p[3] if mask else None,
                                    group=g, deformable_group=dg, bilinear_interpolation_pad=pad)
    _, want = check_op([y], p, feeds, tmp_path, rtol=1e-4, atol=1e-4,
                       onnx_runner="ort" if pad else "openvino")
    loop = _loop(feeds["x"], feeds["off"], feeds["w"], feeds.get("m"), s, pb, pe, d, g, dg, pad)
    np.testing.assert_allclose(want[0], loop, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("auto_pad", ["same_upper", "same_lower", "valid"])
@pytest.mark.parametrize("pad", [False, True])
def test_deformable_auto_pad(auto_pad, pad, tmp_path):
    n, c, h, wd, o, k, s = 1, 2, 7, 6, 2, 3, [2, 2]
    oh, ow = ((h - 3) // 2 + 1, (wd - 3) // 2 + 1) if auto_pad == "valid" else \
        (-(-h // 2), -(-wd // 2))
    feeds = {"x": rng.standard_normal((n, c, h, wd)).astype(np.float32),
             "off": rng.standard_normal((n, 2 * k * k, oh, ow)).astype(np.float32),
             "w": rng.standard_normal((o, c, k, k)).astype(np.float32)}
    p = _params(feeds)
    y = ops8.deformable_convolution(p[0], p[1], p[2], s, [0, 0], [0, 0], [1, 1],
                                    auto_pad=auto_pad, bilinear_interpolation_pad=pad)
    check_op([y], p, feeds, tmp_path, rtol=1e-4, atol=1e-4,
             onnx_runner="ort" if pad else "openvino")


def test_deformable_dynamic_batch_and_integral_offsets(tmp_path):
    """Integral offsets land on input elements and on the last row/column exactly; a dynamic
    batch keeps the spatial dims (and so the padding) known."""
    feeds, (s, pb, pe, d, g, dg) = _make("plain", mask=True)
    feeds["off"] = np.round(feeds["off"]).astype(np.float32)
    x = ops8.parameter([-1, 2, 5, 6], np.float32, name="x")
    rest = _params({k: v for k, v in feeds.items() if k != "x"})
    y = ops8.deformable_convolution(x, rest[0], rest[1], s, pb, pe, d, mask=rest[2],
                                    bilinear_interpolation_pad=False)
    check_op([y], [x] + rest, feeds, tmp_path, rtol=1e-4, atol=1e-4, onnx_runner="openvino")


def test_deformable_f16(tmp_path):
    feeds, (s, pb, pe, d, g, dg) = _make("groups", mask=True, dtype=np.float16)
    p = _params(feeds, np.float16)
    y = ops8.deformable_convolution(p[0], p[1], p[2], s, pb, pe, d, mask=p[3], group=g,
                                    deformable_group=dg, bilinear_interpolation_pad=True)
    check_op([y], p, feeds, tmp_path, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("pad", [False, True])
def test_deformable_compiles_on_jax(pad, tmp_path):
    feeds, (s, pb, pe, d, g, dg) = _make("groups", mask=True)
    p = _params(feeds)
    y = ops8.deformable_convolution(p[0], p[1], p[2], s, pb, pe, d, mask=p[3], group=g,
                                    deformable_group=dg, bilinear_interpolation_pad=pad)
    g_ = read(save(ov.Model([y], p), tmp_path))
    ops = {(nd.domain, nd.op_type) for nd in g_.nodes}
    assert (("", "DeformConv") if pad else ("org.openvinotoolkit", "DeformableConv2D")) in ops
    assert all(rec.compiles for rec in explain(g_, feeds))


def test_deformable_bad_group_is_refused(tmp_path):
    feeds, (s, pb, pe, d, g, dg) = _make("plain", mask=False)
    p = _params(feeds)
    y = ops1.deformable_convolution(p[0], p[1], p[2], s, pb, pe, d)
    path = save(ov.Model([y], p), tmp_path)
    text = path.read_text().replace('deformable_group="1"', 'deformable_group="0"')
    path.write_text(text)
    with pytest.raises(ModelError, match="deformable_group"):
        read(path)


@pytest.mark.parametrize("auto_pad", ["same_upper", "same_lower"])
def test_deformable_auto_pad_dynamic_spatial(auto_pad, tmp_path):
    """Unknown spatial dims: ``DeformableConv2D`` keeps ``auto_pad`` and resolves it at run
    time; ONNX ``DeformConv`` (padded bilinear sampling) has no ``auto_pad`` and is refused."""
    feeds = {"x": rng.standard_normal((1, 2, 7, 6)).astype(np.float32),
             "off": rng.standard_normal((1, 18, 4, 3)).astype(np.float32),
             "w": rng.standard_normal((3, 2, 3, 3)).astype(np.float32)}
    x = ops8.parameter([1, 2, -1, -1], np.float32, name="x")
    off = ops8.parameter([1, 18, -1, -1], np.float32, name="off")
    w = ops8.parameter([3, 2, 3, 3], np.float32, name="w")
    y = ops8.deformable_convolution(x, off, w, [2, 2], [0, 0], [0, 0], [1, 1], auto_pad=auto_pad)
    g, _ = check_op([y], [x, off, w], feeds, tmp_path, rtol=1e-4, atol=1e-4,
                    onnx_runner="openvino")
    node = next(n for n in g.nodes if n.op_type == "DeformableConv2D")
    assert node.attrs["auto_pad"] == auto_pad.upper()
    y = ops8.deformable_convolution(x, off, w, [2, 2], [0, 0], [0, 0], [1, 1], auto_pad=auto_pad,
                                    bilinear_interpolation_pad=True)
    with pytest.raises(UnsupportedError, match="auto_pad"):
        read(save(ov.Model([y], [x, off, w]), tmp_path / "padded"))
