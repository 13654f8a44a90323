"""Sequence and optional kernels.

Sequences are Python lists of arrays; an empty optional is ``None``. Kernels never mutate an
input list (values are shared by reference): SequenceInsert/Erase return new lists.
Positions may be negative (counted from the end); an out-of-range position is an
`ExecutionError`.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir.attributes import attr, attr_or_default
from ...common.slicing import split_sizes
from . import kernel

# ----------------------------------------------------------------------------- sequences


def _position(node, pos, n: int, insert: bool) -> int:
    p = int(np.asarray(pos).reshape(-1)[0])
    hi = n if insert else n - 1
    if p < 0:
        p += n
    if not 0 <= p <= hi:
        raise ExecutionError(
            f"{where(node)}: position {p} out of range for a sequence of length {n}"
        )
    return p


@kernel("SequenceEmpty", since=11)
def _sequence_empty(node, ctx):
    return lambda: []


@kernel("SequenceConstruct", since=11)
def _sequence_construct(node, ctx):
    return lambda *xs: list(xs)


@kernel("SequenceInsert", since=11)
def _sequence_insert(node, ctx):
    def fn(seq, x, position=None):
        out = list(seq)
        if position is None:
            out.append(x)
        else:
            out.insert(_position(node, position, len(seq), True), x)
        return out

    return fn


@kernel("SequenceAt", since=11)
def _sequence_at(node, ctx):
    def fn(seq, position):
        return seq[_position(node, position, len(seq), False)]

    return fn


@kernel("SequenceErase", since=11)
def _sequence_erase(node, ctx):
    def fn(seq, position=None):
        out = list(seq)
        if not out:
            raise ExecutionError(f"{where(node)}: cannot erase from an empty sequence")
        del out[-1 if position is None else _position(node, position, len(seq), False)]
        return out

    return fn


@kernel("SequenceLength", since=11)
def _sequence_length(node, ctx):
    return lambda seq: np.array(len(seq), dtype=np.int64)


@kernel("SplitToSequence", since=11)
def _split_to_sequence(node, ctx):
    """SplitToSequence: pieces of size 1 (squeezed unless ``keepdims``) without `split`;
    chunks of a scalar `split` (the last may be shorter); or the 1-D `split` lengths."""
    axis = int(attr_or_default(node, "axis"))
    keepdims = bool(attr_or_default(node, "keepdims"))

    def fn(x, split=None):
        a = axis + x.ndim if axis < 0 else axis
        dim = x.shape[a]
        if split is None:
            if keepdims:
                return [x[(slice(None),) * a + (slice(i, i + 1),)] for i in range(dim)]
            return [x[(slice(None),) * a + (i,)] for i in range(dim)]
        if split.ndim == 0:
            size = int(split)
            if size <= 0:
                raise ExecutionError(f"{where(node)}: split must be positive, got {size}")
            lengths = [size] * (dim // size)
            if dim % size:
                lengths.append(dim % size)
        else:
            lengths = split_sizes(node, dim, split.reshape(-1), split.size)
        out = []
        pos = 0
        for n in lengths:
            out.append(x[(slice(None),) * a + (slice(pos, pos + n),)])
            pos += n
        return out

    return fn


@kernel("ConcatFromSequence", since=11)
def _concat_from_sequence(node, ctx):
    """ConcatFromSequence: concatenate along `axis`, or stack on a new axis (``new_axis=1``,
    where `axis` may be -rank-1 .. rank)."""
    axis = int(attr(node, "axis", 0))
    new_axis = bool(attr_or_default(node, "new_axis"))

    def fn(seq):
        if not seq:
            raise ExecutionError(f"{where(node)}: cannot concatenate an empty sequence")
        rank = np.ndim(seq[0]) + new_axis
        if not -rank <= axis < rank:
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {rank}")
        try:
            if new_axis:
                return np.stack(seq, axis=axis)
            return np.concatenate(seq, axis=axis)
        except ValueError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None

    return fn


# ----------------------------------------------------------------------------- SequenceMap


@kernel("SequenceMap", since=17)
def _sequence_map(node, ctx):
    """SequenceMap: run `body` once per element of the first input sequence. Each additional
    input is a sequence (its i-th element is bound) or a tensor (bound as is). Every body
    output becomes a sequence."""
    body = node.attrs["body"]
    plan = ctx.compile(body)
    outer = _captures(node)
    cap_pos = [outer.index(v.uid) for v in plan.captures]
    n_in = len(node.inputs)
    n_out = len(node.outputs)

    def fn(*args):
        seq = args[0]
        extra = args[1:n_in]
        caps = [args[n_in + p] for p in cap_pos]
        outs: list[list] = [[] for _ in range(n_out)]
        for i, elem in enumerate(seq):
            feeds = [elem]
            for e in extra:
                if isinstance(e, list):
                    if i >= len(e):
                        raise ExecutionError(
                            f"{where(node)}: an additional input sequence is shorter than "
                            f"the input sequence ({len(e)} < {len(seq)})"
                        )
                    feeds.append(e[i])
                else:
                    feeds.append(e)
            res = plan.fn(*feeds, *caps)
            for o, r in zip(outs, res):
                o.append(r)
        return outs[0] if n_out == 1 else tuple(outs)

    return fn


def _captures(node) -> list[int]:
    """uids of the outer values the node's subgraphs capture, in the executor's order."""

    return [v.uid for v in node.captured()]


# ----------------------------------------------------------------------------- optionals


@kernel("Optional", since=15)
def _optional(node, ctx):
    return lambda x=None: x


@kernel("OptionalHasElement", since=15)
def _optional_has_element(node, ctx):
    return lambda x=None: np.array(x is not None)


@kernel("OptionalGetElement", since=15)
def _optional_get_element(node, ctx):
    def fn(x):
        if x is None:
            raise ExecutionError(f"{where(node)}: the optional input is empty")
        return x

    return fn


@kernel("NonEmpty", domain="itergraph")
def _non_empty(node, ctx):
    """The guard `passes.split_sequence_reads` puts in front of the tensor form of a
    ``ConcatFromSequence``: ``x`` unchanged; `ExecutionError` (the node's ``message``) when
    ``of`` (default ``x``) has length 0 on ``axis``."""
    axis, message = int(attr(node, "axis", 0)), str(attr(node, "message", where(node)))

    def fn(x, of=None):
        v = x if of is None else of
        if np.shape(v)[axis] == 0:
            raise ExecutionError(message)
        return x

    return fn
