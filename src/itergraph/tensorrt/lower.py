"""Lowering of ordinary layers to ONNX-standard IR nodes (opset `OPSET`), TensorRT semantics.

`Emitter` holds the IR being built (current graph, tensor -> IR value map, unique names);
every layer class lowers itself: ``layer.lower(em)`` emits the nodes of one layer and returns
the IR value of its output (a list for several outputs). `lower_layer` wraps it with what every
layer shares: the precision and output-type conversions, and binding the outputs.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..ir import Graph, Node, Value, tensor
from ..ir.builder import Builder, unique_name
from .core import FLOATS
from .enums import (
    ONNX_TYPE,
    DataType,
    to_ir,
    to_numpy,
)
from .shapes import ir_shape

OPSET = 18


class Emitter:
    """Builds IR graphs through the IR's node builder (`ir.builder.Builder`, at `OPSET`):
    names values uniquely (``name``, ``name_1`` ...) and maps network tensors to IR values.
    Nodes go to the current `graph`, constants to the top graph."""

    def __init__(self, top: Graph, reserved: dict[int, str]):
        self.top = top
        self.graph = top
        self.values: dict[int, Value] = {}
        self._reserved = reserved  # id(tensor) -> exact name (network inputs/outputs)
        self.names: set[str] = set(reserved.values())
        self.node_names: set[str] = set()
        self.b = Builder(top, "", sep="", opset=OPSET, taken=self.names)
        self.prefix = ""
        self.checks: list[Value] = []  # INT64 zeros that fail when a run-time check fails

    # -- names ----------------------------------------------------------------------------
    def fresh(self, base: str, taken: set[str] | None = None) -> str:
        return unique_name(base, self.names if taken is None else taken)

    # -- values ---------------------------------------------------------------------------
    def value(self, t) -> Value:
        return self.values[id(t)]

    def bind(self, t, v: Value) -> Value:
        """Make `v` the IR value of network tensor `t` (named and typed after it)."""
        v.name = self._reserved.get(id(t)) or self.fresh(t.name)
        v.type = tensor(to_ir(t.dtype), ir_shape(t.shape))
        self.values[id(t)] = v
        return v

    def alias(self, t, v: Value) -> None:
        """Let tensor `t` stand for the existing value `v` (no new value)."""
        self.values[id(t)] = v

    def new_value(self, t) -> Value:
        """A fresh value (e.g. a body parameter) for tensor `t`."""
        return self.bind(t, Value())

    def node(self, op: str, inputs, attrs=None, n_out: int = 1):
        """Append an ONNX-standard node to the current graph; return its output value(s)."""
        outs = [Value(self.fresh(f"{self.prefix}/{op}_out")) for _ in range(n_out)]
        name = self.fresh(self.prefix if self.prefix not in self.node_names else
                          f"{self.prefix}/{op}", self.node_names)
        self.add(op, inputs, outs, attrs, name=name)
        return outs[0] if n_out == 1 else outs

    def add(self, op: str, inputs, outputs: list[Value], attrs=None, *, name: str,
            graph: Graph | None = None) -> Node:
        """Append the ONNX-standard node ``op(inputs) -> outputs`` named `name` to `graph`
        (default the current graph) and return it."""
        self.b.nodes = (self.graph if graph is None else graph).nodes
        return self.b.add(op, inputs, outputs, attrs, version=self.b.opset, name=name)

    def const(self, array, base: str | None = None) -> Value:
        """A constant, stored as an initializer of the top graph (usable from any body)."""
        return self.b.const(array, base or f"{self.prefix}/const")

    def scalar(self, x, dtype: DataType) -> Value:
        """The scalar `x` of `dtype`, one constant shared by every use."""
        return self.b.const(np.array(x, dtype=to_numpy(dtype)), f"scalar_{x}", shared=True)

    def ints(self, xs) -> Value:
        return self.const(np.array(list(xs), dtype=np.int64), f"{self.prefix}/ints")

    def as_int64(self, t) -> Value:
        """The IR value of integer tensor `t` as INT64 (folded when `t` is a constant)."""
        c = t.const_value()
        if c is not None:
            return self.const(c.astype(np.int64), f"{self.prefix}/i64")
        v = self.value(t)
        return v if t.dtype == DataType.INT64 else self.node("Cast", [v], {"to": 7})


def lower_layer(layer, em: Emitter) -> None:
    """Emit `layer` into the current graph and bind its output tensors.

    The layer's `precision` (a floating type) converts its floating inputs before the
    operation, and ``set_output_type(i, t)`` computes output i in type t; each output is then
    converted back to its tensor's type (TensorRT inserts those reformats). A layer without
    outputs (an assertion) leaves a check token in ``em.checks``.
    """
    em.prefix = layer.name
    layer.refresh()  # a layer left invalid after creation names its error before lowering
    saved = {}
    p = layer.precision if layer.precision_is_set else None
    if p is not None and p in FLOATS:
        for t in layer.inputs:
            dt = None if t is None else t.compute_dtype
            if dt in FLOATS and dt != p and id(t) not in saved:
                saved[id(t)] = em.values[id(t)]
                em.values[id(t)] = em.node("Cast", [saved[id(t)]], {"to": ONNX_TYPE[p]})
    try:
        out = layer.lower(em)
    except (ValueError, TypeError, OverflowError) as e:  # an attribute set to a bad value
        raise ModelError(f"{layer.what()}: {type(e).__name__}: {e}") from None
    finally:
        em.values.update(saved)
    if not layer.outputs:
        em.checks.append(out)
        return
    outs = out if isinstance(out, list) else [out]
    for i, (t, v) in enumerate(zip(layer.outputs, outs)):
        want = t.compute_dtype
        if want in FLOATS:
            ot = layer.output_types.get(i)
            if ot is not None and ot in FLOATS and ot != (p or want):
                v = em.node("Cast", [v], {"to": ONNX_TYPE[ot]})
            if (ot is not None and ot in FLOATS and ot != want) or (
                    p is not None and p in FLOATS and p != want and saved):
                v = em.node("Cast", [v], {"to": ONNX_TYPE[want]})
        em.bind(t, v)
