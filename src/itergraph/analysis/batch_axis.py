"""Proof that a graph computes per example along a batch axis, or the reason it may not.

`per_example(graph, axes)` follows the batch axes of the inputs (``{input name: axis}``)
through every node. A value is in one of two states:

- ``Batched(axis, rank)``: slice ``i`` along `axis` depends only on slice ``i`` of every
  batched input (and on batch-free values);
- ``Free(shape)``: it depends on no batched input at all (constants, weights, the other
  inputs, values computed from them only);
- ``Dims(entries)``: a shape read from a batched value (``Shape``, then Gather, Slice,
  Concat, Unsqueeze, Squeeze, Cast of it), whose entries are known ints, the batch extent
  ``N``, or extents of the example; it may only size a ``ConstantOfShape`` or an ``Expand``
  (which then yield a batched value with identical slices), or be the target of a
  ``Reshape`` of whole rows (``[N, ...]`` of a value batched on axis 0). Used as a number
  anywhere else it is refused: the batch size is not the same in a batched run.

An op is admitted only by a rule below that proves it keeps slices apart: element-wise ops
whose batch-free operands do not stretch along the batch axis, reductions, soft-maxes and
arg-maxes over other axes, matrix products that contract another axis, shape moves that
carry the axis along (Transpose, Squeeze, Unsqueeze, Slice, Split, Concat, Gather, Flatten,
and Reshape that copies a leading batch axis), the recurrent cells ``LSTM``/``GRU``/``RNN``
on their batch axis, and loops whose trip count and condition are batch-free, whose sliced
inputs are not sliced along the batch axis and whose carried values keep their state from
one iteration to the next. Anything else -- an op without a rule, a value whose rank is not
known where the rule needs it, the batch size used as a number, a loop
that stops on a batched condition (a decoder that ends when its example ends) -- makes the
answer "not provably per example", with the reason. The caller then runs examples one by one:
refusing a safe graph costs speed, admitting an unsafe one would cost correctness.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Node, Value
from ..ir.attributes import attr_or_default
from ..ir.loop import Concat, Invariant, Last, Loop, Sliced
from ..ir.padded_axes import Along, along
from ..ir.static_values import partial_shape, static_value
from ..ir.traits import Trait, normalized_axes, traits, transpose_perm
from ..ir.types import TensorType


@dataclass(frozen=True)
class Free:
    shape: tuple | None = None  # known dims (int, or None where unknown); None: rank unknown

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


@dataclass(frozen=True)
class Batched:
    axis: int
    rank: int


N = "N"  # an entry of `Dims` that is the batch extent


@dataclass(frozen=True)
class Dims:
    """A shape read from a batched value (an int64 vector, or a scalar when `scalar`): each
    entry is an int, `N` (the batch extent: the one way it depends on the batch) or None (an
    extent of the example, the same in a batched and a single run)."""
    entries: tuple
    scalar: bool = False

    @property
    def rank(self) -> int:
        return 0 if self.scalar else 1


State = Free | Batched | Dims


class NotPerExample(Exception):  # noqa: N818 - a verdict, caught by `per_example`
    """The graph is not provably per example; the message says where and why."""


@dataclass(frozen=True)
class Verdict:
    """`ok`: outputs per example; `outputs` maps each output name to its state."""
    ok: bool
    reason: str
    outputs: dict[str, State]


def per_example(graph: Graph, axes: dict[str, int]) -> Verdict:
    env: dict[int, State] = {}
    try:
        for v in graph.inputs:
            if v.name in axes:
                rank = _declared_rank(v)
                if rank is None:
                    raise NotPerExample(f"input '{v.name}' has no declared rank")
                a = axes[v.name]
                if not -rank <= a < rank:
                    raise NotPerExample(f"input '{v.name}' has rank {rank}, no axis {a}")
                env[v.uid] = Batched(a % rank, rank)
        _graph(graph, env)
        outs = {v.name: _state(env, v) for v in graph.outputs}
        dims = [n for n, st in outs.items() if isinstance(st, Dims)]
        if dims:
            raise NotPerExample(f"output '{dims[0]}' is a shape that holds the batch size")
    except NotPerExample as e:
        return Verdict(False, str(e), {})
    except Exception as e:  # a graph the rules misread: refusing is the safe answer
        return Verdict(False, f"the analysis failed ({type(e).__name__}: {e})", {})
    return Verdict(True, "every output is per example along the batch axis", outs)


def _declared_rank(v: Value) -> int | None:
    if v.const is not None:
        return np.ndim(v.const)
    return v.type.rank if isinstance(v.type, TensorType) else None


def _free_of(v: Value) -> Free:
    if v.const is not None:
        return Free(tuple(np.shape(v.const)))
    if isinstance(v.type, TensorType) and v.type.shape is not None:
        return Free(tuple(d if isinstance(d, int) and d >= 0 else None for d in v.type.shape))
    return Free()


def _state(env: dict[int, State], v: Value) -> State:
    s = env.get(v.uid)
    return s if s is not None else _free_of(v)


def _graph(g: Graph, env: dict[int, State]) -> None:
    for node in g.nodes:
        ins = [None if v is None else _state(env, v) for v in node.inputs]
        captured = [_state(env, v) for v in node.captured()]
        if isinstance(node, Loop):
            outs = _loop(node, env)
        elif not any(isinstance(s, Batched | Dims) for s in [*ins, *captured]):
            outs = [_free_of(v) for v in node.outputs]
        elif any(isinstance(s, Batched | Dims) for s in captured):
            raise NotPerExample(f"{_where(node)}: a subgraph reads a batched value")
        elif any(isinstance(s, Dims) for s in ins):
            outs = _dims_op(node, ins)
        else:
            outs = _op(node, ins)
        for v, s in zip(node.outputs, outs):
            if isinstance(s, Dims) and N not in s.entries:  # example extents only
                s = Free(() if s.scalar else (len(s.entries),))
            env[v.uid] = s


def _where(node: Node) -> str:
    return f"{node.op_type} '{node.name}'" if node.name else node.op_type


def _ints(node: Node, input_index: int) -> list[int] | None:
    """The axes of input `input_index` (the IR's one form takes them as an input:
    `ir.canonical`), None when absent; refused when not constant."""
    if input_index < len(node.inputs) and node.inputs[input_index] is not None:
        c = static_value(node.inputs[input_index])
        if c is None:
            raise NotPerExample(f"{_where(node)}: its axes are not constant")
        return [int(x) for x in np.atleast_1d(c)]
    return None


def _refuse(node: Node, why: str):
    raise NotPerExample(f"{_where(node)}: {why}")


def _only_first_batched(node: Node, ins: list) -> Batched:
    b = ins[0]
    if not isinstance(b, Batched) or any(isinstance(s, Batched) for s in ins[1:]):
        _refuse(node, "a batched value in an operand other than the data")
    return b


def _op(node: Node, ins: list) -> list[State]:
    """The rule of `node`'s kind in `ir.padded_axes` (what it does with a padded axis, which
    is what it does with the batch axis), else its own."""
    kind = along(node)
    if kind is Along.ELEMENTWISE:
        if Trait.BROADCAST in traits(node.op_type, node.domain):
            return [_broadcast(node, ins)]
        return [_only_first_batched(node, ins)] * len(node.outputs)
    if kind is Along.REDUCE:
        b = _only_first_batched(node, ins)
        axes = _ints(node, 1)
        if not axes:
            _refuse(node, "it reduces every axis, the batch axis among them")
        return [_drop_axes(node, b, axes, attr_or_default(node, "keepdims"))]
    if kind is Along.NORMALIZE:
        return _softmax(node, ins)
    if kind is Along.CONTRACT:
        return _matmul(node, ins)
    if kind is Along.LENGTH:
        return _shape(node, ins)
    rule = _RULES.get(node.op_type)
    if rule is None:
        _refuse(node, "no rule says this op keeps examples apart")
    return rule(node, ins)


def _norm(node: Node, a: int, rank: int) -> int:
    if not -rank <= a < rank:
        _refuse(node, f"axis {a} out of range for rank {rank}")
    return a % rank


def _drop_axes(node: Node, b: Batched, axes: list[int], keepdims) -> Batched:
    axes = [_norm(node, a, b.rank) for a in axes]
    if b.axis in axes:
        _refuse(node, "it folds the batch axis")
    if keepdims:
        return b
    return Batched(b.axis - sum(a < b.axis for a in axes), b.rank - len(set(axes)))


def _broadcast(node: Node, ins: list) -> Batched:
    present = [s for s in ins if s is not None]
    if any(s.rank is None for s in present):
        _refuse(node, "an operand's rank is unknown")
    r = max(s.rank for s in present)
    aligned = {s.axis + r - s.rank for s in present if isinstance(s, Batched)}
    if len(aligned) != 1:
        _refuse(node, "its operands carry the batch on different axes")
    a = aligned.pop()
    for s in present:
        if isinstance(s, Free):
            i = a - (r - s.rank)
            if i >= 0 and s.shape[i] != 1:
                _refuse(node, "a batch-free operand stretches along the batch axis")
    return Batched(a, r)


def _matmul(node: Node, ins: list) -> list[State]:
    a, b = ins[0], ins[1]
    if a.rank is None or b.rank is None or a.rank < 2 or b.rank < 2:
        _refuse(node, "an operand's rank is unknown or below 2")
    r = max(a.rank, b.rank)
    out_axis = set()
    for s, contracted in ((a, a.rank - 1), (b, b.rank - 2)):
        if isinstance(s, Batched):
            if s.axis == contracted:
                _refuse(node, "it contracts the batch axis")
            out_axis.add(s.axis + r - s.rank if s.axis < s.rank - 2 else
                         (r - 2 if s is a else r - 1))
    if len(out_axis) != 1:
        _refuse(node, "both operands are batched on different axes")
    k = out_axis.pop()
    if k < r - 2:  # a broadcast leading axis: the other operand must not stretch along it
        for s in (a, b):
            i = k - (r - s.rank)
            if isinstance(s, Free) and i >= 0 and (s.shape is None or s.shape[i] != 1):
                _refuse(node, "a batch-free operand stretches along the batch axis")
    elif any(isinstance(s, Batched) for s in (a, b)) and all(isinstance(s, Batched)
                                                             for s in (a, b)):
        _refuse(node, "both operands are batched")
    return [Batched(k, r)]


def _gemm(node: Node, ins: list) -> list[State]:
    a = _only_first_batched(node, ins)
    row_axis = 1 if attr_or_default(node, "transA") else 0
    if a.axis != row_axis:
        _refuse(node, "it contracts the batch axis")
    c = ins[2] if len(ins) > 2 else None
    if c is not None and (c.rank is None or (c.rank == 2 and c.shape[0] != 1)):
        _refuse(node, "its bias stretches along the batch axis")
    return [Batched(0, 2)]


def _transpose(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    perm = transpose_perm(node, b.rank)
    return [Batched(perm.index(b.axis), b.rank)]


def _concat(node: Node, ins: list) -> list[State]:
    if not all(isinstance(s, Batched) for s in ins):
        _refuse(node, "it joins batched and batch-free values")
    if len({(s.axis, s.rank) for s in ins}) != 1:
        _refuse(node, "its operands carry the batch on different axes")
    b = ins[0]
    if _norm(node, int(node.attrs.get("axis", 0)), b.rank) == b.axis:
        _refuse(node, "it joins along the batch axis")
    return [b]


def _along_other_axis(default: int):
    def rule(node: Node, ins: list) -> list[State]:
        b = _only_first_batched(node, ins)
        if _norm(node, int(node.attrs.get("axis", default)), b.rank) == b.axis:
            _refuse(node, "it works along the batch axis")
        return [b] * len(node.outputs)
    return rule


def _softmax(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    axes = normalized_axes(node, b.rank)
    if b.axis in axes:
        _refuse(node, "it works along the batch axis" if len(axes) == 1 else
                "it flattens the batch axis into the normalized axes")
    return [b]


def _arg_reduce(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    axis = int(attr_or_default(node, "axis"))
    return [_drop_axes(node, b, [axis], attr_or_default(node, "keepdims"))]


def _slice(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    starts = static_value(node.inputs[1]) if len(node.inputs) > 1 else None
    if starts is None:
        _refuse(node, "its starts are not constant")
    axes = _ints(node, 3)
    if axes is None:
        axes = list(range(len(np.atleast_1d(starts))))
    if b.axis in [_norm(node, a, b.rank) for a in axes]:
        _refuse(node, "it slices the batch axis")
    return [b]


def _gather(node: Node, ins: list) -> list[State]:
    data, idx = ins[0], ins[1]
    if idx.rank is None or data.rank is None:
        _refuse(node, "a rank is unknown")
    a = _norm(node, int(attr_or_default(node, "axis")), data.rank)
    r = data.rank + idx.rank - 1
    if isinstance(data, Batched) and isinstance(idx, Free):
        if data.axis == a:
            _refuse(node, "it gathers along the batch axis")
        return [Batched(data.axis if data.axis < a else data.axis + idx.rank - 1, r)]
    if isinstance(idx, Batched) and isinstance(data, Free):
        return [Batched(a + idx.axis, r)]
    _refuse(node, "both data and indices are batched")


def _squeeze(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    axes = _ints(node, 1)
    if not axes:
        _refuse(node, "without axes it may squeeze a batch axis of size 1")
    return [_drop_axes(node, b, axes, 0)]


def _unsqueeze(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    axes = _ints(node, 1)
    r = b.rank + len(axes)
    new = {_norm(node, a, r) for a in axes}
    kept = [i for i in range(r) if i not in new]
    return [Batched(kept[b.axis], r)]


def _reshape(node: Node, ins: list) -> list[State]:
    """A Reshape keeps slices apart when it moves whole slices: the dims before the batch axis
    multiply to the same count in the input and the target, and so do the dims after it (a
    target ``0`` copying a leading batch axis, or one ``-1`` standing for the batch extent)."""
    b = _only_first_batched(node, ins)
    shape = static_value(node.inputs[1]) if len(node.inputs) > 1 else None
    if shape is None or node.attrs.get("allowzero", 0):
        _refuse(node, "its target shape is not constant")
    shape = [int(x) for x in np.atleast_1d(shape)]
    if shape and shape[0] == 0 and b.axis == 0:
        return [Batched(0, len(shape))]
    dims = partial_shape(node.inputs[0])
    if dims is None or len(dims) != b.rank or shape.count(-1) != 1:
        _refuse(node, "it may mix the batch axis with others")
    k = shape.index(-1)
    target = [dims[i] if x == 0 and i < len(dims) else x for i, x in enumerate(shape)]
    before, after = dims[:b.axis], dims[b.axis + 1:]
    if None in before or None in after \
            or any(x is None or x < 0 for i, x in enumerate(target) if i != k) \
            or int(np.prod(before)) != int(np.prod(target[:k])) \
            or int(np.prod(after)) != int(np.prod(target[k + 1:])):
        _refuse(node, "it may mix the batch axis with others")
    return [Batched(k, len(shape))]


def _flatten(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    if b.axis != 0 or _norm(node, int(node.attrs.get("axis", 1)), b.rank + 1) == 0:
        _refuse(node, "it flattens the batch axis with others")
    return [Batched(0, 2)]


def _cell(node: Node, ins: list) -> list[State]:
    layout = int(node.attrs.get("layout", 0))
    x_axis, state_axis = (0, 0) if layout else (1, 1)
    cells = _PADDED_CELLS.get()
    if cells is not None and ins[0] == Batched(1 - x_axis, 3):
        return _padded_cell(node, ins, cells, 1 - x_axis)
    want = {0: Batched(x_axis, 3), 4: Batched(0, 1), 5: Batched(state_axis, 3),
            6: Batched(state_axis, 3)}
    for i, s in enumerate(ins):
        if s is None:
            continue
        if i in want and s != want[i]:
            _refuse(node, f"input {i} does not carry the batch on the cell's batch axis")
        if i not in want and isinstance(s, Batched):
            _refuse(node, f"input {i} (weights) is batched")
    y = Batched(0, 4) if layout else Batched(2, 4)
    return [y] + [Batched(state_axis, 3)] * (len(node.outputs) - 1)


def _padded_cell(node: Node, ins: list, cells: list[Node], time_axis: int) -> list[State]:
    """A cell whose steps are the padded axis (`padded_prefix`): given ``sequence_lens``
    equal to the valid length, it stops every entry there, so its final states are exact and
    Y's valid steps are."""
    if any(isinstance(s, Batched | Dims) for s in ins[1:] if s is not None):
        _refuse(node, "an input other than X depends on the padded axis")
    if len(node.inputs) > 4 and node.inputs[4] is not None:
        _refuse(node, "it has sequence_lens of its own")
    cells.append(node)
    return [Batched(time_axis, 4)] + [_free_of(v) for v in node.outputs[1:]]


