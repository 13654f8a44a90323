"""Reads of a carried value held as a fixed-capacity buffer (`growing`), made exact.

`Padded` (`padded`) is what a loop body sees of a grown value: the buffer, the axis and the
valid length. Positions beyond the valid length hold garbage, and the rules (`apply`, one per
kind of op in `ir.padded_axes`, the table of what each op does with a padded axis, and per op
for the ops that move axes) make every read exact: elementwise ops, Transpose, Unsqueeze,
Gather on another axis, MatMul with the axis as a free dim and Softmax on another axis keep
the value padded (garbage beyond the length); Softmax / LogSoftmax along the axis mask the
padded positions with -inf (their results are exactly 0 / -inf), reductions along it with
their neutral value; a MatMul contracting the axis zeroes both operands beyond the length
first, so garbage (NaN and inf included) contributes exactly 0; Shape gives the valid length
on the axis. Any other read
raises `Refused`. `static_problem` answers the same question from the graph alone, for
`explain`.
"""

from __future__ import annotations

import numpy as np

from ....errors import where
from ....ir import Loop, Node
from ....ir.attributes import attr_or_default
from ....ir.operands import SHAPE_OPERANDS
from ....ir.padded_axes import MASKED, NEUTRAL, Along, along, padded_inputs
from ....ir.traits import normalized_axes, transpose_perm
from ..context import CannotLower, OpContext, Scope, TraceContext, is_static
from . import padded_attention
from .padded import Grow, Padded, Refused, appended_rows, gather_rows, identity_rows

__all__ = ["Grow", "Padded", "Refused", "apply", "needs_static", "reads_padded", "rule_for",
           "static_problem", "trim", "unwrap", "wrap"]


def wrap(grows: list[Grow], state: list, k) -> list:
    """The carried `state` as the body sees it: grown values as `Padded`."""
    if not grows:
        return state
    out = list(state)
    lengths: dict[tuple, object] = {}
    for g in grows:
        if state[g.index] is None:
            continue
        key = (g.l0, g.d, 0)
        if key not in lengths:
            lengths[key] = g.l0 + g.d * k.astype(np.int64)
        if g.rows is None:
            out[g.index] = Padded(state[g.index], g.axis, key, lengths[key])
        else:  # (buffer, ancestry table): rows reordered lazily
            buf, src = state[g.index]
            out[g.index] = Padded(buf, g.axis, key, lengths[key], src, g.rows)
    return out


def unwrap(loop: Loop, grows: list[Grow], vals: list, carried_at: int, n_carried: int) -> list:
    """Body results: grown carried values back to buffers; `Refused` for any other padded
    value, or a grown one of another axis, capacity or length."""
    by = {g.index: g for g in grows}
    out = list(vals)
    for i, x in enumerate(vals):
        j = i - carried_at
        g = by.get(j) if 0 <= j < n_carried else None
        if g is None:
            if isinstance(x, Padded):
                raise Refused("a value read from a grown buffer leaves the loop body other "
                              "than as the grown value (a scan output, a last value or the "
                              "condition)")
            continue
        if not isinstance(x, Padded):
            raise Refused(f"carried value '{loop.carried[j].param.name}' is not grown from "
                          "its buffer")
        if x.axis != g.axis or x.key != (g.l0, g.d, g.d):
            raise Refused(f"carried value '{loop.carried[j].param.name}' grows by a length "
                          "that changes across iterations")
        if g.rows is None:
            out[i] = x.materialized().buf
        elif x.src is None:
            out[i] = (x.buf, identity_rows(x.buf.shape[g.rows], x.buf.shape[g.axis]))
        elif x.rows != g.rows:
            x = x.materialized()
            out[i] = (x.buf, identity_rows(x.buf.shape[g.rows], x.buf.shape[g.axis]))
        else:
            out[i] = (x.buf, x.src)
    return out


def settled(x, g: Grow):
    """A carried buffer as an array: a (buffer, ancestry table) pair gathered (`Grow.rows`)."""
    if g.rows is None:
        return x
    buf, src = x
    return gather_rows(buf, src, g.rows, g.axis)


def trim(x, g: Grow, k: int):
    """The final buffer `x` (a pair where `Grow.rows`: `settled`) cut to its valid length
    after `k` iterations."""
    x = settled(x, g)
    idx = [slice(None)] * x.ndim
    idx[g.axis] = slice(0, g.l0 + g.d * k)
    return x[tuple(idx)]


