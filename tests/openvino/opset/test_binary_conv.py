"""BinaryConvolution-1 (xnor-popcount): read (as one ONNX Conv on the data's bits), run on
NumPy and JAX, written back and run by OpenVINO, converted to ONNX and run by ONNX Runtime,
all against a plain loop over the spec's formula. The CPU plugin disagrees with its spec on
a plain floating-point input (it expects its own binarised layout): asserted below."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset1 as ops1
import pytest
from ov_helpers import record, run_ov, save

import itergraph as ig
from itergraph.frontends.openvino import read, write

rng = np.random.default_rng(41)


def _loop(x, w, strides, dilations, begin, end, pad_value):
    """Per output: 2 * (window elements equal to the filter bit) - (window elements)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.full((n, c, h + begin[0] + end[0], wd + begin[1] + end[1]), pad_value, np.float64)
    xp[:, :, begin[0]:begin[0] + h, begin[1]:begin[1] + wd] = x
    oh = (xp.shape[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    y = np.zeros((n, o, oh, ow), np.float32)
    for b in range(n):
        for f in range(o):
            for i in range(oh):
                for j in range(ow):
                    patch = xp[b, :, i * strides[0]:i * strides[0] + (kh - 1) * dilations[0] + 1:
                               dilations[0], j * strides[1]:j * strides[1] +
                               (kw - 1) * dilations[1] + 1:dilations[1]]
                    y[b, f, i, j] = 2 * np.sum(patch == w[f]) - w[f].size
    return y


CASES = [  # strides, dilations, pads_begin, pads_end, pad_value
    ([1, 1], [1, 1], [0, 0], [0, 0], 0.0),
    ([1, 1], [1, 1], [1, 1], [1, 1], 1.0),
    ([2, 1], [1, 2], [1, 0], [0, 2], 0.0),
    ([1, 2], [2, 1], [2, 1], [1, 1], -1.0),
]


@pytest.mark.parametrize("case", CASES)
def test_binary_convolution(case, tmp_path):
    strides, dilations, begin, end, pad_value = case
    w = rng.integers(0, 2, (3, 2, 3, 3)).astype(np.uint8)
    x = rng.integers(0, 2, (2, 2, 6, 7)).astype(np.float32)
    p = ops1.parameter([2, 2, 6, 7], np.float32, name="x")
    filters = ov.op.Constant(ov.Type.u1, ov.Shape(list(w.shape)), w.reshape(-1).tolist())
    y = ops1.binary_convolution(p, filters, strides, begin, end, dilations, "xnor-popcount",
                                pad_value)
    path = save(ov.Model([y], [p]), tmp_path)
    want = _loop(x, w, strides, dilations, begin, end, pad_value)
    feeds = {"x": x}
    m = ig.load(path)
    for backend in ("numpy", "jax"):
        np.testing.assert_array_equal(list(m.run(feeds, backend=backend).values())[0], want)
    write(read(path), tmp_path / "written.xml")
    np.testing.assert_array_equal(run_ov(tmp_path / "written.xml", feeds)[0], want)
    ig.save(m, tmp_path / "written.onnx")
    sess = ort.InferenceSession(str(tmp_path / "written.onnx"),
                                providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, feeds)[0], want)
    assert not np.array_equal(run_ov(path, feeds)[0], want)  # the plugin's disagreement
    record({"BinaryConvolution"}, "numpy", "jax", "write", "onnx")  # the spec's loop agrees


def test_binary_convolution_same_upper(tmp_path):
    w = rng.integers(0, 2, (2, 3, 2, 3)).astype(np.uint8)
    x = rng.integers(0, 2, (1, 3, 5, 5)).astype(np.float32)
    p = ops1.parameter([1, 3, 5, 5], np.float32, name="x")
    filters = ov.op.Constant(ov.Type.u1, ov.Shape(list(w.shape)), w.reshape(-1).tolist())
    y = ops1.binary_convolution(p, filters, [2, 2], [0, 0], [0, 0], [1, 1], "xnor-popcount",
                                1.0, "same_upper")
    path = save(ov.Model([y], [p]), tmp_path)
    # same_upper: ceil(5 / 2) = 3 outputs, total padding 1 (rows) and 2 (columns)
    want = _loop(x, w, [2, 2], [1, 1], [0, 1], [1, 1], 1.0)
    got = list(ig.load(path).run({"x": x}).values())[0]
    np.testing.assert_array_equal(got, want)
