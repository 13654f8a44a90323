"""Affine forms of loop-body values: ``v = s_1 @ M_1 + ... + s_k @ M_k + b`` (for `fuse_cells`).

Not a pass: the analysis `fuse_cells` runs on a recurrent cell's gate pre-activations. A
*source* is a body value of shape ``[batch, width]`` that varies per iteration (the step's
input ``x_t``, the hidden state ``h``, GRU's ``r * h``); every ``M_k`` and ``b`` is
loop-invariant. `Inv` describes such an invariant matrix or vector as an invariant value plus
a few steps (transpose, row/column ranges, scaling) that can be computed before the loop.

`AffineScope.form(v)` finds the form of `v` through the ops exporters use to compute gates:
``MatMul`` and ``Gemm`` (any ``transA=0``/``transB``/``alpha``/``beta``, bias input ``C``
constant or itself affine), a source concatenated with others along the last axis and
multiplied by one weight (TensorFlow's ``concat([x, h]) @ kernel``), ``Add``/``Sub``,
multiplication by a constant scalar, ``Identity``, and gate extraction along the last axis
(``Split``, ``Slice`` with step 1, ``Gather`` of one contiguous index range, ``SequenceAt`` of
a ``SplitToSequence`` whose sizes follow from the width: what ``torch.onnx`` writes for
``chunk`` when it computes the sizes in the body). Everything has
rank 2 and every matrix a static shape (declared, constant, or derived by `inv_shape` through
shape ops), so that each gate's columns are known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.attributes import attr_or_default
from ...ir.canonical import int_operand
from ...ir.graph import Value
from ...ir.static_values import known_dims, static_value
from ...ir.traits import Trait, has, transpose_perm
from ...ir.types import TensorType
from ..loop_motion import LoopScope, const_value, is_pure, static_shape

# ----------------------------------------------------------------------------- shapes


def inv_shape(v: Value | None, depth: int = 0) -> tuple[int, ...] | None:
    """`v`'s static shape: declared, constant, or derived through shape-preserving and
    shape ops of invariant values (Identity, Cast, Transpose, Unsqueeze, Squeeze, Reshape,
    Slice, Split, Concat, element-wise arithmetic)."""
    s = static_shape(v)
    if s is not None or v is None or depth > 32:
        return s
    p = v.producer
    if p is None or p.domain != "":
        return None
    ins = [inv_shape(x, depth + 1) if x is not None else None for x in p.inputs]
    op = p.op_type
    try:
        if has(p, Trait.SAME_SHAPE) and ins[0] is not None:
            return ins[0]
        if has(p, Trait.BROADCAST) and None not in ins:
            return tuple(np.broadcast_shapes(*ins))
        if op == "Transpose" and ins[0] is not None:
            perm = transpose_perm(p, len(ins[0]))
            return tuple(ins[0][int(k)] for k in perm)
        if op in ("Unsqueeze", "Squeeze") and ins[0] is not None:
            axes = int_operand(p, 1)
            if axes is None:
                return None
            if op == "Unsqueeze":
                r = len(ins[0]) + len(axes)
                axes = sorted(a % r for a in axes)
                out = list(ins[0])
                for a in axes:
                    out.insert(a, 1)
                return tuple(out)
            r = len(ins[0])
            gone = {a % r for a in axes}
            return tuple(d for i, d in enumerate(ins[0]) if i not in gone)
        if op == "Reshape" and ins[0] is not None:
            target = const_value(p.inputs[1])
            if target is None or p.attrs.get("allowzero", 0):
                return None
            out = [ins[0][i] if int(d) == 0 else int(d) for i, d in enumerate(target)]
            if -1 in out:
                known = int(np.prod([d for d in out if d != -1]))
                out[out.index(-1)] = int(np.prod(ins[0])) // max(known, 1)
            return tuple(out)
        if op == "Concat" and None not in ins:
            ax = int(p.attrs.get("axis", 0)) % len(ins[0])
            out = list(ins[0])
            out[ax] = sum(s[ax] for s in ins)
            return tuple(out)
        if op == "Split" and ins[0] is not None:
            ax = int(p.attrs.get("axis", 0)) % len(ins[0])
            sizes = split_sizes(p, ins[0][ax])
            if sizes is None:
                return None
            out = list(ins[0])
            out[ax] = sizes[v.index]
            return tuple(out)
        if op == "Slice" and ins[0] is not None:
            r = slice_ranges(p, ins[0])
            if r is None:
                return None
            out = list(ins[0])
            for ax, (lo, hi) in r.items():
                out[ax] = hi - lo
            return tuple(out)
    except (ValueError, IndexError, ZeroDivisionError):
        return None
    return None


def slice_ranges(node, shape) -> dict[int, tuple[int, int]] | None:
    """{axis: (lo, hi)} of a step-1 Slice whose parameters are known before the run
    (`static_value`), else None."""
    vals = [static_value(v) if v is not None else None
            for v in (list(node.inputs[1:]) + [None] * 4)[:4]]
    if vals[0] is None or vals[1] is None:
        return None
    if (len(node.inputs) > 3 and node.inputs[3] is not None and vals[2] is None) or (
            len(node.inputs) > 4 and node.inputs[4] is not None and vals[3] is None):
        return None
    starts, ends, axes, steps = vals
    if starts is None or ends is None:
        return None
    starts = [int(s) for s in np.asarray(starts).reshape(-1)]
    ends = [int(e) for e in np.asarray(ends).reshape(-1)]
    r = len(shape)
    axes = list(range(len(starts))) if axes is None else [
        int(a) % r for a in np.asarray(axes).reshape(-1)]
    if steps is not None and any(int(s) != 1 for s in np.asarray(steps).reshape(-1)):
        return None
    out = {}
    for a, s, e in zip(axes, starts, ends):
        d = shape[a]
        lo, hi = slice(s, e).indices(d)[:2]
        out[a] = (lo, max(lo, hi))
    return out


# ----------------------------------------------------------------------------- invariants


@dataclass(frozen=True)
class Inv:
    """A loop-invariant matrix (rank 2) or vector (rank 1): `value` as read in the body, then
    `steps` in order: ``("sq0",)`` drop a leading unit axis, ``("T",)`` transpose,
    ``("rows", lo, hi)``, ``("cols", lo, hi)`` (the last axis of a vector), ``("scale", a)``,
    ``("vec", n)`` (a ``[1, n]``/``[n]``/scalar value broadcast to a vector of n). `shape` is
    the result's."""

    value: Value
    steps: tuple
    shape: tuple[int, ...]

    def then(self, *step) -> Inv:
        shape = list(self.shape)
        kind = step[0]
        if kind == "T":
            shape = shape[::-1]
        elif kind == "rows":
            shape[0] = step[2] - step[1]
        elif kind == "cols":
            shape[-1] = step[2] - step[1]
        elif kind == "vec":
            shape = [step[1]]
        return Inv(self.value, self.steps + (step,), tuple(shape))


