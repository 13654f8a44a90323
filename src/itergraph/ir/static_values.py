"""Values known before a run: the one constant evaluator of the IR.

`static_value(v)` is `v`'s value when it follows from constants and static shapes alone
(``Shape -> Gather``, ``Size``, ``Equal`` of those, a ``Cast`` of a constant, ...), else
None. Every pass and analysis asks it, so that they all agree on what is known.

Ops are computed by the NumPy backend's own kernels, which the IR cannot import: a runner
is injected with `set_kernel_runner` (`itergraph` registers the backend's, as it registers
``onnx.reference`` as the kernels' default). Without a runner only literal constants,
shapes and sizes are known. What is computed is bounded, so that a hostile file cannot make
an analysis allocate or work without limit:

- only small tensors: a constant or a result of more than `MAX_ELEMENTS` elements is not
  known, and ops whose result can outgrow their operands (``ConstantOfShape``, ``Expand``)
  are sized from their operands before they run;
- only ops whose result is no larger than their operands combined (the element-wise,
  broadcasting and reduction rows of `ir.traits`, and the data-movement ops of `_MOVES`);
- at most `MAX_DEPTH` producers up from the value asked about, and `MAX_NODES` nodes
  evaluated per question;
- a kernel that raises, or computes a floating-point error (an integer division by zero),
  leaves the value unknown: the run reports it, if the node runs at all.

The literal facts (`const_value`, `static_shape`, `partial_shape`) are read without
running anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from .graph import Node, Value
from .traits import Trait, traits
from .types import TensorType

MAX_ELEMENTS = 64  # the largest tensor the evaluator returns, reads or computes
MAX_DEPTH = 64  # producers followed up from the value asked about
MAX_NODES = 4096  # nodes evaluated for one question

#: Pure ops that move or select elements: their result is no larger than their operands
#: combined (``Gather``: the indices times one slice), so they are computed as any other.
_MOVES = frozenset({"CastLike", "Concat", "Constant", "Flatten", "Gather", "Reshape", "Slice",
                    "Split", "Squeeze", "Transpose", "Unsqueeze"})
#: Element-wise and reduction ops: results no larger than their (broadcast) operands.
_BOUNDED = Trait.UNARY | Trait.BROADCAST | Trait.REDUCTION

Runner = Callable[[Node, list], list]
_runner: Runner | None = None


def set_kernel_runner(runner: Runner | None) -> None:
    """Compute ops with `runner` (``runner(node, inputs) -> outputs``: `node` run once on
    its inputs, arrays or None for an omitted one; it may raise). ``None``: no runner."""
    global _runner
    _runner = runner


def const_value(v: Value | None) -> np.ndarray | None:
    """`v`'s value when it is an initializer or a standard ``Constant`` node's ``value``
    tensor (any size), else None. Nothing is computed."""
    if v is None:
        return None
    if v.const is not None and v.producer is None:
        return np.asarray(v.const)
    p = v.producer
    if (p is not None and p.op_type == "Constant" and p.domain == ""
            and "value" in p.attrs):
        return np.asarray(p.attrs["value"])
    return None


def static_shape(v: Value | None) -> tuple[int, ...] | None:
    """`v`'s shape when every dimension is known (constants and declared types), else None."""
    if v is None:
        return None
    if v.const is not None and v.producer is None:
        return tuple(np.shape(v.const))
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and all(
            isinstance(d, int) for d in t.shape):
        return tuple(t.shape)
    return None


_DIMS: ContextVar[dict[int, tuple] | None] = ContextVar("known_dims", default=None)


@contextmanager
def known_dims(dims: dict[int, tuple]) -> Iterator[None]:
    """Within the block, `partial_shape` (and so `static_value`) also knows these dimensions:
    value uid -> a shape tuple with None where a dimension is unknown (what a caller has
    learnt otherwise, e.g. a product's width from its weights)."""
    token = _DIMS.set({**(_DIMS.get() or {}), **dims})
    try:
        yield
    finally:
        _DIMS.reset(token)


def partial_shape(v: Value | None) -> tuple[int | None, ...] | None:
    """`v`'s dimensions with None where one is unknown (static, declared, or given by
    `known_dims`); None when its rank is unknown."""
    if v is None:
        return None
    full = static_shape(v)
    if full is not None:
        return full
    hint = (_DIMS.get() or {}).get(v.uid)
    t = v.type
    declared = None
    if isinstance(t, TensorType) and t.shape is not None:
        declared = tuple(d if isinstance(d, int) and d >= 0 else None for d in t.shape)
    if hint is None or declared is None:
        return hint if declared is None else declared
    if len(hint) != len(declared):
        return None
    return tuple(h if h is not None else d for h, d in zip(hint, declared))


def static_value(v: Value | None) -> np.ndarray | None:
    """`v`'s value when it follows from constants and static shapes alone and has at most
    `MAX_ELEMENTS` elements, else None."""
    if v is None:
        return None
    return _Evaluation().value(v, 0)


def static_int(v: Value | None) -> int | None:
    """`v`'s value as a Python int when it is a static one-element integer tensor."""
    got = static_value(v)
    if got is None or got.size != 1 or got.dtype.kind not in "iu":
        return None
    return int(got.reshape(()))


