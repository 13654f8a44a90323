"""FakeConvert-13 against OpenVINO: read (as ONNX Cast to float8 between scale and shift),
run on NumPy and JAX, written back, and converted to ONNX for ONNX Runtime. Both destination
types, f32/f16 data, per-tensor and per-channel scale, with and without shift, values beyond
the 8-bit range (saturated), subnormals and exact ties."""

from __future__ import annotations

import numpy as np
import openvino.opset13 as ops13
import pytest
from opcheck import check_op

rng = np.random.default_rng(29)


def _data(shape, dtype):
    x = rng.standard_normal(shape) * 200
    flat = x.reshape(-1)
    special = np.concatenate([2.0 ** np.arange(-12, 17), [600, -600, 1e5, -1e5, 0, 464, 465,
                                                         0.0013, 3.0e-3]])
    flat[:special.size] = special[:flat.size]
    with np.errstate(over="ignore"):  # 1e5 is infinite in float16: saturated too
        return x.astype(dtype)


@pytest.mark.parametrize("dest", ["f8e4m3", "f8e5m2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("with_shift", [True, False])
def test_fake_convert_per_tensor(dest, dtype, with_shift, tmp_path):
    x = ops13.parameter([4, 16], dtype, name="x")
    scale = ops13.constant(np.array([0.5], dtype))
    shift = ops13.constant(np.array([1.25], dtype)) if with_shift else None
    y = ops13.fake_convert(x, scale, shift, dest) if with_shift else \
        ops13.fake_convert(x, scale, destination_type=dest)
    check_op([y], [x], {"x": _data((4, 16), dtype)}, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("dest", ["f8e4m3", "f8e5m2"])
def test_fake_convert_per_channel(dest, tmp_path):
    x = ops13.parameter([2, 3, 4, 4], np.float32, name="x")
    scale = ops13.constant(np.array([2.0, 0.25, 8.0], np.float32).reshape(1, 3, 1, 1))
    shift = ops13.constant(np.array([0.0, -3.0, 1.5], np.float32).reshape(1, 3, 1, 1))
    y = ops13.fake_convert(x, scale, shift, dest)
    check_op([y], [x], {"x": _data((2, 3, 4, 4), np.float32)}, tmp_path, rtol=0, atol=0)


def test_fake_convert_dynamic(tmp_path):
    """A scale of 3: the plugin divides by it through a reciprocal here (one ulp apart)."""
    x = ops13.parameter([-1, 5], np.float32, name="x")
    y = ops13.fake_convert(x, ops13.constant(np.float32([3.0])),
                           ops13.constant(np.float32([0.5])), "f8e5m2")
    check_op([y], [x], {"x": _data((7, 5), np.float32)}, tmp_path, rtol=3e-7,
             atol=0)
