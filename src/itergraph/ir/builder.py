"""The IR's node builder: the one place passes make new nodes and constants.

`Builder(graph, prefix)` appends standard nodes to its `nodes` list (the caller places them)
and constants to `graph`'s initializers, every name fresh under `prefix`. `node` returns the
new node's output; `add` the node itself (several outputs, another domain, a given name).
Helpers spell the usual pieces (`unsqueeze`, `concat`, `piece`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .graph import Graph, Node, Value
from .types import DataType, TensorType, Type


def const_type(a: np.ndarray) -> TensorType:
    """The type of a constant holding `a`."""
    return TensorType(DataType.from_numpy(a.dtype), tuple(a.shape))


class Builder:
    """Nodes for `graph`, collected in `nodes` (the caller places them), and constants added
    to `graph` as initializers. Every name is ``prefix + sep + hint + "_" + n``."""

    def __init__(self, graph: Graph, prefix: str, sep: str = "_"):
        self.graph = graph
        self.prefix = prefix or "loop"
        self.sep = sep
        self.nodes: list[Node] = []
        self._n = 0

    def fresh(self, hint: str) -> str:
        self._n += 1
        return f"{self.prefix}{self.sep}{hint}_{self._n}"

    def const(self, array, hint: str = "c") -> Value:
        a = np.asarray(array)
        v = Value(self.fresh(hint), const_type(a), a)
        self.graph.initializers.append(v)
        return v

    def i64(self, values, hint: str = "c") -> Value:
        return self.const(np.asarray(values, np.int64), hint)

    def add(self, op: str, inputs: Iterable[Value | None], outputs: list[Value],
            attrs: dict[str, Any] | None = None, *, domain: str = "",
            version: int | None = None, name: str = "") -> Node:
        """Append ``op(inputs) -> outputs`` (named `name`, else a fresh name) and return it."""
        n = Node(op, list(inputs), outputs, attrs or {}, domain=domain, version=version,
                 name=name or self.fresh(op))
        self.nodes.append(n)
        return n

    def node(self, op: str, inputs: Iterable[Value | None], attrs: dict[str, Any] | None = None,
             *, out: Value | None = None, type: Type | None = None, version: int = 13,
             hint: str | None = None) -> Value:
        """Append ``op(inputs)`` and return its output (`out` when given, else a new value of
        `type`)."""
        if out is None:
            out = Value(self.fresh(hint or op.lower()), type)
        return self.add(op, inputs, [out], attrs, version=version).outputs[0]

    def unsqueeze(self, v: Value, axis: int, **kw) -> Value:
        return self.node("Unsqueeze", [v, self.i64([axis], "axes")], **kw)

    def concat(self, vals: list[Value], axis: int, out: Value | None = None) -> Value:
        if len(vals) == 1:
            return self.node("Identity", vals, out=out, version=16)
        return self.node("Concat", vals, {"axis": axis}, out=out)

    def piece(self, x: Value, axis: int, start: int, size: int, keep_axis: bool,
              type: Type | None = None) -> Value:
        """``x[start:start+size]`` along `axis`, the axis dropped when not `keep_axis` (then
        `size` is 1)."""
        if not keep_axis:
            return self.node("Gather", [x, self.i64(start, "index")], {"axis": axis}, type=type)
        return self.node("Slice", [x, self.i64([start], "start"), self.i64([start + size], "end"),
                                   self.i64([axis], "axis")], type=type)