def _window(node: Node, ins: list) -> list[State]:
    """Convolutions, pooling and normalizations over the spatial axes of ``[N, C, ...]``:
    examples stay apart along N; along a spatial axis only a window of one (kernel 1,
    stride 1, no padding) keeps positions apart."""
    b = _only_first_batched(node, ins)
    if node.op_type == "MaxPool" and len(node.outputs) > 1:
        _refuse(node, "its indices count across the batch")
    if node.op_type == "BatchNormalization" and node.attrs.get("training_mode", 0):
        _refuse(node, "in training mode it computes statistics across the batch")
    if b.axis == 0:
        return [b] * len(node.outputs)
    if b.axis == 1 or node.op_type not in _POINTWISE_WINDOWS:
        _refuse(node, "it works across the batch axis")
    k = b.axis - 2
    kernel = node.attrs.get("kernel_shape")
    if kernel is None and node.op_type == "Conv":
        w = partial_shape(node.inputs[1])
        kernel = None if w is None else w[2:]
    strides = node.attrs.get("strides") or [1] * b.rank
    pads = node.attrs.get("pads") or [0] * (2 * b.rank)
    spatial = b.rank - 2
    if kernel is None or len(kernel) != spatial or kernel[k] != 1 or strides[k] != 1 \
            or pads[k] != 0 or pads[k + spatial] != 0 \
            or node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        _refuse(node, "its window spans several positions of the batch axis")
    return [b] * len(node.outputs)