# ----------------------------------------------------------------------------- the rule table


def reads_padded(node: Node, scope: Scope) -> bool:
    for v in node.reads():
        try:
            if isinstance(scope.get(v), Padded):
                return True
        except Exception:  # noqa: BLE001 - an undefined value: the normal path reports it
            return False
    return False


def apply(tc: TraceContext, node: Node, scope: Scope) -> list:
    """Evaluate `node`, which reads a padded value, by the rule table; `Refused` if no rule
    makes it exact."""
    from ..table import lookup

    if node.subgraphs():
        raise Refused(f"{where(node)} reads a grown buffer inside a subgraph")
    fn = rule_for(node)
    if fn is None:
        raise Refused(f"{where(node)}: no exact rule for {node.op_type} reading a grown buffer")
    rule = lookup(node)
    if rule is None:
        raise Refused(f"{where(node)}: no lowering")
    inputs = [None if v is None else scope.get(v) for v in node.inputs]
    if fn not in _LAZY_ROWS:
        inputs = [x.materialized() if isinstance(x, Padded) else x for x in inputs]
    import jax.numpy as jnp

    cx = OpContext(node, jnp, tc, scope.frame)
    try:
        out = fn(cx, rule, inputs)
    except Refused:
        raise
    except CannotLower as e:
        raise Refused(f"{where(node)}: {e.reason}") from None
    except Exception as e:  # noqa: BLE001 - a shape this table does not handle
        raise Refused(f"{where(node)}: {type(e).__name__}: {e}") from None
    return out if isinstance(out, list) else [out]


def _plain(cx, rule, inputs):
    out = rule.fn(cx, *inputs)
    return list(out) if len(cx.node.outputs) > 1 else [out]


def _axis(a: int, rank: int) -> int:
    return a + rank if a < 0 else a


def _elementwise(cx, rule, inputs):
    present = [x for x in inputs if x is not None]
    rank = max(x.ndim for x in present)
    pads = [x for x in present if isinstance(x, Padded)]
    axes = {p.axis + rank - p.ndim for p in pads}
    keys = {p.key for p in pads}
    if len(axes) != 1 or len(keys) != 1:
        raise Refused(f"{where(cx.node)}: operands padded on different axes or lengths")
    ax = axes.pop()
    for x in present:
        if not isinstance(x, Padded):
            i = ax - (rank - x.ndim)
            if i >= 0 and x.shape[i] != 1:
                raise Refused(f"{where(cx.node)}: an operand that is not padded spans the "
                              "grown axis")
    bufs = [x.buf if isinstance(x, Padded) else x for x in inputs]
    p = pads[0]
    return [Padded(y, ax, p.key, p.length) for y in _plain(cx, rule, bufs)]


def _transpose(cx, rule, inputs):
    x = inputs[0]
    perm = transpose_perm(cx.node, x.ndim)
    return x.like(rule.fn(cx, x.buf), perm.index(x.axis))


def _unsqueeze(cx, rule, inputs):
    x = inputs[0]
    if isinstance(inputs[1] if len(inputs) > 1 else None, Padded):
        raise Refused(f"{where(cx.node)}: padded axes")
    axes = cx.ints(inputs[1], "axes") if len(inputs) > 1 and inputs[1] is not None \
        else list(cx.attr("axes", []))
    r = x.ndim + len(axes)
    axes = sorted(_axis(a, r) for a in axes)
    kept = [i for i in range(r) if i not in axes]
    return x.like(rule.fn(cx, x.buf, *inputs[1:]), kept[x.axis])


def _squeeze(cx, rule, inputs):
    x = inputs[0]
    axes = cx.ints(inputs[1], "axes") if len(inputs) > 1 and inputs[1] is not None \
        else cx.attr("axes")
    if axes is None:
        raise Refused(f"{where(cx.node)}: Squeeze without axes")
    axes = sorted(_axis(int(a), x.ndim) for a in axes)
    if x.axis in axes:
        raise Refused(f"{where(cx.node)}: squeezes the grown axis")
    return x.like(rule.fn(cx, x.buf, *inputs[1:]), x.axis - sum(a < x.axis for a in axes))


