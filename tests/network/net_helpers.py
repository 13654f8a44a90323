"""Helpers for the network-definition API tests: building, running on itergraph and ORT."""

from __future__ import annotations

import numpy as np

import itergraph.network as trt
from itergraph.backends.numpy import run_graph


def new_network():
    return trt.Builder(trt.Logger()).create_network()


def const(net, value, dtype=None):
    arr = np.asarray(value, dtype=dtype)
    return net.add_constant(arr.shape, arr).get_output(0)


def i32(net, v: int):
    """A 0-D INT32 constant (trip counts, lengths)."""
    return const(net, np.int32(v))


def ew(net, a, b, op):
    return net.add_elementwise(a, b, op).get_output(0)


def output(net, tensor, name: str):
    tensor.name = name
    net.mark_output(tensor)
    return tensor


def run(net, feeds=None, **kw) -> dict:
    return run_graph(net.to_graph(), feeds or {}, **kw)


def run_ort(net, feeds=None) -> dict:
    """Export the network through the ONNX writer and run it in ONNX Runtime."""
    import onnx
    import onnxruntime as ort

    from itergraph.frontends.onnx import write

    model = write(net.to_graph())
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds or {})))


def assert_outputs(got: dict, want: dict, rtol=1e-6, atol=1e-6):
    assert list(got) == list(want), (list(got), list(want))
    for k, w in want.items():
        g = got[k]
        w = np.asarray(w)
        assert g.shape == w.shape, (k, g.shape, w.shape)
        assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=k)
