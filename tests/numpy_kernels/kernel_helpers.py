"""Calling one NumPy kernel directly on an IR node, and the same op through onnx.reference."""

from __future__ import annotations

from onnx import helper
from onnx.reference import ReferenceEvaluator

from itergraph.backends.numpy.kernels import factory_for
from itergraph.backends.numpy.plan import CompileContext
from itergraph.ir import Node, Value


def call(op: str, *inputs, version: int = 21, n_out: int = 1, **attrs):
    """Run `op` on `inputs` through its kernel (native or fallback) and return its result."""
    node = Node(op, [None if x is None else Value(f"in{i}") for i, x in enumerate(inputs)],
                n_out, attrs, version=version, name=f"{op.lower()}_under_test")
    return factory_for(op, version)(node, CompileContext())(*inputs)


def reference(op: str, *inputs, version: int = 21, n_out: int = 1, **attrs):
    """The same op through ``onnx.reference`` (an independent oracle)."""
    names = [f"in{i}" for i in range(len(inputs))]
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, **attrs)
    sess = ReferenceEvaluator(node, opsets={"": version})
    res = sess.run(None, dict(zip(names, inputs)))
    return res[0] if n_out == 1 else tuple(res)
