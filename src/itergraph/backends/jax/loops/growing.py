"""Carried values that grow every iteration (K/V caches), as fixed-capacity buffers.

A carried value whose next value is ``Concat(itself, piece)`` on one axis, the piece the same
length `d` every iteration, has length ``L0 + d*k`` at iteration `k`: it changes shape, so it
cannot be the carry of an XLA loop as it is. When the loop's iteration count is bounded by
`n` when tracing (a scan's count; a driver step's capacity, see `driver`; the trip count
of a loop that can stop early when it is known and no grown value leaves it, `bounded`),
such a value is
carried instead as a buffer of ``L0 + d*n`` positions on that axis, of which the first
``L0 + d*k`` hold the value; `Padded` is what the body sees (the buffer, the axis and the
valid length), and the Concat that grows it writes its piece at the valid length.

Positions beyond the valid length hold garbage; reads of the buffer are made exact by the
rule table of `padded_reads`. Any other read of a padded value, a padded value
leaving the body other than as the grown carried value (a scan output, a last value, the
condition) or a grown value of another length than ``L0 + d*(k+1)``, raises `Refused`, and
the loop is lowered as if nothing were rewritten (on NumPy, as any loop whose carried value
changes shape).

The loop's outputs are the buffers cut to the valid length.
"""

from __future__ import annotations

import numpy as np

from ....analysis.loop_features import grows_each_iteration
from ....ir import Loop
from ..context import CannotLower, TraceContext
from .padded import identity_rows
from .padded_attention import grows_present
from .padded_reads import Grow, Refused, static_problem, trim

# ----------------------------------------------------------------------------- finding them


def candidates(loop: Loop) -> list[int]:
    """Carried values whose next value is a Concat of themselves, or the present of ONNX
    Runtime's Attention reading them as its past (`padded_attention`; shape-independent)."""
    return [j for j, c in enumerate(loop.carried)
            if (grows_each_iteration(c) and _concat_root(c)) or grows_present(c)]


def _concat_root(c) -> bool:
    p = c.result.producer
    while p is not None and p.op_type in ("Identity",):
        p = p.inputs[0].producer
    return p is not None and p.op_type == "Concat" and p.domain == ""


def plan(tc: TraceContext, st) -> list[Grow]:
    """The carried values of `st` (a `setup.Setup`) that grow by the same length every
    iteration along one axis, from a trace of one iteration on the initial shapes; [] if
    none. `Refused` when a candidate's shape changes otherwise."""
    from .body import probe

    idx = candidates(st.loop)
    if not idx:
        return []
    carried = st.info.carried
    try:
        avals = probe(tc, st, [carried[j].result for j in idx])
    except CannotLower as e:
        raise Refused(f"one iteration does not trace: {e.reason}") from None
    out = []
    for j, a in zip(idx, avals):
        x = st.carried0[j]
        s0, s1 = tuple(x.shape), tuple(a.shape)
        if len(s0) != len(s1) or np.dtype(a.dtype) != np.dtype(x.dtype):
            raise Refused(f"carried value '{carried[j].param.name}' changes rank or type")
        diff = [i for i in range(len(s0)) if s0[i] != s1[i]]
        if len(diff) != 1 or s1[diff[0]] <= s0[diff[0]]:
            raise Refused(f"carried value '{carried[j].param.name}' does not grow along one "
                          "axis")
        ax = diff[0]
        out.append(Grow(j, ax, s0[ax], s1[ax] - s0[ax], _reordered_rows(st.loop, j, ax, s0)))
    return out


def _reordered_rows(loop: Loop, j: int, axis: int, shape: tuple) -> int | None:
    """The axis along which carried value `j` (grown on `axis`) has its rows reordered by a
    Gather of its parameter (through Identity) every iteration, as a beam search reorders
    its caches, when that is how the body reads it and the Gather's rows are the past of ONNX
    Runtime's Attention (`padded_attention`): carried then with its rows reordered lazily
    (`padded.Grow.rows`); else None. A cache grown by Concat and read by MatMul is left
    reordered eagerly: there XLA fuses the gather through the ancestry table into a
    transposing read, one element at a time, which measured slower (a 4-beam loop of the
    generation bench: 1.88 against 1.64 ms per 32-token call) than the whole-row copies."""
    if not grows_present(loop.carried[j]):
        return None
    cur = loop.carried[j].param
    reads = [n for n in loop.body.nodes if any(v is cur for v in n.inputs)]
    while len(reads) == 1 and reads[0].op_type == "Identity":
        cur = reads[0].outputs[0]
        reads = [n for n in loop.body.nodes if any(v is cur for v in n.inputs)]
    if len(reads) != 1 or (reads[0].domain, reads[0].op_type) != ("", "Gather") or \
            reads[0].inputs[0] is not cur:
        return None
    rank = len(shape)
    rows = int(reads[0].attrs.get("axis", 0))
    rows = rows + rank if rows < 0 else rows
    return rows if 0 <= rows < rank and rows != axis else None


def buffers(st, grows: list[Grow], n: int, old: list | None = None) -> list:
    """The initial carried values with each grown one as a buffer for `n` more iterations:
    from `st.carried0`, or from `old` (buffers of an earlier step, extended by d*n)."""
    import jax.numpy as jnp

    from ...common.memory import over_limit

    base = list(st.carried0 if old is None else old)
    total = 0
    for g in grows:
        x = base[g.index]
        pad = [(0, 0)] * x.ndim
        pad[g.axis] = (0, g.d * n)
        dims = [*x.shape[:g.axis], x.shape[g.axis] + g.d * n, *x.shape[g.axis + 1:]]
        total += int(np.prod(dims, dtype=object)) * np.dtype(x.dtype).itemsize
        base[g.index] = jnp.pad(jnp.asarray(x), pad)
        if g.rows is not None:  # (buffer, ancestry table): `padded.Grow.rows`
            base[g.index] = (base[g.index], identity_rows(dims[g.rows], dims[g.axis]))
    if over_limit(total) is not None:
        raise Refused(f"buffers for {n} iterations ({total} bytes) cannot fit in memory")
    return base


