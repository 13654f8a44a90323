"""Building the nodes that replace a fused loop (for `fuse_cells`): constants folded at once.

Not a pass. An `Emitter` collects new nodes for the graph enclosing one loop, to be put where
the loop was. Its operands are NumPy arrays (known now) or `Value`s (known when the graph
runs): an operation on arrays only is computed here, so the weights of a constant cell are
laid out once, by the pass, and the graph holds the result as an initializer; otherwise it
emits the ONNX node. `outer(v)` brings a loop-invariant body value out of the loop: a
constant, the outer value an invariant parameter is bound to, or a copy of the body nodes
computing it (folded when they are shape or arithmetic ops of constants).
"""

from __future__ import annotations

from typing import Union

import numpy as np

from ...ir.builder import Builder
from ...ir.clone import clone_node
from ...ir.graph import Graph, Node, Value
from ...ir.static_values import fold
from ...ir.types import DataType, TensorType
from ..loop_motion import LoopScope, const_value
from .affine import Inv

Operand = Union[np.ndarray, Value]

# versions of the ONNX ops emitted (inputs/attributes as in these versions)
VERSIONS = {"Transpose": 13, "Squeeze": 13, "Unsqueeze": 13, "Reshape": 14, "Slice": 13,
            "Concat": 13, "Add": 14, "Mul": 14, "Expand": 13, "Identity": 16}



class Unfit(Exception):
    """The loop's constants do not fit the cell its body spells: the loop stays as it is, and
    running it reports the model's error."""

