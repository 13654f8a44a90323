"""GridSample-9, Col2Im-15, SearchSorted-15, AdaptiveAvgPool-8 and AdaptiveMaxPool-8 against
OpenVINO; read, written back to IR and to ONNX."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset8 as ops8
import openvino.opset9 as ops9
import openvino.opset15 as ops15
import pytest
from opcheck import check_op, rand
from ov_helpers import save

from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(43)


@pytest.mark.parametrize("mode,padding", [(m, p) for m in ("bilinear", "bicubic", "nearest")
                                          for p in ("zeros", "border", "reflection")
                                          if (m, p) != ("bicubic", "border")])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding, align, tmp_path):
    x = ops9.parameter([2, 3, 5, 6], np.float32, name="x")
    g = ops9.parameter([2, 4, 3, 2], np.float32, name="g")
    y = ops9.grid_sample(x, g, {"align_corners": align, "mode": mode, "padding_mode": padding})
    grid = (rng.random((2, 4, 3, 2)) * 2.4 - 1.2).astype(np.float32)
    check_op([y], [x, g], {"x": rand(rng, 2, 3, 5, 6), "g": grid}, tmp_path, rtol=1e-4,
             atol=1e-4)


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("strides,dilations,pads", [([1, 1], [1, 1], [0, 0]),
                                                    ([2, 1], [1, 2], [1, 0])])
def test_col2im(batched, strides, dilations, pads, tmp_path):
    out, k = [6, 7], [2, 3]
    blocks = [(o + 2 * p - (kk - 1) * d - 1) // s + 1
              for o, p, kk, d, s in zip(out, pads, k, dilations, strides)]
    shape = ([2] if batched else []) + [3 * 6, blocks[0] * blocks[1]]
    x = ops15.parameter(shape, np.float32, name="x")
    y = ops15.col2im(x, ops15.constant(np.array(out, np.int64)),
                     ops15.constant(np.array(k, np.int64)), strides, dilations, pads, pads)
    check_op([y], [x], {"x": rand(rng, *shape)}, tmp_path, rtol=1e-5, atol=1e-5,
             to_onnx=batched)


@pytest.mark.parametrize("right", [False, True])
def test_search_sorted(right, tmp_path):
    s = ops15.parameter([2, 6], np.float32, name="s")
    v = ops15.parameter([2, 4], np.float32, name="v")
    y = ops15.search_sorted(s, v, right)
    seq = np.sort(rng.integers(0, 5, (2, 6)).astype(np.float32), axis=1)
    vals = rng.integers(-1, 6, (2, 4)).astype(np.float32)
    check_op([y], [s, v], {"s": seq, "v": vals}, tmp_path)


@pytest.mark.parametrize("out", [[3, 2], [5, 7], [1, 1]])
def test_adaptive_pools(out, tmp_path):
    x = ops8.parameter([2, 3, 5, 7], np.float32, name="x")
    size = ops8.constant(np.array(out, np.int64))
    a = ops8.adaptive_avg_pool(x, size)
    m = ops8.adaptive_max_pool(x, size, "i32")  # the CPU plugin has no i64 indices here
    check_op([a, m.output(0), m.output(1)], [x], {"x": rand(rng, 2, 3, 5, 7)}, tmp_path,
             rtol=1e-5, atol=1e-6)


def test_adaptive_pool_1d(tmp_path):
    x = ops8.parameter([1, 2, 9], np.float32, name="x")
    size = ops8.constant(np.array([4], np.int64))
    m = ops8.adaptive_max_pool(x, size, "i32")
    check_op([ops8.adaptive_avg_pool(x, size), m.output(0), m.output(1)], [x],
             {"x": rand(rng, 1, 2, 9)}, tmp_path, rtol=1e-5, atol=1e-6)


def test_grid_sample_bicubic_border_refused(tmp_path):
    """The CPU plugin's bicubic border padding differs from ONNX GridSample's."""
    x = ops9.parameter([1, 1, 4, 4], np.float32, name="x")
    g = ops9.parameter([1, 2, 2, 2], np.float32, name="g")
    y = ops9.grid_sample(x, g, {"align_corners": False, "mode": "bicubic",
                                "padding_mode": "border"})
    path = save(ov.Model([y], [x, g]), tmp_path)
    with pytest.raises(UnsupportedError, match="GridSample"):
        read(path)
