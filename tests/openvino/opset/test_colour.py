"""NV12toRGB/BGR-8 and I420toRGB/BGR-8 against OpenVINO: read (as ONNX arithmetic), run on NumPy
and JAX, written back, and converted to ONNX for ONNX Runtime. Single-plane and multi-plane
inputs, u8 and f32, static and dynamic shapes."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset8 as ops8
import pytest
from opcheck import check_op
from ov_helpers import run_ov, save

import itergraph as ig

rng = np.random.default_rng(13)
CONVERT = {"NV12toRGB": ops8.nv12_to_rgb, "NV12toBGR": ops8.nv12_to_bgr,
           "I420toRGB": ops8.i420_to_rgb, "I420toBGR": ops8.i420_to_bgr}


def _image(shape, dtype):
    if dtype == np.uint8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.uniform(0, 255, shape).astype(dtype)


def _planes(kind: str, n: int, h: int, w: int, dtype, single: bool, dynamic: bool):
    dims = (lambda s: [-1 if i else d for i, d in enumerate(s)]) if dynamic else list
    if single:
        shapes = {"y": (n, h * 3 // 2, w, 1)}
    elif kind.startswith("NV12"):
        shapes = {"y": (n, h, w, 1), "uv": (n, h // 2, w // 2, 2)}
    else:
        shapes = {"y": (n, h, w, 1), "u": (n, h // 2, w // 2, 1), "v": (n, h // 2, w // 2, 1)}
    params = [ops8.parameter(dims(s) if not dynamic else [-1, -1, -1, s[3]], dtype, name=k)
              for k, s in shapes.items()]
    feeds = {k: _image(s, dtype) for k, s in shapes.items()}
    return params, feeds


@pytest.mark.parametrize("kind", list(CONVERT))
@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_colour(kind, single, dtype, tmp_path):
    params, feeds = _planes(kind, 2, 6, 8, dtype, single, dynamic=False)
    y = CONVERT[kind](*params)
    check_op([y], params, feeds, tmp_path, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("kind", ["NV12toBGR", "I420toRGB"])
@pytest.mark.parametrize("single", [True, False])
def test_colour_dynamic(kind, single, tmp_path):
    params, feeds = _planes(kind, 1, 10, 6, np.float32, single, dynamic=True)
    y = CONVERT[kind](*params)
    check_op([y], params, feeds, tmp_path, atol=1e-3)


def _loop_reference(y: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """NV12 -> RGB per pixel as the spec writes it, in float64, before clipping and rounding."""
    n, h, w, _ = y.shape
    out = np.zeros((n, h, w, 3))
    for b in range(n):
        for i in range(h):
            for j in range(w):
                c = float(y[b, i, j, 0]) - 16
                d = float(uv[b, i // 2, j // 2, 0]) - 128
                e = float(uv[b, i // 2, j // 2, 1]) - 128
                out[b, i, j] = (1.164 * c + 1.596 * e, 1.164 * c - 0.391 * d - 0.813 * e,
                                1.164 * c + 2.018 * d)
    return out


def test_colour_dynamic_u8_rounding(tmp_path):
    """u8 outputs round to nearest. Off ties every runner equals the plain loop; at a tie
    (x.5 in exact arithmetic) the float32 rounding of the products decides, differently in
    itergraph and in the CPU plugin's static and dynamic-shape kernels: one step at most."""
    rng_t = np.random.default_rng(5)
    y = rng_t.integers(0, 256, (40, 10, 8, 1)).astype(np.uint8)
    uv = rng_t.integers(0, 256, (40, 5, 4, 2)).astype(np.uint8)
    exact = _loop_reference(y, uv)
    ties = (np.abs(exact - np.floor(exact) - 0.5) < 1e-6) & (exact > 0) & (exact < 255)
    assert ties.any()
    feeds = {"y": y, "uv": uv}
    got = {}
    for dims in ("static", "dynamic"):
        shapes = ([40, 10, 8, 1], [40, 5, 4, 2]) if dims == "static" else \
            ([-1, -1, -1, 1], [-1, -1, -1, 2])
        py = ops8.parameter(shapes[0], np.uint8, name="y")
        puv = ops8.parameter(shapes[1], np.uint8, name="uv")
        path = save(ov.Model([ops8.nv12_to_rgb(py, puv)], [py, puv]), tmp_path, dims)
        got[dims] = run_ov(path, feeds)[0]
        m = ig.load(path)
        for backend in ("numpy", "jax"):
            got[dims, backend] = list(m.run(feeds, backend=backend).values())[0]
    want = np.floor(np.clip(exact, 0, 255) + 0.5).astype(np.uint8)
    for key, value in got.items():
        np.testing.assert_array_equal(value[~ties], want[~ties], err_msg=str(key))
        assert np.abs(value[ties].astype(int) - want[ties]).max() <= 1
