"""A loop whose body cannot be traced but that may run zero iterations.

Tracing a body can fail for the shapes it would see: an ``axis`` beyond the rank of a value
whose rank only the run shows (``Gather(x, i, axis=5)`` of a body input declared without a
shape, given a matrix). ONNX Runtime loads such a model (its shape inference does not know the
rank) and, when the loop runs zero iterations, returns the zero-iteration outputs: the body
never executes; so does the NumPy backend. The JAX backend does the same: the body's error
becomes a run-time check on whether the first iteration runs, and the outputs are those of
zero iterations (`outputs.zero_trip_outputs`). Where the loop is known to run (or a
precondition, which needs the body, decides it) the error is raised as it was.
"""

from __future__ import annotations

from ....errors import ExecutionError, IterationLimitError
from ..context import Bailout, TooLarge, TraceContext
from .setup import Setup


def first_iteration_runs(st: Setup):
    """Would the loop run its first iteration: its initial condition and a limit (trip
    count, slice counts) above 0; a Python bool where both are static, else a traced bool.
    The precondition is not looked at."""
    import jax.numpy as jnp

    static_limit = st.limit is None or isinstance(st.limit, int)
    if st.cond0 is False or (static_limit and st.limit == 0):
        return False
    if static_limit:
        return st.cond0
    return jnp.asarray(st.cond0, dtype=bool) & (st.limit > 0)


def defer_body_error(tc: TraceContext, st: Setup, e: ExecutionError) -> None:
    """Record `e`, raised while tracing the body of `st`'s loop, as an error of the loop's
    frame raised when the first iteration runs; re-raise it where that cannot be told apart
    (a precondition) or is certain, and for errors that are not about the body's shapes
    (the iteration limit, a buffer too large, a bail-out to NumPy)."""
    if isinstance(e, IterationLimitError | TooLarge | Bailout) or st.has_pre:
        raise e
    runs = first_iteration_runs(st)
    if runs is True:
        raise e
    if runs is not False:
        tc.check(st.scope.frame, runs, str(e), type(e))
