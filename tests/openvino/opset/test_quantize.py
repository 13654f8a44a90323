"""FakeQuantize against OpenVINO: per-tensor and per-channel ranges, inverted input ranges,
levels 2/16/256, read by itergraph (``org.openvinotoolkit`` FakeQuantize), written back to IR,
and written to ONNX as standard arithmetic run by ONNX Runtime; GatherTree likewise, written to
ONNX as a Loop."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset13 as ops13
import pytest
from opcheck import check_op, rand
from ov_helpers import save

import itergraph as ig
from itergraph.errors import ModelError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(11)


@pytest.mark.parametrize("levels", [2, 16, 256])
@pytest.mark.parametrize("per_channel", [False, True])
def test_fake_quantize(levels, per_channel, tmp_path):
    x = ops1.parameter([2, 3, 4, 5], np.float32, name="x")
    shape = (1, 3, 1, 1) if per_channel else ()
    il = np.full(shape, -1.2, np.float32) - (np.arange(3).reshape(shape) * 0.1
                                              if per_channel else 0)
    ih = np.full(shape, 1.5, np.float32)
    ol, oh = np.full(shape, -2.0, np.float32), np.full(shape, 3.0, np.float32)
    fq = ops1.fake_quantize(x, *(ops1.constant(np.asarray(a, np.float32)) for a in
                                 (il, ih, ol, oh)), levels)
    g, _ = check_op([fq], [x], {"x": 2 * rand(rng, 2, 3, 4, 5)}, tmp_path)
    assert [(n.domain, n.op_type) for n in g.nodes] == [("org.openvinotoolkit", "FakeQuantize")]


def test_fake_quantize_runtime_ranges_and_inverted(tmp_path):
    """Ranges as inputs, one of them inverted (input_low > input_high) per element."""
    x = ops13.parameter([4, 6], np.float32, name="x")
    lo = ops13.parameter([1, 6], np.float32, name="lo")
    hi = ops13.parameter([1, 6], np.float32, name="hi")
    fq = ops13.fake_quantize(x, lo, hi, ops13.constant(np.float32(0)),
                             ops13.constant(np.float32(255)), 256)
    lo_v = np.array([[-1, -2, 0, 1, -1, -0.5]], np.float32)
    hi_v = np.array([[1, 2, 1, -1, 0.5, 0.5]], np.float32)
    check_op([fq], [x, lo, hi], {"x": 1.5 * rand(rng, 4, 6), "lo": lo_v, "hi": hi_v}, tmp_path,
             rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("levels", [2, 16, 256])
def test_fake_quantize_every_interval_and_boundary(levels, tmp_path):
    """Inputs on both range ends, just inside and outside them, on every level, and between
    levels; per-channel ranges broadcast against the input; ONNX Runtime runs the ONNX copy.
    (For levels > 2 OpenVINO's CPU plugin reads a per-channel ``output_high`` as a scalar when
    ``output_low`` is one, and ignores output ranges along axis 0: both vary along axis 1.)"""
    x = ops13.parameter([2, 3, -1], np.float32, name="x")
    il = np.array([[[-1.0], [0.0], [-2.5]]], np.float32)
    ih = np.array([[[1.0], [2.0], [0.5]]], np.float32)
    ol = np.array([[[-3.0], [-2.0], [-1.0]]], np.float32)
    oh = np.array([[[3.0], [1.0], [5.0]]], np.float32)
    fq = ops13.fake_quantize(x, *(ops13.constant(a) for a in (il, ih, ol, oh)), levels)
    k = np.arange(levels, dtype=np.float32) / (levels - 1)
    cols = [il, ih, np.nextafter(il, -np.inf), np.nextafter(ih, np.inf), il - 1, ih + 1,
            il + (ih - il) * k, il + (ih - il) * (k + 0.37 / (levels - 1)),
            il + (ih - il) * (k + 0.71 / (levels - 1))]
    row = np.concatenate([np.broadcast_to(c, (1, 3, np.shape(c)[-1])) for c in cols], axis=2)
    feed = np.concatenate([row, -row], axis=0)
    check_op([fq], [x], {"x": feed.astype(np.float32)}, tmp_path, rtol=1e-5, atol=1e-5)


def test_fake_quantize_levels_checked(tmp_path):
    x = ops1.parameter([3], np.float32, name="x")
    c = ops1.constant(np.float32(1))
    fq = ops1.fake_quantize(x, c, c, c, c, 4)
    path = save(ov.Model([fq.output(0)], [x]), tmp_path)
    text = path.read_text().replace('levels="4"', 'levels="1"')
    path.write_text(text)
    with pytest.raises(ModelError, match="levels=1"):
        read(path)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_gather_tree(dtype, tmp_path):
    T, B, W = 5, 3, 4
    s = ops1.parameter([T, B, W], dtype, name="s")
    p = ops1.parameter([T, B, W], dtype, name="p")
    m = ops1.parameter([B], dtype, name="m")
    g = ops1.gather_tree(s, p, m, ops1.constant(np.array(2, dtype)))
    steps = rng.integers(0, 6, (T, B, W)).astype(dtype)
    parents = rng.integers(0, W, (T, B, W)).astype(dtype)
    # a length of 0 leaves garbage in the CPU plugin's output (uninitialised memory)
    feeds = {"s": steps, "p": parents, "m": np.array([5, 3, 1], dtype)}
    g_ir, _ = check_op([g], [s, p, m], feeds, tmp_path)
    assert [n.op_type for n in g_ir.nodes] == ["GatherTree"]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_gather_tree_end_tokens_and_lengths(dtype, tmp_path):
    """End tokens inside the beams (later steps become end_token), lengths past the time axis
    and of one step, a dynamic time axis; the ONNX copy is a Loop run by ONNX Runtime."""
    T, B, W = 6, 4, 3
    s = ops13.parameter([-1, B, W], dtype, name="s")
    p = ops13.parameter([-1, B, W], dtype, name="p")
    m = ops13.parameter([B], dtype, name="m")
    e = ops13.parameter([], dtype, name="e")
    g = ops1.gather_tree(s, p, m, e)
    steps = rng.integers(0, 4, (T, B, W)).astype(dtype)
    parents = rng.integers(0, W, (T, B, W)).astype(dtype)
    feeds = {"s": steps, "p": parents, "m": np.array([6, 9, 1, 4], dtype),
             "e": np.array(3, dtype)}
    check_op([g], [s, p, m, e], feeds, tmp_path)


def test_gather_tree_onnx_no_time_steps(tmp_path):
    """No time steps: the ONNX copy's Loop runs zero times and still gives [0, B, W]."""
    s = ops1.parameter([-1, 2, 3], np.int32, name="s")
    p = ops1.parameter([-1, 2, 3], np.int32, name="p")
    m = ops1.parameter([2], np.int32, name="m")
    g = ops1.gather_tree(s, p, m, ops1.constant(np.array(1, np.int32)))
    path = save(ov.Model([g.output(0)], [s, p, m]), tmp_path)
    ig.save(ig.load(path), tmp_path / "g.onnx")
    empty = np.zeros((0, 2, 3), np.int32)
    sess = ort.InferenceSession(str(tmp_path / "g.onnx"), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"s": empty, "p": empty, "m": np.array([2, 0], np.int32)})
    assert y.shape == (0, 2, 3) and y.dtype == np.int32