_POINTWISE_WINDOWS = {"Conv", "AveragePool", "MaxPool", "LpPool"}


def _pad(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    pads = static_value(node.inputs[1]) if len(node.inputs) > 1 else None
    axes = _ints(node, 3) if len(node.inputs) > 3 else None
    if pads is None:
        _refuse(node, "its pads are not constant")
    pads = [int(x) for x in np.atleast_1d(pads)]
    axes = list(range(b.rank)) if axes is None else [_norm(node, a, b.rank) for a in axes]
    if len(pads) != 2 * len(axes):
        _refuse(node, "its pads do not fit its axes")
    if b.axis in axes:
        i = axes.index(b.axis)
        if pads[i] or pads[i + len(axes)]:
            _refuse(node, "it pads the batch axis")
    return [b]


def _shape(node: Node, ins: list) -> list[State]:
    b = _only_first_batched(node, ins)
    entries = [N if i == b.axis else None for i in range(b.rank)]
    start, end = node.attrs.get("start", 0), node.attrs.get("end")
    return [Dims(tuple(entries[slice(start, end)]))]


def _dims_of(node: Node, s: State, v: Value | None) -> Dims:
    """`s` as `Dims`: a batch-free int vector or scalar becomes entries it knows."""
    if isinstance(s, Dims):
        return s
    c = static_value(v)
    if isinstance(s, Free) and c is not None and c.ndim <= 1:
        return Dims(tuple(int(x) for x in np.atleast_1d(c)), scalar=c.ndim == 0)
    if isinstance(s, Free) and s.shape is not None and len(s.shape) == 1 and \
            s.shape[0] is not None:
        return Dims((None,) * s.shape[0])
    _refuse(node, "it mixes a shape read from a batched value with values it cannot follow")


def _dims_op(node: Node, ins: list) -> list[State]:
    """Ops on shapes read from batched values (`Dims`): the shape arithmetic exporters write
    to build a zero state, or to reshape, for "however many examples there are"."""
    op = node.op_type
    d = []  # the operands read as shapes: all of Concat's, the others' after the first
    for i, (st, v) in enumerate(zip(ins, node.inputs)):
        as_shape = isinstance(st, Dims) or (isinstance(st, Free) and (i > 0 or op == "Concat"))
        d.append(_dims_of(node, st, v) if st is not None and as_shape else st)
    if op in ("Identity", "Cast"):
        return [d[0]]
    if op == "Gather" and isinstance(d[0], Dims) and not d[0].scalar and \
            attr_or_default(node, "axis") == 0 and isinstance(d[1], Dims) and \
            None not in d[1].entries:
        n = len(d[0].entries)
        if all(-n <= i < n for i in d[1].entries):
            return [Dims(tuple(d[0].entries[i] for i in d[1].entries), scalar=d[1].scalar)]
    if op == "Slice" and len(d) >= 3 and isinstance(d[0], Dims) and not d[0].scalar and \
            all(isinstance(x, Dims) and None not in x.entries for x in d[1:] if x is not None):
        starts, ends = d[1].entries, d[2].entries
        axes = d[3].entries if len(d) > 3 and d[3] is not None else (0,)
        steps = d[4].entries if len(d) > 4 and d[4] is not None else (1,)
        if len(starts) == 1 and tuple(axes) in ((0,), (-1,)):
            return [Dims(d[0].entries[slice(starts[0], ends[0], steps[0])])]
    if op == "Concat" and all(isinstance(x, Dims) and not x.scalar for x in d):
        return [Dims(tuple(e for x in d for e in x.entries))]
    if op == "Unsqueeze" and isinstance(d[0], Dims) and d[0].scalar:
        return [Dims(d[0].entries)]
    if op == "Squeeze" and isinstance(d[0], Dims) and len(d[0].entries) == 1:
        return [Dims(d[0].entries, scalar=True)]
    if op == "ConstantOfShape" and isinstance(d[0], Dims) and not d[0].scalar:
        return [_one_batch_entry(node, d[0])]
    if op in ("Reshape", "Expand") and isinstance(ins[1], Dims) and not ins[1].scalar:
        target = _one_batch_entry(node, ins[1])
        x = ins[0]
        if op == "Reshape" and isinstance(x, Batched) and x.axis == 0 == target.axis and \
                not node.attrs.get("allowzero", 0):
            return [target]
        if op == "Expand" and x.rank is not None and x.rank <= target.rank:
            i = target.axis - (target.rank - x.rank)
            if isinstance(x, Batched) and x.axis == i:
                return [target]
            if isinstance(x, Free) and (i < 0 or x.shape[i] == 1):
                return [target]
    _refuse(node, "it uses the batch size in a way the rules do not follow")


def _one_batch_entry(node: Node, d: Dims) -> Batched:
    at = [i for i, e in enumerate(d.entries) if e == N]
    if len(at) != 1:  # (none: the shape would be a `Free` value, never `Dims`)
        _refuse(node, "the shape it builds holds the batch size other than once")
    return Batched(at[0], len(d.entries))


def _loop(node: Loop, env: dict[int, State]) -> list[State]:
    for v in (node.trip_count, node.initial_condition):
        if v is not None and isinstance(_state(env, v), Batched | Dims):
            _refuse(node, "its trip count or condition is batched")
    for p in node.output_ports:
        if isinstance(p, Concat) and p.length is not None and \
                isinstance(_state(env, p.length), Batched | Dims):
            _refuse(node, "a concatenated output's length is batched")
    body_env = dict(env)
    for p in node.input_ports:
        s = _state(env, p.value)
        if isinstance(s, Dims) and not isinstance(p, Invariant):
            _refuse(node, "a shape read from a batched value is carried or sliced")
        if isinstance(p, Sliced) and isinstance(s, Batched):
            a = _norm(node, p.axis, s.rank)
            if a == s.axis:
                _refuse(node, "it iterates over the batch axis")
            if not p.keep_axis:
                s = Batched(s.axis if s.axis < a else s.axis - 1, s.rank - 1)
        elif isinstance(p, Sliced):
            s = _free_of(p.param)
        body_env[p.param.uid] = s
    _graph(node.body, body_env)
    for v, what in ((node.condition_result, "condition"), (node.precondition, "precondition")):
        if v is not None and isinstance(_state(body_env, v), Batched | Dims):
            _refuse(node, f"its {what} depends on batched values (a data-dependent trip "
                          "count: examples would stop together)")
    for p in node.carried:
        if _state(body_env, p.result) != body_env[p.param.uid] and not (
                isinstance(body_env[p.param.uid], Free) and
                isinstance(_state(body_env, p.result), Free)):
            _refuse(node, f"carried value '{p.param.name}' changes its batch axis or becomes "
                          "batched in the body")
    outs: list[State] = []
    for p in node.output_ports:
        s = _state(body_env, p.result)
        if isinstance(s, Dims):
            _refuse(node, "a loop output is a shape read from a batched value")
        if isinstance(p, Last) or isinstance(s, Free):
            outs.append(s if isinstance(s, Batched) else _free_of(p.output))
            continue
        a = p.axis
        if p.new_axis:
            a = _norm(node, a, s.rank + 1)
            outs.append(Batched(s.axis if s.axis < a else s.axis + 1, s.rank + 1))
        else:
            if _norm(node, a, s.rank) == s.axis:
                _refuse(node, "it concatenates iterations along the batch axis")
            outs.append(s)
    return outs


# the ops that move axes (`Along.MOVE`) and those `ir.padded_axes` gives no kind
_RULES: dict[str, Any] = {
    "Gemm": _gemm, "Transpose": _transpose, "Concat": _concat, "Split": _along_other_axis(0),
    "ArgMax": _arg_reduce, "ArgMin": _arg_reduce, "Slice": _slice, "Gather": _gather,
    "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Reshape": _reshape, "Flatten": _flatten,
    "LSTM": _cell, "GRU": _cell, "RNN": _cell, "Pad": _pad, **{op: _window for op in (
        "Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool",
        "GlobalMaxPool", "GlobalLpPool", "BatchNormalization", "InstanceNormalization",
        "LRN")},
}

# `padded_prefix`'s list of cells run over the padded axis (None: per example, `per_example`)
_PADDED_CELLS: ContextVar[list[Node] | None] = ContextVar("padded_cells", default=None)


@dataclass(frozen=True)
class PaddedVerdict:
    """`padded_prefix`'s answer: `verdict` as `per_example`'s, and the cells that must be
    given the valid length as their ``sequence_lens``."""
    verdict: Verdict
    cells: tuple[Node, ...]


def padded_prefix(graph: Graph, axes: dict[str, int]) -> PaddedVerdict:
    """Whether the inputs' `axes` may be padded at the end (any values there) with no change
    to the outputs' valid part: every output is either free of the padded axis or has it
    (`Verdict.outputs`), its first n slices those of the unpadded run.

    The proof is `per_example`'s: an op that keeps examples apart keeps the valid slices
    apart from the padding too. One rule more holds here: a recurrent cell whose steps run
    along the padded axis, given the valid length as its ``sequence_lens`` (returned in
    `cells`), stops at the last valid step, so its final states are exact and Y's valid
    steps are."""
    cells: list[Node] = []
    token = _PADDED_CELLS.set(cells)
    try:
        verdict = per_example(graph, axes)
    finally:
        _PADDED_CELLS.reset(token)
    return PaddedVerdict(verdict, tuple(cells) if verdict.ok else ())
