"""The conformance check of one OpenVINO op model: `ov_helpers.check_model` (OpenVINO vs
itergraph on NumPy and JAX, then OpenVINO on itergraph's written IR), then, where the op maps to
ONNX, itergraph's ONNX copy run by ONNX Runtime against OpenVINO's output."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
from ov_helpers import assert_close, check_model, record, run_ov

import itergraph as ig


def check_op(outs, params, feeds: dict, tmp_path, rtol=1e-5, atol=1e-5, to_onnx: bool = True,
             write_back: bool = True, onnx_runner: str = "ort", compress: bool = False):
    """Check the model computing `outs` from `params` (OpenVINO outputs or nodes). The ONNX copy
    runs in ONNX Runtime, or in OpenVINO (``onnx_runner="openvino"``) where it holds ops of the
    ``org.openvinotoolkit`` domain, which only OpenVINO's ONNX frontend knows."""
    outs = [o.output(0) if hasattr(o, "output") else o for o in outs]
    model = ov.Model(outs, params)
    g, want = check_model(model, feeds, tmp_path, rtol, atol, write_back=write_back,
                          compress=compress)
    if to_onnx:
        path = tmp_path / "written.onnx"
        ig.save(ig.load(g), path)
        if onnx_runner == "openvino":
            got = run_ov(path, feeds)
        else:
            onnx.checker.check_model(str(path), full_check=True)
            sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            got = sess.run(None, feeds)
        assert len(got) == len(want)
        for i, (a, b) in enumerate(zip(got, want)):
            assert_close(a, b, rtol, atol, f"ONNX Runtime output {i}")
        record({op.get_type_name() for op in model.get_ordered_ops()}, "onnx")
    return g, want


def rand(rng: np.random.Generator, *shape, dtype=np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)