class Emitter:
    """New nodes and initializers for `graph`, replacing `loop` (see the module docstring)."""

    def __init__(self, graph: Graph, scope: LoopScope, prefix: str):
        self.graph = graph
        self.scope = scope
        # the IR's node builder makes the nodes and names ("prefix/what_n")
        self.builder = Builder(graph, prefix or "cell", sep="/")
        self.nodes: list[Node] = self.builder.nodes
        self._outer: dict[int, Operand] = {}

    def _name(self, what: str) -> str:
        return self.builder.fresh(what)

    def value(self, x: Operand, what: str = "const") -> Value:
        """`x` as a Value (an array becomes a new initializer of the graph)."""
        if isinstance(x, Value):
            return x
        arr = np.ascontiguousarray(x)
        v = Value(self._name(what), TensorType(DataType.from_numpy(arr.dtype), arr.shape), arr)
        self.graph.initializers.append(v)
        return v

    def node(self, op: str, inputs: list, attrs: dict | None = None, outputs=1,
             domain: str = "", version: int | None = None, name: str = "") -> Node:
        ins = [None if x is None else self.value(x) for x in inputs]
        outs = outputs if not isinstance(outputs, int) else [
            Value(self._name(op)) for _ in range(outputs)]
        return self.builder.add(op, ins, outs, attrs, domain=domain,
                                version=VERSIONS.get(op) if version is None else version,
                                name=name)

    def op(self, op: str, inputs: list, attrs: dict | None = None, out: Value | None = None
           ) -> Value:
        return self.node(op, inputs, attrs, outputs=1 if out is None else [out]).outputs[0]

    def bind(self, pairs: list[tuple[Operand, Value]]) -> None:
        """Make each `out` (an output of the replaced loop) hold its `x`, once every node is
        emitted: `x`'s node produces `out` itself when nothing else reads `x`, else an
        Identity does."""
        read = {v.uid for n in self.nodes for v in n.inputs if v is not None}
        wanted: dict[int, int] = {}
        for x, _ in pairs:
            if isinstance(x, Value):
                wanted[x.uid] = wanted.get(x.uid, 0) + 1
        for x, out in pairs:
            p = x.producer if isinstance(x, Value) else None
            if p is not None and p in self.nodes and x.uid not in read and wanted[x.uid] == 1:
                p.outputs[x.index] = out
                out.producer, out.index = p, x.index
            else:
                self.op("Identity", [x], out=out)

    # ------------------------------------------------------------------ array operations

    @staticmethod
    def _i64(xs) -> np.ndarray:
        return np.asarray(xs, dtype=np.int64)

    def transpose(self, x: Operand, perm: list[int]) -> Operand:
        if isinstance(x, np.ndarray):
            return x.transpose(perm)
        return self.op("Transpose", [x], {"perm": list(perm)})

    def squeeze(self, x: Operand, axes: list[int]) -> Operand:
        if isinstance(x, np.ndarray):
            return np.squeeze(x, tuple(axes))
        return self.op("Squeeze", [x, self._i64(axes)])

    def unsqueeze(self, x: Operand, axes: list[int]) -> Operand:
        if not axes:
            return x
        if isinstance(x, np.ndarray):
            return np.expand_dims(x, tuple(axes))
        return self.op("Unsqueeze", [x, self._i64(axes)])

    def slice(self, x: Operand, axis: int, lo: int, hi: int, step: int = 1) -> Operand:
        if isinstance(x, np.ndarray):
            idx = [slice(None)] * x.ndim
            idx[axis] = slice(lo, hi, step)
            return x[tuple(idx)]
        return self.op("Slice", [x, self._i64([lo]), self._i64([hi]), self._i64([axis]),
                                 self._i64([step])])

    def reverse(self, x: Operand, axis: int) -> Operand:
        return self.slice(x, axis, -1, -(2**63), -1)

    def scale(self, x: Operand, k: float) -> Operand:
        if k == 1.0:
            return x
        if isinstance(x, np.ndarray):
            return (x * np.asarray(k, x.dtype)).astype(x.dtype)
        return self.op("Mul", [x, np.asarray(k, self.dtype(x))])

    def add(self, a: Operand, b: Operand) -> Operand:
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return (a + b).astype(a.dtype)
        return self.op("Add", [a, b])

    def concat(self, xs: list[Operand], axis: int) -> Operand:
        if len(xs) == 1:
            return xs[0]
        if all(isinstance(x, np.ndarray) for x in xs):
            return np.concatenate(xs, axis=axis)
        return self.op("Concat", xs, {"axis": axis})

    def reshape(self, x: Operand, shape: Operand) -> Operand:
        if isinstance(x, np.ndarray) and isinstance(shape, np.ndarray) and not (shape == 0).any():
            return x.reshape([int(d) for d in shape])
        return self.op("Reshape", [x, shape])

    def vector(self, x: Operand, n: int) -> Operand:
        """A ``[1, n]``, ``[n]`` or one-element operand as a vector of n (`Unfit`: a constant
        of another size, which the loop itself refuses when it runs)."""
        if isinstance(x, np.ndarray):
            flat = x.reshape(-1)
            if flat.size not in (1, n):
                raise Unfit(f"a constant of {flat.size} elements where {n} are read")
            return np.broadcast_to(flat, (n,)).copy() if flat.size == 1 else flat.reshape(n)
        flat = self.op("Reshape", [x, self._i64([-1])])
        return self.op("Expand", [flat, self._i64([n])])

    def dtype(self, x: Operand) -> np.dtype:
        if isinstance(x, np.ndarray):
            return x.dtype
        t = x.type
        if isinstance(t, TensorType) and t.dtype is not None:
            return t.dtype.numpy
        return np.dtype(np.float32)

    # ------------------------------------------------------------------ invariants

    def inv(self, m: Inv) -> Operand:
        """The operand an `Inv` describes, computed before the loop."""
        x = self.outer(m.value)
        for step in m.steps:
            kind = step[0]
            if kind == "sq0":
                x = self.squeeze(x, [0])
            elif kind == "T":
                x = self.transpose(x, [1, 0])
            elif kind == "rows":
                x = self.slice(x, 0, step[1], step[2])
            elif kind == "cols":
                x = self.slice(x, -1 if isinstance(x, Value) else x.ndim - 1, step[1], step[2])
            elif kind == "scale":
                x = self.scale(x, step[1])
            elif kind == "vec":
                x = self.vector(x, step[1])
        return x

    def outer(self, v: Value) -> Operand:
        """Loop-invariant body value `v`, outside the loop."""
        got = self._outer.get(v.uid)
        if got is None:
            got = self._outer[v.uid] = self._outer_value(v)
        return got

    def _outer_value(self, v: Value) -> Operand:
        c = const_value(v)
        if c is not None:
            return c
        bound = self.scope.bound.get(v.uid)
        if bound is not None:
            c = const_value(bound)
            return bound if c is None else c
        if v.uid not in self.scope.defined:
            return v
        p = v.producer
        if p is None:  # a body initializer whose data is missing: cannot be
            raise ValueError(f"invariant '{v.name}' has no value")
        ins = [None if x is None else self.outer(x) for x in p.inputs]
        folded = _fold(p, ins, v.index) if p.domain == "" else None
        if folded is not None:
            return folded
        mapping = {x.uid: self.value(o) for x, o in zip(p.inputs, ins) if x is not None}
        copy = clone_node(p, mapping)
        self.nodes.append(copy)
        for old, new in zip(p.outputs, copy.outputs):
            self._outer[old.uid] = new
        return copy.outputs[v.index]


#: The ops `Emitter.outer` computes when their inputs are known (the layout ops of a cell's
#: weights); others are copied out of the loop.
_FOLDED = frozenset({"Identity", "Transpose", "Squeeze", "Unsqueeze", "Reshape", "Concat",
                     "Slice", "Split", "Add", "Sub", "Mul", "Neg"})


def _fold(p: Node, ins: list, index: int) -> np.ndarray | None:
    """`p`'s output `index` computed now (by the one constant evaluator,
    `ir.static_values.fold`), when its inputs are arrays and its op one of `_FOLDED`."""
    if any(x is not None and not isinstance(x, np.ndarray) for x in ins) or not ins \
            or p.op_type not in _FOLDED:
        return None
    outs = fold(p, ins)
    return None if outs is None or index >= len(outs) else outs[index]
