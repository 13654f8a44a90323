"""Small helpers for tests that build ONNX models by hand and compare engines."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper
from onnx import helper as h

import itergraph as ig

F, I64, B, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.INT32
BACKEND = "numpy"  # what `run_ig` runs on; the `backend` fixtures of test folders switch it


def vi(name: str, elem=F, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def const(name: str, value, dtype=None) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def model(nodes, inputs, outputs, inits=(), opset: int = 21, name: str = "g") -> onnx.ModelProto:
    g = h.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=min(10, _ir(opset)))
    onnx.checker.check_model(m, full_check=True)
    return m


def _ir(opset: int) -> int:
    return 3 if opset < 7 else 4 if opset < 9 else 5 if opset < 11 else 7 if opset < 13 else 10


def body(nodes, inputs, outputs, inits=(), name: str = "body") -> onnx.GraphProto:
    return h.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))


def run_ort(m: onnx.ModelProto, feeds: dict) -> dict:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return dict(zip(names, s.run(None, feeds)))


def run_ig(m: onnx.ModelProto, feeds: dict, **kw) -> dict:
    kw.setdefault("backend", BACKEND)
    return ig.load(m).run(feeds, **kw)


def assert_same(got: dict, want: dict, rtol=1e-5, atol=1e-6) -> None:
    assert list(got) == list(want), (list(got), list(want))
    for k in want:
        g, w = got[k], want[k]
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w), k
            for a, b in zip(g, w):
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=k)
            continue
        g = np.asarray(g)
        w = np.asarray(w)
        assert g.shape == w.shape, f"{k}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"{k}: dtype {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=k)
