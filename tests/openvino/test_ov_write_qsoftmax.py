"""ONNX Runtime's ``QLinearSoftmax`` written to OpenVINO IR (`frontends/onnx/contrib_qsoftmax`):
OpenVINO's CPU plugin on itergraph's IR gives ONNX Runtime's codes exactly, for rows of
fewer than 16 codes (a classifier's head: ``quantize_static`` in QOperator format); longer
rows, which ONNX Runtime rounds with a fused multiply-add, are refused, naming the node."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from ov_helpers import run_ov

import itergraph as ig

NP = {T.UINT8: np.uint8, T.INT8: np.int8}


def _model(rows: int, d: int, qt: int, axis: int):
    shape = [rows, d] if axis == -1 else [d, rows]
    zp = 0 if qt == T.UINT8 else -128
    inits = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in
             (("sx", 0.0731, np.float32), ("zx", 17 if qt == T.UINT8 else -3, NP[qt]),
              ("sy", 1 / 256, np.float32), ("zy", zp, NP[qt]))]
    node = h.make_node("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], ["y"],
                       domain="com.microsoft", axis=axis, opset=13)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", qt, shape)],
                     [h.make_tensor_value_info("y", qt, shape)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13),
                                          h.make_opsetid("com.microsoft", 1)], ir_version=8)


@pytest.mark.parametrize("qt", [T.UINT8, T.INT8])
@pytest.mark.parametrize("d,axis", [(4, -1), (15, -1), (7, 0)])
def test_codes_as_onnx_runtime(qt, d, axis, tmp_path):
    m = _model(64, d, qt, axis)
    info = np.iinfo(NP[qt])
    x = np.random.default_rng(d).integers(info.min, info.max + 1,
                                          (64, d) if axis == -1 else (d, 64)).astype(NP[qt])
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    ig.load(m).save(tmp_path / "m.xml")
    got = run_ov(tmp_path / "m.xml", {"x": x})[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_long_rows_are_refused(tmp_path):
    with pytest.raises(ig.UnsupportedError, match="QLinearSoftmax.*fewer than 16"):
        ig.load(_model(4, 16, T.UINT8, -1)).save(tmp_path / "m.xml")