@dataclass(frozen=True)
class Affine:
    """``sum(source @ matrix for source, matrix in terms) + sum(bias)``, `cols` columns."""

    cols: int
    terms: tuple[tuple[int, Inv], ...] = ()  # (source uid, [width, cols] matrix)
    bias: tuple[Inv, ...] = ()  # [cols] vectors

    def __add__(self, other: Affine) -> Affine:
        return Affine(self.cols, self.terms + other.terms, self.bias + other.bias)

    def columns(self, lo: int, hi: int) -> Affine:
        if (lo, hi) == (0, self.cols):
            return self
        return Affine(hi - lo, tuple((s, m.then("cols", lo, hi)) for s, m in self.terms),
                      tuple(b.then("cols", lo, hi) for b in self.bias))

    def scaled(self, a: float) -> Affine:
        if a == 1.0:
            return self
        return Affine(self.cols, tuple((s, m.then("scale", a)) for s, m in self.terms),
                      tuple(b.then("scale", a) for b in self.bias))

    def sources(self) -> set[int]:
        return {s for s, _ in self.terms}


def _scalar(v: Value) -> float | None:
    c = static_value(v)  # a constant, maybe cast (float16-compressed weights)
    if c is None or c.size != 1 or c.dtype.kind != "f":
        return None
    return float(c.reshape(()))


