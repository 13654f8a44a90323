"""The ``Loop`` rule: choose the XLA form of a loop (see the package docstring)."""

from __future__ import annotations

from ....errors import ExecutionError, IterationLimitError, where
from ....ir import Loop
from ..context import CannotLower, NeedsDriver, Scope, TraceContext, is_static
from .growing import attempt, bounded, candidates
from .messages import LIMIT_MESSAGE, beyond_message
from .outputs import zero_trip_outputs
from .scan import lower_scan
from .setup import setup
from .untraced_body import defer_body_error
from .while_loop import lower_while


def lower_loop(tc: TraceContext, loop: Loop, scope: Scope) -> list:
    st = setup(tc, loop, scope)
    if any(not is_static(x) for x in st.lengths):  # padded lengths shape the outputs
        if tc.depth == 0:
            raise NeedsDriver(loop)
        raise CannotLower(loop, "a concatenated output's length is computed from run-time data")
    n = None
    if st.cond0 is False:
        n = 0
    elif st.cond_free and isinstance(st.limit, int):
        n = st.limit
    if n is not None:
        if st.strict_after is not None and st.cond0 is not False:
            count, j = st.strict_after
            if n == count:
                bad = True if st.trip is None else st.trip > n
                tc.check(scope.frame, bad, beyond_message(loop, j, count, loop.input_ports[j]))
        if tc.max_it is not None and n > 0:
            tc.check(scope.frame, tc.max_it < n, f"{where(loop)}: {LIMIT_MESSAGE}",
                     IterationLimitError)
        if n == 0:
            tc.note(loop, True, "runs zero iterations (known at compile time)")
            return zero_trip_outputs(st)
        return attempt(tc, st, n, lambda s: lower_scan(tc, s, n))
    if st.info.concat_idx:
        if tc.depth == 0:
            raise NeedsDriver(loop)
        outer = tc.enclosing[-1] if tc.enclosing else None
        raise CannotLower(loop, "a loop that can stop early (condition, precondition or run-time "
                                "trip count) with concatenated outputs has a data-dependent "
                                f"output length, which XLA cannot express inside {where(outer)}")
    if candidates(loop):
        outs = bounded(tc, st, lambda s: lower_while(tc, s))
        if outs is not None:
            tc.note(loop, True, "lax.while_loop" + (" (with precondition)" if st.has_pre
                                                    else ""))
            return outs
    if tc.depth == 0 and candidates(loop):
        raise NeedsDriver(loop)  # grown carried values: buffers sized per driver step
    tc.note(loop, True, "lax.while_loop" + (" (with precondition)" if st.has_pre else ""))
    try:
        return lower_while(tc, st)
    except ExecutionError as e:
        defer_body_error(tc, st, e)
        return zero_trip_outputs(st)