def _gather(cx, rule, inputs):
    x, idx = inputs[0], inputs[1]
    if isinstance(idx, Padded) or not isinstance(x, Padded):
        raise Refused(f"{where(cx.node)}: gathers with padded indices")
    a = _axis(int(cx.attr("axis", 0)), x.ndim)
    if x.src is not None and a == x.rows and np.ndim(idx) == 1 and \
            np.shape(idx)[0] == x.buf.shape[a]:  # a reordering of rows: of the table only
        import jax.numpy as jnp

        n = x.buf.shape[a]
        at = jnp.asarray(idx).astype(np.int32)
        at = jnp.where(at < 0, at + n, at)
        return [Padded(x.buf, x.axis, x.key, x.length,
                       jnp.take(x.src, at, axis=0, mode="clip"), x.rows)]
    x = x.materialized()
    if a == x.axis:  # static indices in [-l0, l0): exact positions of the valid part
        if not is_static(idx):
            raise Refused(f"{where(cx.node)}: gathers along the grown axis at run-time "
                          "indices")
        idx = np.asarray(idx).astype(np.int64)
        l0 = x.key[0]
        if idx.size and not ((idx >= -l0) & (idx < l0)).all():
            raise Refused(f"{where(cx.node)}: gathers along the grown axis beyond its initial "
                          "length")
        import jax.numpy as jnp

        eff = jnp.where(idx < 0, idx + x.length, idx)
        return [jnp.take(x.buf, eff, axis=a)]
    r = np.ndim(idx)
    return x.like(rule.fn(cx, x.buf, idx), x.axis if x.axis < a else x.axis + r - 1)


def _matmul(cx, rule, inputs):
    a, b = inputs
    ra, rb = a.ndim, b.ndim
    if ra < 2 or rb < 2:
        raise Refused(f"{where(cx.node)}: a vector operand")
    rank = max(ra, rb)
    pa = a.axis + rank - ra if isinstance(a, Padded) else None
    pb = b.axis + rank - rb if isinstance(b, Padded) else None
    ka = isinstance(a, Padded) and a.axis == ra - 1
    kb = isinstance(b, Padded) and b.axis == rb - 2
    if ka or kb:  # contracting the grown axis: both operands zero beyond the length
        if not (ka and kb) or a.key != b.key:
            raise Refused(f"{where(cx.node)}: contracts a grown axis with an operand that is "
                          "not padded the same way")
        import jax.numpy as jnp

        za = jnp.where(a.mask(), a.buf, jnp.zeros((), a.buf.dtype))
        zb = jnp.where(b.mask(), b.buf, jnp.zeros((), b.buf.dtype))
        return [rule.fn(cx, za, zb)]
    outs = set()
    if pa is not None:
        outs.add(pa)  # batch dims and M keep their place
    if pb is not None:
        outs.add(pb)  # batch dims and N (the last) keep theirs
    if len(outs) != 1 or (isinstance(a, Padded) and isinstance(b, Padded) and a.key != b.key):
        raise Refused(f"{where(cx.node)}: both operands padded on different axes")
    p = a if isinstance(a, Padded) else b
    ax = outs.pop()
    other = b if p is a else a
    ro = other.ndim
    i = ax - (rank - ro)
    if ax < rank - 2 and i >= 0 and other.shape[i] != 1:
        raise Refused(f"{where(cx.node)}: a batch operand that is not padded spans the grown "
                      "axis")
    ya = a.buf if isinstance(a, Padded) else a
    yb = b.buf if isinstance(b, Padded) else b
    return [Padded(rule.fn(cx, ya, yb), ax, p.key, p.length)]


def _softmax(cx, rule, inputs):
    x = inputs[0]
    if x.axis not in normalized_axes(cx.node, x.ndim):
        return [x.like(rule.fn(cx, x.buf))]
    import jax.numpy as jnp

    masked = jnp.where(x.mask(), x.buf, jnp.asarray(-np.inf, x.buf.dtype))
    return [x.like(rule.fn(cx, masked))]


def _shape(cx, rule, inputs):
    import jax.numpy as jnp

    x = inputs[0]
    dims = [jnp.asarray(d, np.int64) for d in x.buf.shape]
    dims[x.axis] = jnp.asarray(x.length, np.int64)
    full = jnp.stack(dims)
    r = x.ndim
    start = cx.attr("start", 0)
    end = cx.attr("end", r)
    start = min(max(_axis(int(start), r), 0), r)
    end = min(max(_axis(int(end), r), 0), r)
    return [full[start:end]]