# ----------------------------------------------------------------------------- analysis


class AffineScope:
    """Affine forms of the body values of one loop over the given sources.

    `sources` maps a source value's uid to its width (None: unknown yet; learnt from the
    first weight it is multiplied with). `form(v)` is the form, or None when `v` is not
    affine in the sources with invariant coefficients and known shapes (memoised).
    """

    def __init__(self, scope: LoopScope, sources: dict[int, int | None]):
        self.scope = scope
        self.widths = dict(sources)
        self._memo: dict[int, Affine | None] = {}
        self._invariant: dict[int, bool] = {}

    def form(self, v: Value | None) -> Affine | None:
        if v is None:
            return None
        if v.uid not in self._memo:
            self._memo[v.uid] = None  # a cycle (cannot happen in a valid body) stays None
            self._memo[v.uid] = self._form(v)
        return self._memo[v.uid]

    def is_invariant(self, v: Value) -> bool:
        """Loop-invariant: `LoopScope`'s answer, or computed in the body by pure nodes from
        invariant values only (weights sliced or transposed inside the body)."""
        if self.scope.is_invariant(v):
            return True
        got = self._invariant.get(v.uid)
        if got is None:
            self._invariant[v.uid] = False  # (a cycle cannot happen in a valid body)
            p = v.producer
            got = (p is not None and not p.subgraphs() and is_pure(p)
                   and v.uid not in self.widths
                   and all(x is None or self.is_invariant(x) for x in p.inputs))
            self._invariant[v.uid] = got
        return got

    def vector(self, v: Value, cols: int) -> Inv | None:
        """An invariant bias that broadcasts against ``[batch, cols]`` as a vector."""
        if not self.is_invariant(v):
            return None
        s = inv_shape(v)
        if s is None:
            return self._vector_part(v, cols)
        if len(s) > 2 or (len(s) == 2 and s[0] != 1):
            return None
        if s and s[-1] not in (1, cols):
            return None
        return Inv(v, (), s).then("vec", cols)

    def _vector_part(self, v: Value, cols: int) -> Inv | None:
        """A block of an invariant vector cut out by Split or Slice (per-gate biases)."""
        p = v.producer
        if p is None or p.domain != "" or p.op_type not in ("Split", "Slice"):
            return None
        whole = inv_shape(p.inputs[0])
        if whole is None or len(whole) not in (1, 2) or (len(whole) == 2 and whole[0] != 1):
            return None
        n = whole[-1]
        if p.op_type == "Split":
            if int(p.attrs.get("axis", 0)) % len(whole) != len(whole) - 1:
                return None
            sizes = split_sizes(p, n)
            if sizes is None:
                return None
            lo = int(np.sum(sizes[:v.index]))
            hi = lo + sizes[v.index]
        else:
            r = slice_ranges(p, whole)
            if r is None or set(r) - {len(whole) - 1}:
                return None
            lo, hi = r.get(len(whole) - 1, (0, n))
        base = self.vector(p.inputs[0], n)
        if base is None or hi - lo != cols:
            return None
        return base.then("cols", lo, hi)

    def matrix_sq0(self, v: Value | None) -> Inv | None:
        """A ``[1, a, b]`` invariant as the ``[a, b]`` matrix (cell operators' weights)."""
        s = inv_shape(v) if v is not None and self.is_invariant(v) else None
        if s is None or len(s) != 3 or s[0] != 1:
            return None
        return Inv(v, (("sq0",),), s[1:])

    def vector_sq0(self, v: Value | None, n: int) -> Inv | None:
        """A ``[1, n]`` invariant as a vector (cell operators' biases and peepholes)."""
        s = inv_shape(v) if v is not None and self.is_invariant(v) else None
        if s != (1, n):
            return None
        return Inv(v, (("sq0",),), (n,))

    def matrix(self, v: Value, transpose: bool = False) -> Inv | None:
        if not self.is_invariant(v):
            return None
        s = inv_shape(v)
        if s is None or len(s) != 2:
            return None
        m = Inv(v, (), s)
        return m.then("T") if transpose else m

    def _form(self, v: Value) -> Affine | None:
        p = v.producer
        if p is None or p.domain != "" or v.uid not in self.scope.defined:
            return None
        op = p.op_type
        ins = p.inputs
        if op == "Identity":
            return self.form(ins[0])
        if op == "MatMul":
            return self._product(ins[0], self.matrix(ins[1]) if ins[1] is not None else None)
        if op == "Gemm":
            return self._gemm(p)
        if op in ("Add", "Sub"):
            return self._sum(ins[0], ins[1], -1.0 if op == "Sub" else 1.0)
        if op == "Mul":
            for a, b in ((ins[0], ins[1]), (ins[1], ins[0])):
                k = _scalar(b) if b is not None else None
                if k is not None:
                    f = self.form(a)
                    return None if f is None else f.scaled(k)
            return None
        if op in ("Split", "Slice", "Gather"):
            return self._columns(p, v)
        if op == "SequenceAt":
            return self._sequence_part(p)
        return None

    def _sum(self, a: Value, b: Value, sign: float) -> Affine | None:
        fa, fb = self.form(a), self.form(b)
        if fa is not None and fb is not None:
            return fa + fb.scaled(sign) if fa.cols == fb.cols else None
        if fa is not None:
            vb = self.vector(b, fa.cols)
            return None if vb is None else fa + Affine(fa.cols, (), (vb,)).scaled(sign)
        if fb is not None and sign == 1.0:
            va = self.vector(a, fb.cols)
            return None if va is None else Affine(fb.cols, (), (va,)) + fb
        return None

    def _product(self, a: Value | None, m: Inv | None) -> Affine | None:
        """``a @ m`` where `a` is a source or a concatenation of sources (last axis)."""
        if a is None or m is None:
            return None
        parts = self._concat_parts(a)
        if parts is None:
            return None
        rows = m.shape[0]
        widths = [self.widths.get(s.uid) for s in parts]
        unknown = [i for i, w in enumerate(widths) if w is None]
        if len(unknown) > 1:
            return None
        if unknown:
            widths[unknown[0]] = rows - sum(w for w in widths if w is not None)
        if sum(widths) != rows or min(widths) <= 0:
            return None
        terms, at = [], 0
        for s, w in zip(parts, widths):
            if self.widths.get(s.uid) not in (None, w):
                return None
            self.widths[s.uid] = w
            terms.append((s.uid, m if len(parts) == 1 else m.then("rows", at, at + w)))
            at += w
        return Affine(m.shape[1], tuple(terms))

    def _concat_parts(self, a: Value) -> list[Value] | None:
        while (a.producer is not None and a.producer.op_type == "Identity"
               and a.producer.domain == "" and a.uid not in self.widths):
            a = a.producer.inputs[0]
        if a.uid in self.widths:
            return [a]
        p = a.producer
        if p is None or p.op_type != "Concat" or p.domain != "":
            return None
        if int(p.attrs.get("axis", 0)) not in (-1, 1) or None in p.inputs:
            return None
        out = []
        for x in p.inputs:
            sub = self._concat_parts(x)
            if sub is None:
                return None
            out += sub
        return out

    def _gemm(self, p) -> Affine | None:
        if attr_or_default(p, "transA") or "broadcast" in p.attrs:
            return None
        m = self.matrix(p.inputs[1], bool(p.attrs.get("transB", 0)))
        f = self._product(p.inputs[0], m)
        if f is None:
            return None
        f = f.scaled(float(p.attrs.get("alpha", 1.0)))
        c = p.inputs[2] if len(p.inputs) > 2 else None
        if c is None:
            return f
        beta = float(p.attrs.get("beta", 1.0))
        fc = self.form(c)
        if fc is not None:
            return f + fc.scaled(beta) if fc.cols == f.cols else None
        vc = self.vector(c, f.cols)
        return None if vc is None else f + Affine(f.cols, (), (vc,)).scaled(beta)

    def _columns(self, p, v: Value) -> Affine | None:
        f = self.form(p.inputs[0])
        if f is None:
            return None
        shape = (None, f.cols)
        if p.op_type == "Slice":
            with known_dims({p.inputs[0].uid: (None, f.cols)}):  # sizes computed in the body
                r = slice_ranges(p, (1, f.cols))
            if r is None or set(r) - {1}:
                return None
            lo, hi = r.get(1, (0, f.cols))
            return f.columns(lo, hi) if hi > lo else None
        if p.op_type == "Gather":
            if int(p.attrs.get("axis", 0)) not in (-1, 1):
                return None
            idx = const_value(p.inputs[1])
            if idx is None or idx.ndim != 1 or idx.size == 0:
                return None
            idx = np.where(idx < 0, idx + f.cols, idx)
            lo = int(idx[0])
            if not np.array_equal(idx, np.arange(lo, lo + idx.size)) or idx[-1] >= f.cols:
                return None
            return f.columns(lo, lo + idx.size)
        with known_dims({p.inputs[0].uid: (None, f.cols)}):  # sizes computed in the body
            sizes = split_sizes(p, shape[1])
        if sizes is None or int(p.attrs.get("axis", 0)) not in (-1, 1):
            return None
        at = int(np.sum(sizes[:v.index]))
        return f.columns(at, at + sizes[v.index])


    def _sequence_part(self, p) -> Affine | None:
        """Block k of ``SplitToSequence(x, split, axis=1)`` read by ``SequenceAt(seq, k)``,
        the sizes computed from constants and x's width (known from its form)."""
        s = p.inputs[0].producer if p.inputs[0] is not None else None
        if (s is None or s.op_type != "SplitToSequence" or s.domain != ""
                or len(s.inputs) < 2 or s.inputs[1] is None or len(p.inputs) != 2
                or int(s.attrs.get("axis", 0)) not in (-1, 1)):
            return None
        f = self.form(s.inputs[0])
        if f is None:
            return None
        with known_dims({s.inputs[0].uid: (None, f.cols)}):
            split, k = static_value(s.inputs[1]), static_value(p.inputs[1])
        if (split is None or k is None or k.size != 1 or split.ndim > 1
                or split.dtype.kind not in "iu" or k.dtype.kind not in "iu"):
            return None
        if split.ndim == 0:  # blocks of that size, the last one smaller
            size = int(split)
            if size <= 0:
                return None
            n = -(-f.cols // size)
            sizes = [size] * (n - 1) + [f.cols - size * (n - 1)]
        else:
            sizes = [int(x) for x in split]
        k = int(k.reshape(())) + (len(sizes) if int(k.reshape(())) < 0 else 0)
        if sum(sizes) != f.cols or min(sizes, default=0) <= 0 or not 0 <= k < len(sizes):
            return None
        at = sum(sizes[:k])
        return f.columns(at, at + sizes[k])


def split_sizes(p, dim: int) -> list[int] | None:
    """The block sizes of a Split node over an axis of length `dim`, when known before the
    run (`static_value`)."""
    n = len(p.outputs)
    sizes = None
    if len(p.inputs) > 1 and p.inputs[1] is not None:
        c = static_value(p.inputs[1])
        if c is None:
            return None
        sizes = [int(s) for s in np.asarray(c).reshape(-1)]
    elif dim % n == 0:
        sizes = [dim // n] * n
    elif p.attrs.get("num_outputs") is not None:  # opset 18: the last block is smaller
        k = -(-dim // n)
        sizes = [k] * (n - 1) + [dim - k * (n - 1)]
    if sizes is None or len(sizes) != n or sum(sizes) != dim or min(sizes) < 0:
        return None
    return sizes


def declared_width(v: Value) -> int | None:
    """The static last dimension of `v`'s declared rank-2 type, when there is one."""
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and len(t.shape) == 2:
        d = t.shape[-1]
        return d if isinstance(d, int) and d > 0 else None
    return None
