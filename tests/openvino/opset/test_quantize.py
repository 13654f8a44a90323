"""FakeQuantize against OpenVINO: per-tensor and per-channel ranges, inverted input ranges,
levels 2/16/256, read by itergraph (``org.openvinotoolkit`` FakeQuantize), written back to IR,
and written to ONNX for OpenVINO's ONNX frontend (ONNX Runtime has no such op)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset13 as ops13
import pytest
from opcheck import check_op, rand
from ov_helpers import save

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
    g, _ = check_op([fq], [x], {"x": 2 * rand(rng, 2, 3, 4, 5)}, tmp_path,
                    onnx_runner="openvino")
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
             onnx_runner="openvino", rtol=1e-4, atol=1e-3)


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
    g_ir, _ = check_op([g], [s, p, m], feeds, tmp_path, to_onnx=False)
    assert [n.op_type for n in g_ir.nodes] == ["GatherTree"]
