"""Which tensor axis an integer is the size of, and when two values are computed alike
(for `ops`).

Not a pass. Exporters compute a sequence length as ``Gather(Shape(x), 1)`` through casts and
reshapes, and apply shape ops to one input once per loop. `dim_ref` names the size a
one-element integer value holds (a constant, or `(source, axis)`: the size of that axis of
that value, followed back through shape-preserving and axis-moving ops by `axis_ref`);
`same` says whether two values are computed by the same ops from the same inputs.
"""

from __future__ import annotations

import numpy as np

from ...ir.canonical import int_operand
from ...ir.graph import Value
from ...ir.traits import Trait, has, transpose_perm
from ...ir.types import TensorType
from ..loop_motion import const_value

Ref = "int | tuple[int, int]"  # a known size, or (uid of a value, axis)


def _std(v: Value | None, *ops: str):
    p = None if v is None else v.producer
    return p if p is not None and p.domain == "" and p.op_type in ops else None


def rank(v: Value | None, depth: int = 0) -> int | None:
    """`v`'s rank, declared or derived through shape ops."""
    if v is None or depth > 16:
        return None
    c = const_value(v)
    if c is not None:
        return c.ndim
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None:
        return len(t.shape)
    p = v.producer
    if p is None or p.domain != "" or not p.inputs:
        return None
    if has(p, Trait.SAME_SHAPE) or p.op_type == "Transpose":
        return rank(p.inputs[0], depth + 1)
    if p.op_type in ("Squeeze", "Unsqueeze"):
        r, axes = rank(p.inputs[0], depth + 1), int_operand(p, 1)
        if r is None or axes is None:
            return None
        return r + len(axes) if p.op_type == "Unsqueeze" else r - len(axes)
    if p.op_type == "Shape":
        return 1
    return None


def axis_ref(v: Value, axis: int, depth: int = 0):
    """The size of `v`'s `axis`, as the earliest (value uid, axis) it is copied from, or an
    int when declared."""
    r = rank(v)
    if r is None or not -r <= axis < r:
        return None
    axis %= r
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and isinstance(t.shape[axis], int) \
            and t.shape[axis] >= 0:
        return int(t.shape[axis])
    p = v.producer
    if p is None or p.domain != "" or not p.inputs or depth > 16:
        return (v.uid, axis)
    x = p.inputs[0]
    if has(p, Trait.SAME_SHAPE):
        return axis_ref(x, axis, depth + 1)
    if p.op_type == "Transpose":
        perm = transpose_perm(p, r)
        return axis_ref(x, int(perm[axis]), depth + 1)
    axes = int_operand(p, 1) if p.op_type in ("Squeeze", "Unsqueeze") else None
    if axes is not None and p.op_type == "Unsqueeze":
        added = sorted(a % r for a in axes)
        if axis in added:
            return 1
        return axis_ref(x, axis - sum(1 for a in added if a < axis), depth + 1)
    if axes is not None and p.op_type == "Squeeze":
        rx = rank(x)
        if rx is None:
            return (v.uid, axis)
        kept = [k for k in range(rx) if k not in {a % rx for a in axes}]
        return axis_ref(x, kept[axis], depth + 1)
    return (v.uid, axis)


def inner_axis(p, axis: int) -> int | None:
    """The axis of ``p.inputs[0]`` that `axis` of the output of shape op `p` (Identity,
    Cast, Transpose, Squeeze, Unsqueeze) comes from; None when it is a new unit axis or `p`
    is another op."""
    if p is None or p.domain != "" or not p.inputs:
        return None
    if p.op_type in ("Identity", "Cast"):
        return axis
    r = rank(p.outputs[0])
    if r is None:
        return None
    axis %= r
    if p.op_type == "Transpose":
        perm = transpose_perm(p, r)
        return int(perm[axis])
    axes = int_operand(p, 1) if p.op_type in ("Squeeze", "Unsqueeze") else None
    if axes is None:
        return None
    if p.op_type == "Unsqueeze":
        added = sorted(a % r for a in axes)
        return None if axis in added else axis - sum(1 for a in added if a < axis)
    rx = rank(p.inputs[0])
    if rx is None:
        return None
    kept = [k for k in range(rx) if k not in {a % rx for a in axes}]
    return kept[axis]