def _concat(cx, rule, inputs):
    import jax

    x = inputs[0]
    rank = x.ndim
    a = _axis(int(cx.attr("axis")), rank)
    if not isinstance(x, Padded) or any(isinstance(y, Padded) for y in inputs[1:]):
        raise Refused(f"{where(cx.node)}: a grown buffer that is not the first operand of the "
                      "Concat")
    if a != x.axis:
        raise Refused(f"{where(cx.node)}: concatenates a grown buffer on another axis")
    if x.src is not None and x.rows == a:
        x = x.materialized()
    rest = [y for y in inputs[1:] if y is not None]
    import jax.numpy as jnp

    piece = jnp.concatenate([jnp.asarray(y, x.buf.dtype) for y in rest], axis=a) \
        if len(rest) > 1 else jnp.asarray(rest[0], x.buf.dtype)
    for i in range(rank):
        if i != a and piece.shape[i] != x.buf.shape[i]:
            raise Refused(f"{where(cx.node)}: pieces of another shape")
    s = piece.shape[a]
    l0, d, extra = x.key
    if extra + s > d:
        raise Refused(f"{where(cx.node)}: grows a buffer by more than its per-iteration length")
    start = [jnp.zeros((), np.int64)] * rank
    start[a] = jnp.asarray(x.length, np.int64)
    buf = jax.lax.dynamic_update_slice(x.buf, piece, start)
    if x.src is None:
        return [Padded(buf, a, (l0, d, extra + s), x.length + s)]
    # the new positions of row r are in row r
    return [Padded(buf, a, (l0, d, extra + s), x.length + s, appended_rows(x.src, x.length, s),
                   x.rows)]


def _slice(cx, rule, inputs):
    x = inputs[0]
    if any(isinstance(y, Padded) for y in inputs[1:]):
        raise Refused(f"{where(cx.node)}: padded slice bounds")
    r = x.ndim
    starts, ends = cx.ints(inputs[1], "starts"), cx.ints(inputs[2], "ends")
    axes = cx.ints(inputs[3], "axes") if len(inputs) > 3 and inputs[3] is not None \
        else list(range(len(starts)))
    steps = cx.ints(inputs[4], "steps") if len(inputs) > 4 and inputs[4] is not None \
        else [1] * len(starts)
    axes = [_axis(int(a), r) for a in axes]
    if x.axis not in axes:
        return [x.like(y) for y in _plain(cx, rule, [x.buf, *inputs[1:]])]
    i = axes.index(x.axis)
    s, e, step = starts[i], ends[i], steps[i]
    l0, d, extra = x.key
    if step != 1:
        raise Refused(f"{where(cx.node)}: slices the grown axis with a step")
    # the other axes first, as the rule does them (the grown one taken whole)
    rest = [(a, st, en, sp) for a, st, en, sp in zip(axes, starts, ends, steps) if a != x.axis]
    buf = x.buf
    if rest:
        sl = [slice(None)] * r
        for a, st, en, sp in rest:
            sl[a] = slice(st, en, sp)
        buf = buf[tuple(sl)]
    import jax

    big = buf.shape[x.axis]
    if s < 0 and e >= big and -s <= l0:  # the last -s positions: fixed size
        start = [0] * r
        start[x.axis] = x.length + s
        size = list(buf.shape)
        size[x.axis] = -s
        return [jax.lax.dynamic_slice(buf, start, size)]
    if 0 <= s and 0 <= e <= l0:  # within the part that is always valid
        sl = [slice(None)] * r
        sl[x.axis] = slice(s, max(s, e))
        return [buf[tuple(sl)]]
    if 0 <= s <= l0 and e >= big:  # from s to the end: still padded, shorter
        sl = [slice(None)] * r
        sl[x.axis] = slice(s, None)
        return [Padded(buf[tuple(sl)], x.axis, (l0 - s, d, extra), x.length - s)]
    raise Refused(f"{where(cx.node)}: slices the grown axis at bounds [{s}, {e}) it cannot "
                  "map exactly")


