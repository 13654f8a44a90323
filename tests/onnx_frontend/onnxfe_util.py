"""Shared helpers for the ONNX frontend tests: model building and ONNX Runtime oracles."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as TP
from onnx import helper as h

from itergraph.frontends.onnx import read, write

ORT_MAX_IR = 13


def vi(name, dtype=TP.FLOAT, shape=None):
    """A tensor value info; `shape=None` means unknown rank."""
    return h.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, opset, initializers=(), name="main", **kw):
    g = h.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], **kw)
    m.ir_version = max(h.find_min_ir_version_for(list(m.opset_import), ignore_unknown=True), 4)
    return m


def ort_run(m: onnx.ModelProto, feeds: dict) -> list:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_same(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w)
            assert_same(g, w)
        elif w is None:
            assert g is None
        else:
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, (g.shape, w.shape)
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            np.testing.assert_allclose(g.astype(np.float64) if g.dtype.kind in "fiub" else g,
                                       w.astype(np.float64) if w.dtype.kind in "fiub" else w,
                                       rtol=1e-6, atol=1e-6)


def written(graph, opset=None) -> onnx.ModelProto:
    m = write(graph, opset)
    onnx.checker.check_model(m, full_check=True)
    m.ir_version = min(m.ir_version, ORT_MAX_IR)
    return m


def roundtrip(m: onnx.ModelProto, feeds_list: list[dict], opset=None):
    """read -> write -> ONNX Runtime equals ONNX Runtime on the original, for every feed."""
    g = read(m)
    m2 = written(g, opset)
    for feeds in feeds_list:
        assert_same(ort_run(m2, feeds), ort_run(m, feeds))
    return g, m2


def numpy_backend():
    """`run_graph` of the NumPy backend."""
    from itergraph.backends.numpy import run_graph

    return run_graph


def check_numpy(g, m: onnx.ModelProto, feeds_list: list[dict]) -> None:
    """Imported graph run on the NumPy backend equals ONNX Runtime on the original model."""
    run_graph = numpy_backend()
    for feeds in feeds_list:
        out = run_graph(g, feeds)
        assert_same(list(out.values()), ort_run(m, feeds))
