"""Emitting ONNX nodes into a node list, with integer expressions folded when constant.

`Emitter` appends ``NodeProto``s to one list (a graph's or a loop body's) and names their
outputs through the model-wide `Namer` of :mod:`.naming`. `Int` values are either Python ints
(known when writing) or names of int64 scalars computed at run time; arithmetic on two known
ints folds, so static shapes give constant trip counts and slice bounds.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from .types import tensor_to_onnx

Int = int | str  # a known int, or the name of an int64 scalar tensor
INT64_MAX = 2**63 - 1


class Emitter:
    def __init__(self, nodes: list[onnx.NodeProto], namer, opset: int, prefix: str = ""):
        self.nodes = nodes
        self.namer = namer
        self.opset = opset
        self.prefix = prefix
        self._consts: dict[tuple, str] = {}
        self._shapes: dict[str, str] = {}

    def fresh(self, hint: str) -> str:
        return self.namer.fresh(f"{self.prefix}{hint}")

    def op(self, op_type: str, inputs: list[str], hint: str = "", n_out: int = 1,
           out: str | None = None, **attrs) -> str | list[str]:
        """Append one node; `out` names its (single) output, else fresh names are made."""
        outs = [out] if out is not None else [self.fresh(hint or op_type.lower())
                                              for _ in range(n_out)]
        node = helper.make_node(op_type, inputs, outs, name=self.fresh(f"{hint or op_type}_node"),
                                **attrs)
        self.nodes.append(node)
        return outs[0] if n_out == 1 else outs

    def const(self, value, hint: str = "const", dtype=np.int64) -> str:
        """A ``Constant`` (emitted once per value in this emitter's node list)."""
        arr = np.asarray(value, dtype=dtype) if dtype is not None else np.asarray(value)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._consts:
            self._consts[key] = self.op("Constant", [], hint, value=tensor_to_onnx(arr))
        return self._consts[key]

    def shape(self, x: str) -> str:
        """``Shape(x)`` (emitted once per tensor in this emitter's node list)."""
        if x not in self._shapes:
            self._shapes[x] = self.op("Shape", [x], "shape")
        return self._shapes[x]

    # int64 scalars ------------------------------------------------------------------------

    def name_of(self, x: Int) -> str:
        return self.const(x, "int") if isinstance(x, int) else x

    def _bin(self, op: str, a: Int, b: Int, fold) -> Int:
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        return self.op(op, [self.name_of(a), self.name_of(b)], op.lower())

    def add(self, a: Int, b: Int) -> Int:
        if b == 0:
            return a
        if a == 0:
            return b
        return self._bin("Add", a, b, lambda x, y: x + y)

    def sub(self, a: Int, b: Int) -> Int:
        if b == 0:
            return a
        return self._bin("Sub", a, b, lambda x, y: x - y)

    def mul(self, a: Int, b: Int) -> Int:
        if b == 1:
            return a
        if a == 1:
            return b
        return self._bin("Mul", a, b, lambda x, y: x * y)

    def min(self, a: Int, b: Int) -> Int:
        return a if a == b else self._bin("Min", a, b, min)

    def max(self, a: Int, b: Int) -> Int:
        return a if a == b else self._bin("Max", a, b, max)

    def div_nonneg(self, a: Int, b: int) -> Int:
        """``a // b`` for ``a >= 0``, ``b > 0`` (ONNX integer Div truncates; equal here)."""
        if b == 1:
            return a
        return self._bin("Div", a, b, lambda x, y: x // y)

    def dim(self, x: str, axis: int, known: int | None = None) -> Int:
        """Length of axis `axis` of tensor `x` (`known` when the type says so)."""
        if known is not None:
            return known
        return self.op("Gather", [self.shape(x), self.const(axis, "axis")], "dim", axis=0)

    def vec1(self, x: Int) -> str:
        """A 1-element int64 vector holding `x`."""
        if isinstance(x, int):
            return self.const([x], "vec")
        return self.op("Reshape", [x, self.const([1], "shape1")], "vec")

    # tensors -------------------------------------------------------------------------------

    def unsqueeze(self, x: str, axes: list[int]) -> str:
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.const(axes, "axes")], "unsqueeze")
        return self.op("Unsqueeze", [x], "unsqueeze", axes=axes)

    def squeeze(self, x: str, axes: list[int]) -> str:
        if self.opset >= 13:
            return self.op("Squeeze", [x, self.const(axes, "axes")], "squeeze")
        return self.op("Squeeze", [x], "squeeze", axes=axes)

    def slice(self, x: str, starts: list[Int], ends: list[Int], axes: list[int],
              steps: list[int] | None = None) -> str:
        ins = [x, self.vec(starts), self.vec(ends), self.const(axes, "axes")]
        if steps is not None:
            ins.append(self.const(steps, "steps"))
        return self.op("Slice", ins, "slice")

    def vec(self, xs: list[Int]) -> str:
        """An int64 vector of `xs` (ints, or names of scalars known only at run time)."""
        if all(isinstance(x, int) for x in xs):
            return self.const(xs, "vec")
        parts = [self.vec1(x) for x in xs]
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, "vec", axis=0)

    def reverse(self, x: str, axis: int) -> str:
        """`x` reversed along `axis` (a Slice with step -1)."""
        return self.slice(x, [-1], [-(2**63)], [axis], [-1])