def _reduce(cx, rule, inputs):
    x = inputs[0]
    if not isinstance(x, Padded) or any(isinstance(y, Padded) for y in inputs[1:]):
        raise Refused(f"{where(cx.node)}: padded reduction axes")
    r = x.ndim
    if len(inputs) > 1 and inputs[1] is not None:
        axes = cx.ints(inputs[1], "axes")
    else:
        axes = list(cx.attr("axes", []) or [])
    if not axes and attr_or_default(cx.node, "noop_with_empty_axes") and len(inputs) > 1:
        return [x]
    axes = sorted({_axis(int(a), r) for a in axes}) if axes else list(range(r))
    kd = bool(attr_or_default(cx.node, "keepdims"))
    if x.axis not in axes:
        ax = x.axis if kd else x.axis - sum(a < x.axis for a in axes)
        return [x.like(rule.fn(cx, x.buf, *inputs[1:]), ax)]
    import jax.numpy as jnp

    fill = NEUTRAL[cx.node.op_type]
    dt = np.dtype(x.buf.dtype)
    if dt.kind != "f" and not np.isfinite(fill):
        info = np.iinfo(dt) if dt.kind in "iu" else None
        if info is None:
            raise Refused(f"{where(cx.node)}: {dt} reduction along the grown axis")
        fill = info.min if fill < 0 else info.max
    masked = jnp.where(x.mask(), x.buf, jnp.asarray(fill, dt))
    return [rule.fn(cx, masked, *inputs[1:])]


#: the rule of each kind of op (`ir.padded_axes`); a reduction needs a neutral value there,
#: a normalization a mask value
_BY_KIND = {Along.ELEMENTWISE: _elementwise, Along.CONTRACT: _matmul, Along.LENGTH: _shape}
#: the ops that move axes (`Along.MOVE`) that have a rule
_MOVES = {"Transpose": _transpose, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
          "Gather": _gather, "Concat": _concat, "Slice": _slice}


def _identity(cx, rule, inputs):
    return [inputs[0]]


#: the rules that take a value whose rows are reordered lazily (`padded.Padded.src`); every
#: other rule reads it gathered
_LAZY_ROWS = (_identity, _gather, _concat, padded_attention.attention)


def rule_for(node: Node):
    """The exact rule for `node` reading a padded value, by its kind in `ir.padded_axes`
    (`padded_attention`'s for ONNX Runtime's Attention), or None."""
    if padded_attention.is_attention(node):
        return padded_attention.attention
    if (node.domain, node.op_type) == ("", "Identity"):
        return _identity
    kind = along(node)
    if kind is Along.REDUCE:
        return _reduce if node.op_type in NEUTRAL else None
    if kind is Along.NORMALIZE:
        return _softmax if node.op_type in MASKED else None
    if kind is Along.MOVE:
        return _MOVES.get(node.op_type)
    return _BY_KIND.get(kind)


def _rank(v) -> int | None:
    if v is None:
        return None
    if v.const is not None:
        return np.ndim(v.const)
    t = v.type
    return getattr(t, "rank", None)


def _const_ints(v) -> list[int] | None:
    if v is None:
        return None
    x = v.const
    if x is None and v.producer is not None and v.producer.op_type == "Constant":
        x = v.producer.attrs.get("value")
    return None if x is None else [int(i) for i in np.asarray(x).reshape(-1)]


def _static_axis(n: Node, axis: dict, ins: list) -> tuple[bool, tuple | None]:
    """(output padded?, its (axis, rank) or None: unknown) for `n` reading values padded as
    `axis` says (uid -> (axis, rank) or None): whether its output surely stays padded,
    following the rule table."""
    op = n.op_type
    if n.domain != "":  # a contrib rule's padded outputs: `_grown_outputs`
        return False, None

    def rank(v):
        if v is None:
            return None
        if v.uid in axis:
            return None if axis[v.uid] is None else axis[v.uid][1]
        return _rank(v)

    x = ins[0]
    known = axis.get(x.uid) if x is not None else None
    kind = along(n)
    if kind is Along.ELEMENTWISE:
        ranks = [rank(v) for v in ins if v is not None]
        pads = [axis[v.uid] for v in ins if v is not None and v.uid in axis]
        if None in ranks or None in pads:
            return True, None
        out = max(ranks)
        return True, (pads[0][0] + out - pads[0][1], out)
    if kind is Along.CONTRACT:
        a, b = ins[0], ins[1]
        ra, rb = rank(a), rank(b)
        pa, pb = axis.get(a.uid), axis.get(b.uid)
        if ra is None or rb is None or (a.uid in axis and pa is None) or (
                b.uid in axis and pb is None):
            return False, None
        r = max(ra, rb)
        if pa is not None:
            return (False, None) if pa[0] == ra - 1 else (True, (pa[0] + r - ra, r))
        if pb is not None:
            return (False, None) if pb[0] == rb - 2 else (True, (pb[0] + r - rb, r))
        return False, None
    if known is None:
        # a length, a cut or a fold may end the padding
        return op not in ("Slice", "Gather") and kind not in (Along.LENGTH, Along.REDUCE), None
    ax, r = known
    if op == "Transpose":
        perm = transpose_perm(n, r)
        return True, (perm.index(ax), r)
    if kind is Along.NORMALIZE or op == "Concat":
        return True, known
    return False, None  # Shape, Slice, Gather, Unsqueeze, Squeeze, reductions: not followed


