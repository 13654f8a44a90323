"""Helpers for the JAX backend tests: build ONNX/IR graphs, run both backends, compare."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper

from itergraph.backends import jax as jb
from itergraph.backends.numpy import run_graph as numpy_run
from itergraph.frontends.onnx import read
from itergraph.ir import Graph, Node, Value


def onnx_graph(nodes, inputs, outputs, inits=(), opset: int = 21) -> Graph:
    """An IR graph read from an ONNX model made of `nodes` (onnx.helper NodeProtos)."""
    g = h.make_graph(list(nodes), "g", list(inputs), list(outputs),
                     [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(inits).items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    return read(m)


def vi(name, dtype=onnx.TensorProto.FLOAT, shape=None):
    return h.make_tensor_value_info(name, dtype, shape)


def op(g: Graph, op_type: str, *ins, n_out: int = 1, version: int = 17, **attrs):
    """Append a standard-op node to hand-built IR graph `g`; returns its output(s)."""
    n = g.add(Node(op_type, ins, n_out, attrs, version=version))
    return n.outputs[0] if n_out == 1 else n.outputs


def const(value, dtype=None, name="") -> Value:
    return Value(name, const=np.asarray(value, dtype=dtype))


def assert_same(got: dict, want: dict, rtol=1e-5, atol=1e-6, exact_dtype=True) -> None:
    assert list(got) == list(want), (list(got), list(want))
    for k, w in want.items():
        g = got[k]
        if w is None or isinstance(w, list):
            assert type(g) is type(w), k
            continue
        w = np.asarray(w)
        assert isinstance(g, np.ndarray), (k, type(g))
        assert g.shape == w.shape, (k, g.shape, w.shape)
        if exact_dtype:
            assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=k)
        else:
            np.testing.assert_array_equal(g, w, err_msg=k)


def compare(graph: Graph, feeds: dict, rtol=1e-5, atol=1e-6, compiled=True, **kw):
    """Run `graph` on NumPy and JAX; assert equal results (and, by default, that the JAX
    run compiled everything). Returns (jax results, CompiledGraph)."""
    want = numpy_run(graph, feeds)
    cg = jb.compile_graph(graph, **kw)
    got = cg.run(feeds)
    assert_same(got, want, rtol=rtol, atol=atol)
    if compiled:
        bad = [r for r in cg.explain() if not r.compiles]
        assert not bad, bad
    return got, cg