def describe(loop: Loop, grows: list[Grow], capacity: str) -> str:
    names = ", ".join(f"'{loop.carried[g.index].param.name}'" for g in grows)
    axes = sorted({g.axis for g in grows})
    ds = sorted({g.d for g in grows})
    return (f"carried value(s) {names} grow by {'/'.join(map(str, ds))} per iteration on axis "
            f"{'/'.join(map(str, axes))} (a Concat of themselves, or the present of an "
            f"Attention reading them as its past): carried as fixed-capacity buffers "
            f"({capacity}) with a valid length; reads masked where padded positions "
            "could reach a result (Softmax along the axis, products contracting it), outputs "
            "cut to the valid length")


def static_ok(loop: Loop) -> tuple[list[int], str | None]:
    """(growing carried indices, None) when every one passes `static_problem`, else the
    first problem."""
    idx = candidates(loop)
    for j in idx:
        why = static_problem(loop, j)
        if why is not None:
            return idx, f"carried value '{loop.carried[j].param.name}': {why}"
    return idx, None


def attempt(tc: TraceContext, st, n: int, lower):
    """``lower(st)`` with the grown carried values of `st` as buffers for `n` iterations,
    their outputs cut to the valid length; ``lower(st)`` as it is when none grows or the
    rewrite is `Refused` (noted)."""
    grows, rewritten, refused = decide(tc, st, n)
    if refused is not None:
        return _unrewritten(lower, st, refused)
    if not grows:
        return lower(st)
    outs = lower(rewritten)
    by = {g.index: g for g in grows}
    for i, j in st.info.last_state.items():
        if j in by:
            outs[i] = trim(outs[i], by[j], n)
    tc.note(st.loop, True, describe(st.loop, grows, f"{n} iterations"))
    return outs


#: the most iterations a loop that can stop early gets buffers for in one program
#: (`bounded`): beyond, the driver's buffers that double spare each iteration a read of a
#: buffer mostly beyond the valid length
BOUNDED_MAX = 1024


def bounded(tc: TraceContext, st, lower):
    """``lower(st)`` for a loop that can stop early, with its grown carried values as
    buffers for its bound `st.limit` (a number known when compiling, at most `BOUNDED_MAX`)
    when none of them leaves the loop (their valid length would be known only at run time)
    and the rewrite applies: one XLA while loop, no driver (the generation loops of
    `passes.lower_generation`, whose bound is max_length). None when this does not apply."""
    n = st.limit
    if not isinstance(n, (int, np.integer)) or not 0 < n <= BOUNDED_MAX:
        return None
    idx = set(candidates(st.loop))
    if not idx or idx & set(st.info.last_state.values()):
        return None
    grows, rewritten, refused = decide(tc, st, int(n), probe_body=False)
    if refused is not None or not grows:
        return None
    # lowered directly, not probed first (a whole trace of the body fewer): a refusal
    # met on the way is the probe's, and what the attempt recorded is forgotten
    notes, err = len(tc.notes), st.scope.frame.err
    try:
        outs = lower(rewritten)
    except (Refused, CannotLower):
        del tc.notes[notes:]
        st.scope.frame.err = err
        return None
    tc.note(st.loop, True, describe(st.loop, grows, f"{n} iterations, the bound known when "
                                                    "compiling"))
    return outs


def decide(tc: TraceContext, st, n: int, probe_body: bool = True):
    """(grows, the rewritten setup, None) when the rewrite applies to `st` for `n`
    iterations, ([], None, None) when nothing grows, ([], None, `Refused`) when it does not
    apply: a read the rule table refuses, or something needed while tracing (a reshape
    target) computed from a valid length, which only the run knows. The rewritten body is
    traced once abstractly to find out (`body.probe`), before anything is lowered, unless
    not `probe_body` (the caller lowers it at once and takes a refusal there as this one)."""
    import dataclasses

    from .body import port_results, probe

    notes, err = len(tc.notes), st.scope.frame.err
    try:
        grows = plan(tc, st)
        if not grows:
            return [], None, None
        rewritten = dataclasses.replace(st, carried0=buffers(st, grows, n), grows=grows)
        if probe_body:
            carried, scanned, lasts = port_results(rewritten)
            probe(tc, rewritten, carried + scanned + lasts, carried_at=0)
    except (Refused, CannotLower) as e:
        del tc.notes[notes:]
        st.scope.frame.err = err
        return [], None, as_refused(e)
    st.scope.frame.err = err
    return grows, rewritten, None


def _unrewritten(lower, st, refused: Refused):
    """``lower(st)`` as it is; when that cannot lower either, the reason says why the
    rewrite did not apply."""
    try:
        return lower(st)
    except CannotLower as e:
        raise CannotLower(e.element, f"{e.reason}; growing carried values not rewritten: "
                                     f"{refused.reason}") from None


def as_refused(e: Exception) -> Refused:
    """`e` (`Refused`, or a `CannotLower` met tracing the rewritten body) as `Refused`."""
    if isinstance(e, Refused):
        return e
    return Refused(f"the rewritten body does not lower ({e.reason}; a valid length is only "
                   "known at run time)" if isinstance(e, CannotLower) else str(e))