#: inputs the JAX lowering needs when compiling, by op: the shape operands, ``Pad``'s fill
#: value, and every input of the ops whose output shape follows their data
_NEEDS_STATIC: dict[str, tuple | str] = {
    **SHAPE_OPERANDS, "Pad": (1, 2, 3), "Resize": "all",
    "Loop": "all", "If": "all", "Scan": "all", "NonZero": "all", "Compress": "all",
    "Unique": "all", "RandomNormalLike": "all", "RandomUniformLike": "all",
}


def _takes_padded(n: Node, axis: dict) -> bool:
    """Whether `n`'s rule takes every padded input it reads where it reads it (a rule of the
    standard domain takes any; a contrib op those of `ir.padded_axes.PADDED_INPUTS`)."""
    if n.domain == "":
        return True
    takes = padded_inputs(n)
    return all(i in takes for i, v in enumerate(n.inputs) if v is not None and v.uid in axis)


def _grown_outputs(n: Node, axis: dict) -> list:
    """(output, (axis, rank)) of a contrib node's outputs that its rule gives padded: the
    inputs it grows (`ir.padded_axes.PADDED_INPUTS`)."""
    grown = {p.grows: (p.axis, p.rank) for i, p in padded_inputs(n).items()
             if p.grows is not None and i < len(n.inputs) and n.inputs[i] is not None
             and n.inputs[i].uid in axis}
    return [(n.outputs[k], ax) for k, ax in sorted(grown.items())
            if k < len(n.outputs) and n.outputs[k] is not None]


def needs_static(op_type: str) -> tuple | str:
    """The inputs of `op_type` the JAX lowering needs when compiling ("all": every one)."""
    return _NEEDS_STATIC.get(op_type, ())


def static_problem(loop: Loop, j: int) -> str | None:
    """Without shapes: why carried value `j`'s buffer could not be read exactly (an op with
    no rule reads it, or it leaves the body other than as the grown value), or None. Only
    what surely stays padded is followed (the axis tracked from declared ranks where they
    are known; a MatMul contracting it, a Slice or a Gather may end it); the trace checks
    the rest."""
    c = loop.carried[j]
    p = c.result.producer
    while p is not None and p.op_type == "Identity":
        p = p.inputs[0].producer
    r0 = _rank(c.param) if _rank(c.param) is not None else _rank(c.value)
    ax0 = None
    if p is not None and p.op_type == "Concat" and r0:
        ax0 = (int(p.attrs.get("axis", 0)) % r0, r0)
    axis: dict[int, tuple | None] = {c.param.uid: ax0}
    lengths: set[int] = set()  # values computed from its valid length (Shape of it)
    for n in loop.body.nodes:
        uses = [i for i, v in enumerate(n.inputs) if v is not None and v.uid in lengths]
        if uses:
            static = _NEEDS_STATIC.get(n.op_type, ())
            if n.subgraphs() or static == "all" or any(i in static for i in uses):
                return (f"{where(n)} ({n.op_type}) needs its valid length when compiling, "
                        "and in a buffer that is only known at run time")
            lengths.update(v.uid for v in n.outputs if v is not None)
        if not any(v.uid in axis for v in n.reads()):
            continue
        if n.op_type == "Shape":
            lengths.update(v.uid for v in n.outputs if v is not None)
        if rule_for(n) is None or n.subgraphs() or not _takes_padded(n, axis):
            return f"{where(n)} ({n.op_type}) reads it and has no exact rule for a padded buffer"
        keep, ax = _static_axis(n, axis, list(n.inputs))
        if keep:
            for v in n.outputs:
                if v is not None:
                    axis[v.uid] = ax
        for o, ax in _grown_outputs(n, axis):
            axis[o.uid] = ax
    padded = set(axis)
    for cc in loop.carried:
        if cc is not c and cc.result.uid in padded:
            return f"carried value '{cc.param.name}' is computed from it"
    for q in loop.output_ports:
        if q.result.uid in padded and q.result.uid != c.result.uid:
            return "a loop output other than the grown value is computed from it"
    if loop.condition_result is not None and loop.condition_result.uid in padded:
        return "the condition is computed from it"
    return None