def _elements(v: Value | None, depth: int = 0) -> list | None:
    """The refs of the elements of a small 1-D (or scalar) integer value."""
    if v is None or depth > 16:
        return None
    c = const_value(v)
    if c is not None:
        return [int(x) for x in c.reshape(-1)] if c.dtype.kind in "iu" and c.size < 16 else None
    p = v.producer
    if p is None or p.domain != "" or not p.inputs:
        return None
    op = p.op_type
    if has(p, Trait.RESHAPE) or op == "Cast":
        return _elements(p.inputs[0], depth + 1)
    if op == "Shape" and len(p.inputs) == 1 and "start" not in p.attrs and "end" not in p.attrs:
        r = rank(p.inputs[0])
        return None if r is None else [axis_ref(p.inputs[0], k) for k in range(r)]
    if op == "Gather" and len(p.inputs) == 2 and int(p.attrs.get("axis", 0)) == 0:
        data, idx = _elements(p.inputs[0], depth + 1), const_value(p.inputs[1])
        if data is None or idx is None:
            return None
        try:
            return [data[int(k)] for k in idx.reshape(-1)]
        except IndexError:
            return None
    if op == "Concat":
        parts = [_elements(x, depth + 1) for x in p.inputs]
        return None if any(x is None for x in parts) else [e for x in parts for e in x]
    if op == "Slice" and len(p.inputs) >= 3:
        data = _elements(p.inputs[0], depth + 1)
        bounds = [const_value(x) for x in p.inputs[1:]]
        if data is None or any(b is None for b in bounds):
            return None
        lo, hi = int(bounds[0].reshape(-1)[0]), int(bounds[1].reshape(-1)[0])
        step = int(bounds[3].reshape(-1)[0]) if len(bounds) > 3 else 1
        return data[lo:hi:step]
    return None


def dim_ref(v: Value | None):
    """What the one-element integer `v` holds (see the module docstring), or None."""
    els = _elements(v)
    return els[0] if els is not None and len(els) == 1 else None


def uniform_ref(v: Value | None):
    """The ref every element of `v` holds: `v` of one element, or ``Expand`` of one."""
    p = _std(v, "Expand", "Cast", "Identity")
    if p is not None:
        return uniform_ref(p.inputs[0])
    return dim_ref(v)


def same(a: Value | None, b: Value | None, depth: int = 0) -> bool:
    """Whether `a` and `b` are one value, equal constants, or outputs of the same standard
    op with the same attributes on inputs that are the same."""
    if a is b:
        return True
    if a is None or b is None or depth > 24:
        return False
    ca, cb = const_value(a), const_value(b)
    if ca is not None or cb is not None:
        return ca is not None and cb is not None and ca.dtype == cb.dtype and \
            np.array_equal(ca, cb)
    pa, pb = a.producer, b.producer
    if pa is None or pb is None or pa.domain != "" or pb.domain != "":
        return False
    if (pa.op_type != pb.op_type or pa.domain != pb.domain or a.index != b.index
            or not has(pa, Trait.PURE) or pa.subgraphs() or len(pa.inputs) != len(pb.inputs)
            or repr(sorted(pa.attrs.items())) != repr(sorted(pb.attrs.items()))):
        return False
    return all(same(x, y, depth + 1) for x, y in zip(pa.inputs, pb.inputs))


def layout(v: Value, depth: int = 0):
    """(base, axes): `v` is `base` seen through ``Identity``/``Transpose``/``Squeeze``/
    ``Unsqueeze``; `axes` gives, per axis of `v`, the axis of `base` it is, or -1 for an
    inserted unit axis (None when a rank is unknown)."""
    p = v.producer
    if p is None or p.domain != "" or depth > 16 or not p.inputs or p.op_type not in (
            "Identity", "Transpose", "Squeeze", "Unsqueeze"):
        r = rank(v)
        return v, None if r is None else tuple(range(r))
    base, axes = layout(p.inputs[0], depth + 1)
    if axes is None or p.op_type == "Identity":
        return base, axes
    if p.op_type == "Transpose":
        perm = transpose_perm(p, len(axes))
        return base, tuple(axes[int(k)] for k in perm)
    given = int_operand(p, 1)
    if given is None:
        return base, None
    if p.op_type == "Squeeze":
        gone = {a % len(axes) for a in given}
        return base, tuple(d for k, d in enumerate(axes) if k not in gone)
    out = list(axes)
    for a in sorted(a % (len(axes) + len(given)) for a in given):
        out.insert(a, -1)
    return base, tuple(out)


def equivalent(a: Value, b: Value) -> bool:
    """Whether `a` and `b` are the same values: `same`, or one base value seen through
    shape ops that place its axes alike."""
    if same(a, b):
        return True
    (ba, xa), (bb, xb) = layout(a), layout(b)
    return xa is not None and xa == xb and same(ba, bb)
