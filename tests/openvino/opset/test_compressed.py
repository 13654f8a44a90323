"""Models saved as ``ov.save_model`` and OpenVINO's converters save them by default: float
constants stored as float16, each followed by a ``Convert`` to float32. Translators that need a
constant's value when reading (thresholds, scales, weights re-laid out, anchors) see through
the conversion; the whole conformance round runs on such files (OpenVINO on the same file is
the oracle, so the float16 rounding is in both)."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset5 as ops5
import openvino.opset9 as ops9
import openvino.opset11 as ops11
import openvino.opset13 as ops13
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(61)


def _boxes(b, n):
    lo = rng.uniform(0, 10, (b, n, 2))
    return np.concatenate([lo, lo + rng.uniform(1, 6, (b, n, 2))], -1).astype(np.float32)


def _nms(version):
    ops = {5: ops5, 9: ops9}[version]
    b = ops.parameter([2, 7, 4], np.float32, name="b")
    s = ops.parameter([2, 3, 7], np.float32, name="s")
    # the default thresholds the API adds are float constants the file compresses
    n = ops.non_max_suppression(b, s, ops.constant(np.int64(3)), sort_result_descending=True)
    feeds = {"b": _boxes(2, 7), "s": rng.random((2, 3, 7)).astype(np.float32)}
    return list(n.outputs()), [b, s], feeds, {}


def _group_conv():
    x = ops1.parameter([1, 4, 7, 7], np.float32, name="x")
    c = ops1.group_convolution(x, ops1.constant(rand(rng, 2, 3, 2, 3, 3)), [2, 1], [1, 0],
                               [0, 1], [1, 2])
    return [c], [x], {"x": rand(rng, 1, 4, 7, 7)}, {"rtol": 1e-4, "atol": 1e-4}


def _group_conv_backprop():
    x = ops1.parameter([1, 4, 5, 5], np.float32, name="x")
    c = ops1.group_convolution_backprop_data(x, ops1.constant(rand(rng, 2, 2, 3, 3, 3)), [2, 2],
                                             pads_begin=[1, 0], pads_end=[0, 1])
    return [c], [x], {"x": rand(rng, 1, 4, 5, 5)}, {"rtol": 1e-4, "atol": 1e-4}


def _lstm_sequence():
    B, T, I, H = 2, 5, 3, 4
    x = ops5.parameter([B, T, I], np.float32, name="x")
    h0 = ops5.parameter([B, 1, H], np.float32, name="h0")
    c0 = ops5.parameter([B, 1, H], np.float32, name="c0")
    lens = ops5.constant(np.full(B, T, np.int32))
    y = ops5.lstm_sequence(x, h0, c0, lens, ops5.constant(rand(rng, 1, 4 * H, I)),
                           ops5.constant(rand(rng, 1, 4 * H, H)),
                           ops5.constant(rand(rng, 1, 4 * H)), H, "forward")
    feeds = {"x": rand(rng, B, T, I), "h0": rand(rng, B, 1, H), "c0": rand(rng, B, 1, H)}
    return list(y.outputs()), [x, h0, c0], feeds, {"rtol": 1e-4, "atol": 1e-5}


def _interpolate_scales():
    x = ops11.parameter([1, 2, 4, 5], np.float32, name="x")
    y = ops11.interpolate(x, ops11.constant(np.array([2.0, 1.5], np.float32)), "linear",
                          "scales", axes=ops11.constant(np.array([2, 3], np.int64)))
    return [y], [x], {"x": rand(rng, 1, 2, 4, 5)}, {"rtol": 1e-5, "atol": 1e-5}


def _scalar_parameters():
    x = ops1.parameter([3, 4], np.float32, name="x")
    hs = ops1.hard_sigmoid(x, ops1.constant(np.float32(0.3)), ops1.constant(np.float32(0.4)))
    se = ops1.selu(x, ops1.constant(np.array([1.5], np.float32)),
                   ops1.constant(np.array([1.1], np.float32)))
    pr = ops1.prelu(x, ops1.constant(np.array([0.1, 0.2, 0.3, 0.4], np.float32)))
    pad = ops1.pad(x, ops1.constant(np.array([1, 0], np.int64)),
                   ops1.constant(np.array([0, 2], np.int64)), "constant",
                   ops1.constant(np.float32(1.5)))
    return [hs, se, pr, pad], [x], {"x": rand(rng, 3, 4) * 3}, {}


def _sdpa():
    q = ops13.parameter([1, 2, 4, 8], np.float32, name="q")
    k = ops13.parameter([1, 2, 6, 8], np.float32, name="k")
    v = ops13.parameter([1, 2, 6, 8], np.float32, name="v")
    y = ops13.scaled_dot_product_attention(q, k, v, ops13.constant(rand(rng, 4, 6)),
                                           ops13.constant(np.float32(0.2)))
    feeds = {n: rand(rng, *s) for n, s in (("q", (1, 2, 4, 8)), ("k", (1, 2, 6, 8)),
                                            ("v", (1, 2, 6, 8)))}
    return [y], [q, k, v], feeds, {"rtol": 1e-4, "atol": 1e-5}


CASES = {"nms5": lambda: _nms(5), "nms9": lambda: _nms(9), "group_conv": _group_conv,
         "group_conv_backprop": _group_conv_backprop, "lstm_sequence": _lstm_sequence,
         "interpolate_scales": _interpolate_scales, "scalar_parameters": _scalar_parameters,
         "sdpa": _sdpa}


@pytest.mark.parametrize("case", list(CASES))
def test_float16_compressed_model(case, tmp_path):
    outs, params, feeds, kw = CASES[case]()
    g, _ = check_op(outs, params, feeds, tmp_path, compress=True, **kw)
    assert "f16" in (tmp_path / "model.xml").read_text()
