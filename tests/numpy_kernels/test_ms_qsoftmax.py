"""ONNX Runtime's ``QLinearSoftmax`` (``com.microsoft``; ``quantize_static`` in QOperator
format writes it for every ``Softmax``) on both backends against ONNX Runtime (one thread):
rows shorter and longer than MLAS's blocks of 16 and 32 codes, uint8 and int8, the opset-12
(flattened rows) and opset-13 (one axis) forms. Codes are equal on CPUs with AVX-512 (MLAS's
kernel there, whose summation order `semantics.ms_qsoftmax` follows); elsewhere MLAS sums in
another order, and a code may differ by one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from onnx_builders import run_ort

AVX512 = "avx512f" in (Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists()
                       else "")


def _model(shape, dt, axis: int, opset: int, sx: float):
    tt = T.UINT8 if dt == np.uint8 else T.INT8
    zy = 0 if dt == np.uint8 else -128
    consts = {"sx": np.float32(sx), "zx": np.array(3, dt), "sy": np.float32(1 / 256),
              "zy": np.array(zy, dt)}
    n = h.make_node("QLinearSoftmax", ["x", *consts], ["y"],
                    domain="com.microsoft", axis=axis, opset=opset)
    g = h.make_graph([n], "g", [h.make_tensor_value_info("x", tt, list(shape))],
                     [h.make_tensor_value_info("y", tt, None)],
                     [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    return h.make_model(g, ir_version=8, opset_imports=[h.make_opsetid("", 17),
                                                        h.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize(("shape", "dt", "axis", "opset", "sx"), [
    ((4, 5), np.uint8, -1, 13, 0.1),
    ((3, 70), np.uint8, -1, 13, 0.02),
    ((3, 45), np.int8, 1, 13, 0.37),
    ((2, 3, 17), np.int8, -1, 13, 0.05),
    ((2, 6, 3), np.uint8, 1, 13, 0.2),
    ((2, 4, 9), np.uint8, 1, 12, 0.03),
])
def test_qlinear_softmax(shape, dt, axis, opset, sx):
    lo, hi = (0, 255) if dt == np.uint8 else (-128, 127)
    x = np.random.default_rng(len(shape) * 100 + shape[-1]).integers(lo, hi + 1, shape) \
        .astype(dt)
    m = _model(shape, dt, axis, opset, sx)
    want = run_ort(m, {"x": x})["y"]
    for backend in ("numpy", "jax"):
        got = np.asarray(ig.load(m).run({"x": x}, backend=backend)["y"])
        assert got.dtype == want.dtype and got.shape == want.shape, backend
        diff = np.abs(got.astype(int) - want.astype(int)).max()
        assert diff <= (0 if AVX512 else 1), (backend, diff)
