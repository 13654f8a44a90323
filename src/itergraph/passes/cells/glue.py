"""A fused loop's step input and outputs as whole sequences (for `fuse_cells`).

Not a pass. A recurrent loop reads its step input ``x_t`` from a sliced input (ONNX Scan,
OpenVINO TensorIterator) or by ``Gather(X, iteration number)`` (ONNX Loop), and writes the new
state ``h_t`` through shape ops: ``Reshape``/``Squeeze`` of a ``[B, 1, I]`` slice, an
``Unsqueeze`` before OpenVINO concatenates along an existing axis. `step_input` finds where
the input comes from and every value that is the input through such *glue*; `lift` turns a
glue chain into the same ops over all steps at once (a new leading sequence axis), and
`output_chain` finds how a loop result derives from the cell's state.

Glue ops: ``Identity``, ``Squeeze``/``Unsqueeze`` with constant axes, ``Reshape`` with an
invariant shape (``allowzero=0``), ``Flatten`` with axis 0 or 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir.attributes import attr_or_default
from ...ir.canonical import int_operand
from ...ir.graph import Node, Value
from ...ir.loop import Loop
from ...ir.traits import Trait, has, transpose_perm
from ...ir.types import TensorType
from ..loop_motion import LoopScope, const_value
from .affine import inv_shape
from .emit import Emitter, Operand

Shape = tuple  # dims: int, or None when unknown


def _declared(v: Value | None) -> Shape | None:
    if v is None:
        return None
    if v.const is not None and v.producer is None:
        return tuple(np.shape(v.const))
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None:
        return None
    return tuple(d if isinstance(d, int) and d >= 0 else None for d in t.shape)


@dataclass
class StepInput:
    """The source of ``x_t``: `whole` (a body or outer value) holds every step along
    `axis`; a step's piece keeps that axis (size 1) when `keep_axis`. `reverse`: the loop
    walks it from the back. `strict`: iterating beyond its end is an error. `entry`: the
    piece's shape. `chains`: for each value that is the piece through glue (by uid), the glue
    nodes from the piece to it; `values` the values themselves."""

    whole: Value
    axis: int
    keep_axis: bool
    reverse: bool
    strict: bool
    entry: Shape
    chains: dict[int, list[Node]] = field(default_factory=dict)
    values: dict[int, Value] = field(default_factory=dict)


def _glue_ok(node: Node, scope: LoopScope) -> bool:
    if not has(node, Trait.RESHAPE) or not node.inputs:
        return False
    if node.inputs[0] is None or any(x is None or not scope.is_invariant(x)
                                     for x in node.inputs[1:]):
        return False
    if node.op_type in ("Squeeze", "Unsqueeze") and int_operand(node, 1) is None:
        return False
    if node.op_type == "Reshape" and (node.attrs.get("allowzero", 0) or len(node.inputs) < 2):
        return False
    return node.op_type != "Flatten" or int(node.attrs.get("axis", 1)) in (0, 1)


def step_input(loop: Loop, scope: LoopScope, skip: frozenset = frozenset(),
               only: Value | None = None) -> StepInput | None:
    """Where `loop`'s step input comes from, with the values derived from it by glue: its
    one sliced input, or its one ``Gather(X, iteration number)``, leaving out those whose
    body value (the sliced piece, the Gather's output) is in `skip` (uids); with `only`,
    the step input whose body value that is."""
    found = (_sliced_root(loop, skip, only) if loop.sliced else
             _gather_root(loop, scope, skip, only))
    if found is None:
        return None
    si, root = found
    si.chains[root.uid], si.values[root.uid] = [], root
    for n in loop.body.nodes:
        if n.inputs and n.inputs[0] is not None and n.inputs[0].uid in si.chains and _glue_ok(
                n, scope):
            si.chains[n.outputs[0].uid] = si.chains[n.inputs[0].uid] + [n]
            si.values[n.outputs[0].uid] = n.outputs[0]
    return si


def _sliced_root(loop: Loop, skip: frozenset, only: Value | None):
    ps = [p for p in loop.sliced if p.param.uid not in skip
          and (only is None or p.param is only)]
    if len(ps) != 1:
        return None
    p = ps[0]
    if p.part_size != 1 or abs(p.stride) != 1 or (p.start, p.end) not in ((0, -1), (-1, 0)):
        return None
    whole = _derived(p.value)
    piece = _declared(p.param)
    rank = len(whole) if whole is not None else (
        None if piece is None else len(piece) + (0 if p.keep_axis else 1))
    if rank is None or not -rank <= p.axis < rank:
        return None
    axis = p.axis % rank
    if piece is None and whole is not None:
        piece = whole[:axis] + ((1,) if p.keep_axis else ()) + whole[axis + 1:]
    if piece is None or len(piece) != rank - (0 if p.keep_axis else 1):
        return None
    si = StepInput(p.value, axis, p.keep_axis, p.stride < 0, loop.strict_slices, piece)
    return si, p.param


def _gather_root(loop: Loop, scope: LoopScope, skip: frozenset, only: Value | None):
    it = loop.iteration_param
    if it is None or loop.trip_count is None:
        return None
    t = it.type
    if not isinstance(t, TensorType) or t.shape is None or len(t.shape) != 0:
        return None
    gathers = [n for n in loop.body.nodes if n.op_type == "Gather" and n.domain == ""
               and len(n.inputs) == 2 and n.inputs[1] is it and n.inputs[0] is not None
               and scope.is_invariant(n.inputs[0]) and n.outputs[0].uid not in skip
               and (only is None or n.outputs[0] is only)]
    if len(gathers) != 1:
        return None
    g = gathers[0]
    data = _declared(g.inputs[0]) or inv_shape(g.inputs[0])
    if data is None and scope.bound.get(g.inputs[0].uid) is not None:
        data = _declared(scope.bound[g.inputs[0].uid])
    axis = int(g.attrs.get("axis", 0))
    if data is None:
        data = _derived(scope.bound.get(g.inputs[0].uid, g.inputs[0]))
    if data is None or not -len(data) <= axis < len(data):
        return None
    axis %= len(data)
    si = StepInput(g.inputs[0], axis, False, False, True, data[:axis] + data[axis + 1:])
    return si, g.outputs[0]




def _derived(v: Value, depth: int = 0) -> Shape | None:
    """`v`'s shape from the declared shape of what it is computed from, through
    ``Transpose``, shape-preserving and element-wise broadcasting ops and reductions with
    known axes (TensorFlow's time-major, possibly reversed or masked copy of a batch-major
    input, and Keras's mask of it, whose shapes exporters leave undeclared)."""
    shape = _declared(v)
    p = v.producer
    if shape is not None or p is None or p.domain != "" or depth > 12 or not p.inputs:
        return shape
    if has(p, Trait.SAME_SHAPE):
        return _derived(p.inputs[0], depth + 1)
    if p.op_type == "Transpose":
        shape = _derived(p.inputs[0], depth + 1)
        if shape is None:
            return None
        perm = transpose_perm(p, len(shape))
        ok = sorted(int(k) for k in perm) == list(range(len(shape)))
        return tuple(shape[int(k)] for k in perm) if ok else None
    if has(p, Trait.BROADCAST):  # the inputs' broadcast shape
        shapes = [None if x is None else _derived(x, depth + 1) for x in p.inputs]
        return None if None in shapes else _broadcast(shapes)
    if has(p, Trait.REDUCTION):
        return _reduced(p, _derived(p.inputs[0], depth + 1))
    return None


def _broadcast(shapes: list[Shape]) -> Shape | None:
    """The broadcast of `shapes` (None dims: unknown, taken as not 1 only where another
    operand's dim there is known and not 1)."""
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            return None
        out.append(known.pop() if known else (1 if all(d == 1 for d in dims) else None))
    return tuple(out)


def _reduced(p: Node, shape: Shape | None) -> Shape | None:
    if shape is None:
        return None
    axes = int_operand(p, 1)
    if axes is None or not all(-len(shape) <= int(a) < len(shape) for a in axes):
        return None
    axes = {int(a) % len(shape) for a in axes}
    if int(attr_or_default(p, "keepdims")):
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# ----------------------------------------------------------------------------- lifting


def chain_shape(shape: Shape, chain: list[Node]) -> Shape | None:
    """The shape `shape` has after the glue `chain` (None where it cannot be told)."""
    for n in chain:
        op = n.op_type
        r = len(shape)
        if op == "Unsqueeze":
            axes = sorted(a % (r + len(int_operand(n, 1))) for a in int_operand(n, 1))
            out = list(shape)
            for a in axes:
                out.insert(a, 1)
            shape = tuple(out)
        elif op == "Squeeze":
            gone = {a % r for a in int_operand(n, 1)}
            shape = tuple(d for i, d in enumerate(shape) if i not in gone)
        elif op == "Reshape":
            target = const_value(n.inputs[1])
            if target is None:
                ts = inv_shape(n.inputs[1])
                if ts is None or len(ts) != 1:
                    return None
                shape = (None,) * ts[0]
                continue
            out = [shape[i] if int(d) == 0 and i < r else int(d) for i, d in enumerate(target)]
            if -1 in out:
                known = [d for d in out if d != -1]
                total = None if None in shape or None in known else int(np.prod(shape))
                out[out.index(-1)] = None if total is None else total // max(
                    int(np.prod(known)), 1)
            shape = tuple(out)
        elif op == "Flatten":
            k = int(n.attrs.get("axis", 1))
            head = shape[:k]
            tail = shape[k:]
            shape = (1 if not head else (None if None in head else int(np.prod(head))),
                     None if None in tail else int(np.prod(tail)))
    return shape


def lift(em: Emitter, whole: Operand, chain: list[Node], rank: int) -> Operand | None:
    """`chain` applied to every step of `whole` (steps on a new leading axis; `rank`: the
    rank of one step before the chain)."""
    for n in chain:
        op = n.op_type
        if op == "Identity":
            continue
        if op == "Unsqueeze":
            axes = int_operand(n, 1)
            r = rank + len(axes)
            whole = em.unsqueeze(whole, sorted(a % r + 1 for a in axes))
            rank = r
        elif op == "Squeeze":
            axes = int_operand(n, 1)
            whole = em.squeeze(whole, sorted(a % rank + 1 for a in axes))
            rank -= len(set(a % rank for a in axes))
        elif op == "Reshape":
            target = em.outer(n.inputs[1])
            length = inv_shape(n.inputs[1])
            if length is None or len(length) != 1:
                return None
            whole = em.reshape(whole, em.concat([np.zeros(1, np.int64), target], 0))
            rank = length[0]
        elif op == "Flatten":
            k = int(n.attrs.get("axis", 1)) % (rank + 1) if rank else 0
            target = [0, 1, -1] if k == 0 else [0, 0, -1]
            whole = em.reshape(whole, np.asarray(target, np.int64))
            rank = 2
    return whole


def apply(em: Emitter, v: Value, chain: list[Node]) -> Operand:
    """`chain` applied to `v` once (the same nodes outside the loop)."""
    x: Operand = v
    for n in chain:
        rest = [em.outer(i) for i in n.inputs[1:]]
        x = em.node(n.op_type, [x, *rest], dict(n.attrs), version=n.version).outputs[0]
    return x


def output_chain(result: Value, anchors: dict, scope: LoopScope):
    """(anchor kind, anchor axes, glue from the anchor to `result`) or None."""
    from .match import strip

    chain: list[Node] = []
    v = strip(result)
    while v is not None and v.uid not in anchors:
        p = v.producer
        if p is None or not _glue_ok(p, scope) or v.uid not in scope.defined:
            return None
        chain.insert(0, p)
        v = strip(p.inputs[0])
    if v is None:
        return None
    kind, axes = anchors[v.uid]
    return kind, axes, chain
