"""The IR's node builder: the one place that makes new nodes and constants.

`Builder(graph, prefix)` appends nodes to its `nodes` list (a list of its own that the caller
places, or a graph's own ``nodes`` to place them there) and constants to `graph`'s
initializers. Names are fresh: numbered (``prefix + sep + hint + "_" + n``), or, given the set
of names `taken`, ``prefix + sep + hint`` made unique against it (see `unique_name`); a caller
may also name a value or node itself. `node` makes a standard node at the builder's `opset`
and returns its output; `add` makes any node (several outputs, another domain, the version
given) and returns the node. Helpers spell the usual pieces (`unsqueeze`, `concat`, `piece`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .graph import Graph, Node, Value
from .types import DataType, TensorType, Type


def const_type(a: np.ndarray) -> TensorType:
    """The type of a constant holding `a`."""
    return TensorType(DataType.from_numpy(a.dtype), tuple(a.shape))


def unique_name(name: str, taken: set[str], again: str = "{}_{}", start: int = 1) -> str:
    """`name`, or when it is in `taken` the first ``again.format(name, k)`` (k = `start`,
    `start` + 1 ...) that is not; the name returned is added to `taken`."""
    out, k = name, start
    while out in taken:
        out, k = again.format(name, k), k + 1
    taken.add(out)
    return out


class Builder:
    """Nodes for `graph`, collected in `nodes`, and constants added to `graph` as
    initializers.

    `opset`: the version of the standard nodes `node` makes. `nodes`: the list new nodes are
    appended to (default a new one, placed by the caller). `taken`: a set of names in use;
    given, fresh names are ``prefix + sep + hint`` made unique against it (``again`` and
    ``start`` as in `unique_name`), else they are numbered by `counter` (default 1, 2, ...;
    builders may share one)."""

    def __init__(self, graph: Graph, prefix: str, sep: str = "_", *, opset: int = 13,
                 nodes: list[Node] | None = None, taken: set[str] | None = None,
                 again: str = "{}_{}", start: int = 1, counter: Iterator[int] | None = None):
        self.graph = graph
        self.prefix = prefix
        self.sep = sep
        self.opset = opset
        self.nodes: list[Node] = [] if nodes is None else nodes
        self.taken = taken
        self._again = (again, start)
        self._counter = itertools.count(1) if counter is None else counter
        self._shared: dict[tuple, Value] = {}

    def fresh(self, hint: str) -> str:
        """A new name for a value or node described by `hint`."""
        if self.taken is not None:
            return unique_name(f"{self.prefix}{self.sep}{hint}", self.taken, *self._again)
        return f"{self.prefix}{self.sep}{hint}_{next(self._counter)}"

    def const(self, array, hint: str = "c", *, name: str = "", type: Type | None = None,
              shared: bool = False) -> Value:
        """A new initializer of `graph` holding `array` (named `name`, else a fresh name; of
        `type`, else `const_type`). `shared`: reuse the one this builder made for an equal
        array (same dtype, shape and bytes)."""
        a = np.asarray(array)
        key = (a.dtype.str, a.shape, a.tobytes()) if shared else None
        if key in self._shared:
            return self._shared[key]
        v = Value(name or self.fresh(hint), const_type(a) if type is None else type, a)
        self.graph.initializers.append(v)
        if key is not None:
            self._shared[key] = v
        return v

    def i64(self, values, hint: str = "c", **kw) -> Value:
        return self.const(np.asarray(values, np.int64), hint, **kw)

    def add(self, op: str, inputs: Iterable[Value | None], outputs: list[Value] | int,
            attrs: dict[str, Any] | None = None, *, domain: str = "",
            version: int | None = None, name: str = "", at: int | None = None) -> Node:
        """Append ``op(inputs) -> outputs`` (named `name`, else a fresh name; inserted at
        index `at` of `nodes` when given) and return it. `version` is the node's as given."""
        n = Node(op, list(inputs), outputs, attrs or {}, domain=domain, version=version,
                 name=name or self.fresh(op))
        if at is None:
            self.nodes.append(n)
        else:
            self.nodes.insert(at, n)
        return n

    def node(self, op: str, inputs: Iterable[Value | None], attrs: dict[str, Any] | None = None,
             *, out: Value | None = None, type: Type | None = None, version: int | None = None,
             hint: str | None = None, name: str = "", node_name: str = "",
             at: int | None = None) -> Value:
        """Append the standard node ``op(inputs)`` (version `version`, else the builder's
        `opset`) and return its output: `out` when given, else a new value of `type` named
        `name` (else a fresh name). The node is named `node_name`, else `name`, else fresh."""
        if out is None:
            out = Value(name or self.fresh(hint or op.lower()), type)
        return self.add(op, inputs, [out], attrs, name=node_name or name, at=at,
                        version=self.opset if version is None else version).outputs[0]

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
