"""Error messages of loop lowering, shared by the traced forms and the Python driver."""

from __future__ import annotations

from ....errors import Error, ExecutionError, IterationLimitError, where
from ....ir import Loop, Sliced
from ...common.loop_memory import (  # noqa: F401 - shared with the NumPy backend
    out_of_memory_message,
    output_names,
    too_large_message,
)
from ..context import LIMIT_MESSAGE, TooLarge  # noqa: F401 - LIMIT_MESSAGE read from here


def beyond_message(loop: Loop, j: int, count: int, p: Sliced) -> str:
    return (f"{where(loop)}: the loop iterates beyond sliced input {j}, which has {count} "
            f"entries on axis {p.axis}")


def zero_trip_message(loop: Loop, i: int) -> str:
    r = loop.output_ports[i].result
    return (f"{where(loop)}: output {i} ('{r.name}') has no value: the loop ran zero iterations "
            "and the output is neither a carried value nor loop-invariant")


def limit_before_size(e: TooLarge, max_it: int | None) -> Error:
    """The error to raise for `e`: the iteration limit when `max_it` stops its loop before
    the iterations the buffer was sized for, else an `ExecutionError` with its message."""
    if e.iterations is not None and max_it is not None and max_it < e.iterations:
        message = f"{where(e.loop)}: {LIMIT_MESSAGE}".replace("{max_iterations}", str(max_it))
        return IterationLimitError(message)
    return ExecutionError(str(e))
