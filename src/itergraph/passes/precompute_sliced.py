"""Computation on sliced inputs runs once over the whole input, before the loop.

In an RNN written as a loop, ``x_t @ W`` depends only on the sliced input ``x_t`` and the
invariant ``W``: ``X @ W`` on the whole stacked sequence, sliced the same way, gives the same
pieces with one large matrix product instead of one small product per iteration. This pass
moves such body nodes out of the loop; the body then reads their results through new
``Sliced`` ports.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import zip_longest

import numpy as np

from ..ir.canonical import int_operand
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Loop, Sliced
from ..ir.traits import Trait, traits
from ..ir.types import DataType, TensorType
from .base import LoopPass
from .loop_entry import cannot_raise, surely_entered
from .loop_motion import LoopScope, body_value_uses, is_pure, move_out

Shape = tuple  # element dims: int or None (unknown)


@dataclass(frozen=True)
class _Piece:
    """A body value that is piece k of the outer value `whole` in iteration k."""

    whole: Value
    axis: int  # >= 0, on `whole`
    rank: int  # of `whole`
    start: int
    end: int
    stride: int
    part_size: int
    keep_axis: bool
    elem: Shape | None  # shape of one piece, where known
    extent: int | None  # static length of `whole` on `axis`
    source: int  # id of the port it derives from

    def same_slicing(self, o: _Piece) -> bool:
        return (self.axis, self.rank, self.start, self.end, self.stride, self.part_size,
                self.keep_axis) == (o.axis, o.rank, o.start, o.end, o.stride, o.part_size,
                                    o.keep_axis)


class PrecomputeSliced(LoopPass):
    """Computation on sliced inputs runs once over the whole input, before the loop.

    Applies to: every canonical `Loop` at any depth, innermost first, whose iteration count
    is fixed when it starts: no condition result, no precondition, and no trip count unless
    it is a constant at least the static length of every sliced input on its axis (else the
    work for pieces that are never used could dominate). A body value is *sliced* when it is
    a ``Sliced`` port's parameter whose outer value has a known rank, or the output of a
    moved node. A pure single-output body node moves when it reads at least one sliced
    value, everything else it reads is loop-invariant (`loop_motion.LoopScope`), and it is
    one of:

    - an element-wise op (unary, ``Identity``, ``Clip``, ``Cast``, binary/variadic
      arithmetic, comparison, logic, ``Where``, ``PRelu``): sliced operands must come from
      slices with the same axis, rank, bounds and stride over inputs of equal static length
      on that axis (or from the same port); invariant operands must have a known rank that
      covers only axes after the sliced axis (so they broadcast the same way against the
      whole input); and the result must not be provably larger than the sliced operands (no
      broadcast that multiplies the work and memory by the loop length);
    - ``MatMul`` with the sliced operand on the left and an invariant rank-2 right-hand
      side, the sliced axis not being the contracted one; or with an invariant rank-2
      left-hand side and the sliced axis being a batch axis of the right-hand side;
    - ``Unsqueeze`` with constant axes (the sliced axis is carried over to the result).

    A moved node computes the whole result from the outer values (sliced values replaced by
    their whole inputs, invariant parameters by their outer values); its body output, where
    still read in the body or as a loop result, becomes the parameter of a new ``Sliced``
    port over that result with the original port's bounds, stride, part size and axis kind.
    The original ports stay (the iteration count is unchanged).

    Returns: the number of nodes moved.

    Guarantees: results equal the original's up to floating-point rounding of matrix
    products (BLAS may block a large product differently); element-wise results are
    identical. Errors are kept: the loop visits every piece, and a node that might raise
    moves only out of a loop that surely runs (`loop_entry`), as with `hoist_invariants`.
    """

    name = "precompute_sliced"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        return _precompute(graph, loop)


precompute_sliced = PrecomputeSliced()


# ----------------------------------------------------------------------------- analysis


def _shape(v: Value) -> Shape | None:
    if v.const is not None and isinstance(v.const, np.ndarray):
        return tuple(int(d) for d in v.const.shape)
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None:
        return tuple(d if isinstance(d, int) and d >= 0 else None for d in t.shape)
    return None


def _initial_pieces(loop: Loop) -> dict[int, _Piece]:
    pieces: dict[int, _Piece] = {}
    for p in loop.sliced:
        whole, elem = _shape(p.value), _shape(p.param)
        rank = len(whole) if whole is not None else (
            None if elem is None else len(elem) + (0 if p.keep_axis else 1))
        if rank is None or rank == 0:
            continue
        axis = p.axis + rank if p.axis < 0 else p.axis
        if not 0 <= axis < rank:
            continue
        if elem is not None and len(elem) != rank - (0 if p.keep_axis else 1):
            continue  # declared types disagree: leave the port alone
        extent = whole[axis] if whole is not None else None
        if elem is None and whole is not None:  # one piece of the whole
            elem = (*whole[:axis], p.part_size, *whole[axis + 1:]) if p.keep_axis else (
                *whole[:axis], *whole[axis + 1:])
        pieces[p.param.uid] = _Piece(p.value, axis, rank, p.start, p.end, p.stride,
                                     p.part_size, p.keep_axis, elem, extent, id(p))
    return pieces


def _count_is_fixed(loop: Loop, pieces: dict[int, _Piece]) -> bool:
    if loop.condition_result is not None or loop.precondition is not None:
        return False
    if loop.trip_count is None:
        return True
    trip = loop.trip_count.const
    if trip is None or np.size(trip) != 1:
        return False
    t = int(np.asarray(trip).reshape(()))
    extents = [p.extent for p in pieces.values()]
    return bool(extents) and all(e is not None and e <= t for e in extents)


def _invariant_shape(v: Value, scope: LoopScope) -> Shape | None:
    """Shape of an invariant operand: its own, or that of the outer value it is bound to."""
    s = _shape(v)
    if s is None and v.uid in scope.bound:
        s = _shape(scope.bound[v.uid])
    return s


def _broadcast(shapes: list[Shape | None]) -> Shape | None:
    if any(s is None for s in shapes):
        return None
    out = []
    for dims in zip_longest(*(reversed(s) for s in shapes), fillvalue=1):
        known = [d for d in dims if d is not None]
        if any(d is None for d in dims):
            big = [d for d in known if d != 1]
            out.append(big[0] if big else None)
        else:
            out.append(max(known))
    return tuple(reversed(out))


def _expands(result: Shape | None, operands: list[Shape | None]) -> bool:
    """True when the result provably holds more elements than every sliced operand."""
    if result is None:
        return False
    if None not in result and all(s is not None and None not in s for s in operands):
        return int(np.prod(result)) > max(int(np.prod(s)) for s in operands)
    for i in range(1, len(result) + 1):
        d = result[-i]
        if d is None or d == 1:
            continue
        if all(s is not None and (len(s) < i or s[-i] == 1) for s in operands):
            return True
    return False


def _elementwise(node: Node, args: list, scope: LoopScope) -> _Piece | None:
    """Result piece of an element-wise node; `args` holds a `_Piece` or an invariant Value."""
    pieces = [a for a in args if isinstance(a, _Piece)]
    first = pieces[0]
    for q in pieces[1:]:
        if not first.same_slicing(q):
            return None
        if q.source != first.source and (q.extent is None or q.extent != first.extent):
            return None
    room = first.rank - 1 - first.axis  # axes after the sliced one
    shapes = [a.elem if isinstance(a, _Piece) else _invariant_shape(a, scope) for a in args]
    for a, s in zip(args, shapes):
        if isinstance(a, Value) and (s is None or len(s) > room):
            return None
    elem = _broadcast(shapes)
    if _expands(elem, [q.elem for q in pieces]):
        return None
    return replace(first, elem=elem)


def _matmul(node: Node, args: list, scope: LoopScope) -> _Piece | None:
    a, b = args
    if isinstance(a, _Piece) and isinstance(b, Value):
        w = _invariant_shape(b, scope)
        if w is None or len(w) != 2 or a.axis > a.rank - 2:
            return None
        elem = None if a.elem is None or not a.elem else (*a.elem[:-1], w[1])
        return replace(a, elem=elem)
    if isinstance(b, _Piece) and isinstance(a, Value):
        w = _invariant_shape(a, scope)
        elem_rank = b.rank - (0 if b.keep_axis else 1)
        if w is None or len(w) != 2 or elem_rank < 2 or b.axis > b.rank - 3:
            return None
        elem = None if b.elem is None else (*b.elem[:-2], w[0], b.elem[-1])
        return replace(b, elem=elem)
    return None


def _unsqueeze(node: Node, piece: _Piece) -> tuple[_Piece, list[int]] | None:
    """The result piece and the axes to unsqueeze the whole input with."""
    axes = int_operand(node, 1)
    if axes is None:
        return None
    elem_rank = piece.rank - (0 if piece.keep_axis else 1)
    out_rank = elem_rank + len(axes)
    norm = sorted(a + out_rank if a < 0 else a for a in axes)
    if len(set(norm)) != len(norm) or not all(0 <= a < out_rank for a in norm):
        return None
    layout: list = []  # element result: "new" or the index of an element input dim
    nxt = 0
    for pos in range(out_rank):
        if pos in norm:
            layout.append("new")
        else:
            layout.append(nxt)
            nxt += 1
    if piece.keep_axis:
        full_layout = layout
        new_axis = layout.index(piece.axis)
    else:
        at = 0 if piece.axis == 0 else layout.index(piece.axis - 1) + 1
        full_layout = [*layout[:at], "sliced", *layout[at:]]
        new_axis = at
    full_axes = [i for i, x in enumerate(full_layout) if x == "new"]
    elem = None
    if piece.elem is not None:
        dims = iter(piece.elem)
        elem = tuple(1 if x == "new" else next(dims) for x in layout)
    return replace(piece, axis=new_axis, rank=piece.rank + len(axes), elem=elem), full_axes


# ----------------------------------------------------------------------------- rewrite


def _precompute(graph: Graph, loop: Loop) -> int:
    pieces = _initial_pieces(loop)
    if not pieces or not _count_is_fixed(loop, pieces):
        return 0
    scope = LoopScope(loop)
    entered = surely_entered(loop)
    chosen: list[tuple[Node, _Piece, list[int] | None]] = []
    for n in loop.body.nodes:
        if len(n.outputs) != 1 or n.subgraphs() or not is_pure(n):
            continue
        if not (entered or cannot_raise(n)):
            continue  # it would run (and might raise) where the loop runs no iteration
        args: list = []
        ok = True
        for v in n.inputs:
            if v is None:
                args.append(None)
            elif v.uid in pieces:
                args.append(pieces[v.uid])
            elif scope.is_invariant(v):
                args.append(v)
            else:
                ok = False
                break
        if not ok or not any(isinstance(a, _Piece) for a in args):
            continue
        result = _result_piece(n, args, scope)
        if result is None:
            continue
        piece, axes = result
        pieces[n.outputs[0].uid] = piece
        chosen.append((n, piece, axes))
    if not chosen:
        return 0
    _rewrite(graph, loop, scope, pieces, chosen)
    return len(chosen)


def _result_piece(n: Node, args: list, scope: LoopScope):
    op = n.op_type
    present = [a for a in args if a is not None]
    if Trait.UNARY in traits(op, n.domain) and len(present) == 1:
        return args[0], None
    if op == "Clip" and isinstance(args[0], _Piece) and all(
            isinstance(a, Value) or a is None for a in args[1:]):
        return args[0], None
    if (Trait.BROADCAST in traits(op, n.domain) and len(present) == len(args) >= 2
            and "broadcast" not in n.attrs):
        p = _elementwise(n, args, scope)
        return None if p is None else (p, None)
    if op == "MatMul" and len(present) == len(args) == 2:
        p = _matmul(n, args, scope)
        return None if p is None else (p, None)
    if op == "Unsqueeze" and isinstance(args[0], _Piece):
        return _unsqueeze(n, args[0])
    return None


def _rewrite(graph: Graph, loop: Loop, scope: LoopScope, pieces: dict[int, _Piece],
             chosen: list) -> None:
    outs: list[tuple[Value, _Piece]] = []
    for n, piece, axes in chosen:
        n.inputs = [pieces[v.uid].whole if v is not None and v.uid in pieces else v
                    for v in n.inputs]
        if axes is not None:
            _set_unsqueeze_axes(graph, n, axes)
        out = n.outputs[0]
        dtype = out.type.dtype if isinstance(out.type, TensorType) else None
        whole = Value(f"{out.name}_all" if out.name else "", TensorType(dtype, None))
        n.outputs = []
        n.adopt(whole)
        out.producer = None
        out.index = 0
        piece = pieces[out.uid] = replace(piece, whole=whole)
        scope.add_invariant(whole)
        outs.append((out, piece))
    move_out(graph, loop, scope, [n for n, _, _ in chosen])
    uses = body_value_uses(loop)
    for out, piece in outs:
        if uses.get(out.uid, 0):
            loop.body.inputs.append(out)
            loop.input_ports.append(Sliced(piece.whole, out, axis=piece.axis, start=piece.start,
                                           end=piece.end, stride=piece.stride,
                                           part_size=piece.part_size,
                                           keep_axis=piece.keep_axis))


def _set_unsqueeze_axes(graph: Graph, n: Node, axes: list[int]) -> None:
    old = n.inputs[1]
    c = Value(f"{old.name}_whole" if old.name else "", TensorType(DataType("int64"),
                                                                    (len(axes),)),
              const=np.array(axes, dtype=np.int64))
    graph.initializers.append(c)
    n.inputs[1] = c