def fold(node: Node, args: list) -> list | None:
    """`node`'s outputs computed now from `args` (its inputs, arrays or None for an omitted
    one) with the injected kernels, when it is a pure standard op whose result is no larger
    than its operands (as `static_value` computes); None when it is not, or the kernel
    raises. `args` are not bounded: the caller already holds them (a pass laying out a
    cell's weights)."""
    t = traits(node.op_type, node.domain)
    if (_runner is None or node.domain != "" or node.subgraphs() or Trait.PURE not in t
            or not (t & _BOUNDED or node.op_type in _MOVES) or node.op_type == "Constant"):
        return None
    try:
        with np.errstate(all="raise"):
            outs = _runner(node, list(args))
    except Exception:  # the run reports it, if the node runs at all
        return None
    return [o if isinstance(o, np.ndarray) else None for o in outs]


class _Unknown(Exception):
    pass


class _Evaluation:
    """One question to the evaluator: what it has computed so far (value uid -> value, None
    when unknown), how many more nodes it may evaluate, and how often a bound cut it short
    (what a bound left unknown is not remembered: a shorter path may still reach it)."""

    def __init__(self):
        self.known: dict[int, np.ndarray | None] = {}
        self.budget = MAX_NODES
        self.cuts = 0

    def value(self, v: Value, depth: int) -> np.ndarray | None:
        if v.uid in self.known:
            return self.known[v.uid]
        literal = const_value(v)
        if literal is not None or v.producer is None:
            self.known[v.uid] = _small(literal)
            return self.known[v.uid]
        if depth >= MAX_DEPTH or self.budget <= 0:
            self.cuts += 1
            return None
        self.budget -= 1
        node, cuts = v.producer, self.cuts
        try:
            got = [_small(o) for o in self._node(node, depth)]
        except _Unknown:
            got = []
        outs = {out.uid: got[k] if k < len(got) else None
                for k, out in enumerate(node.outputs)}
        if self.cuts == cuts or got:
            self.known.update(outs)
        return outs.get(v.uid)

    def input(self, node: Node, i: int, depth: int) -> np.ndarray:
        """Input `i` of `node`; `_Unknown` when it is absent or not known."""
        x = node.inputs[i] if i < len(node.inputs) else None
        got = None if x is None else self.value(x, depth + 1)
        if got is None:
            raise _Unknown
        return got

    def _node(self, node: Node, depth: int) -> list:
        """The values of `node`'s outputs (None where unknown), or `_Unknown`."""
        if node.domain != "" or node.subgraphs():
            raise _Unknown
        op = node.op_type
        if op in ("Shape", "Size"):
            dims = self._dims(node, depth)
            if None in dims:
                raise _Unknown
            return [np.array(dims if op == "Shape" else int(np.prod(dims)), np.int64)]
        if op == "Gather" and _producer_op(node.inputs[0] if node.inputs else None) == "Shape":
            # known dimensions of a partly known shape (``Shape(x)[1]`` of a [batch, width] x)
            dims = np.array([-1 if d is None else d
                             for d in self._dims(node.inputs[0].producer, depth + 1)],
                            np.int64)
            idx = self.input(node, 1, depth)
            if idx.dtype.kind not in "iu" or ((idx < -len(dims)) | (idx >= len(dims))).any():
                raise _Unknown  # the Gather kernel names the bad index when it runs
            out = np.take(dims, idx, axis=0)
            if (out < 0).any():
                raise _Unknown
            return [out]
        t = traits(op, node.domain)
        sized = _SIZED.get(op)
        if _runner is None or Trait.PURE not in t or not (
                t & _BOUNDED or op in _MOVES or sized is not None):
            raise _Unknown
        if op == "Constant" and "sparse_value" in node.attrs:
            raise _Unknown  # its dense form may be as large as the file says
        args = [None if x is None else self.input(node, i, depth)
                for i, x in enumerate(node.inputs)]
        try:
            if sized is not None and sized(args) > MAX_ELEMENTS:
                raise _Unknown
            with np.errstate(all="raise"):
                outs = _runner(node, args)
        except Exception:  # the run reports it, if the node runs at all
            raise _Unknown from None
        return [o if isinstance(o, np.ndarray) else None for o in outs]

    def _dims(self, shape_node: Node, depth: int) -> tuple:
        """The dimensions a ``Shape``/``Size`` node reads, None where unknown (a small
        computed tensor's are all known)."""
        x = shape_node.inputs[0] if shape_node.inputs else None
        dims = partial_shape(x)
        if dims is None:
            value = None if x is None else self.value(x, depth + 1)
            if value is None:
                raise _Unknown
            dims = value.shape
        if shape_node.op_type == "Size":
            return tuple(dims)
        start, end = shape_node.attrs.get("start", 0), shape_node.attrs.get("end", None)
        return tuple(dims)[start:end]


def _small(a: np.ndarray | None) -> np.ndarray | None:
    return a if a is not None and a.size <= MAX_ELEMENTS else None


def _producer_op(v: Value | None) -> str | None:
    p = v.producer if v is not None else None
    return p.op_type if p is not None and p.domain == "" else None


def _dims_size(dims) -> int:
    """Elements of a tensor of shape `dims` (an int vector); huge when it is no shape."""
    dims = [int(d) for d in np.ravel(dims)]
    return MAX_ELEMENTS + 1 if any(d < 0 for d in dims) else int(np.prod(dims, dtype=object))


def _expand_size(args) -> int:
    x, shape = args[0], args[1]
    dims = [int(d) for d in np.ravel(shape)]
    rank = max(len(dims), x.ndim)
    dims = [1] * (rank - len(dims)) + dims
    have = [1] * (rank - x.ndim) + list(x.shape)
    return _dims_size([max(d, h) for d, h in zip(dims, have)])


#: Ops whose result can outgrow their operands: the size of their result, from their
#: operands, checked before they run.
_SIZED: dict[str, Callable[[list], int]] = {
    "ConstantOfShape": lambda args: _dims_size(args[0]),
    "Expand": _expand_size,
}
