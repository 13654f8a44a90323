"""Error messages of loop lowering, shared by the traced forms and the Python driver."""

from __future__ import annotations

from ....errors import Error, ExecutionError, IterationLimitError, where
from ....ir import Loop, Sliced
from ...common.memory import human_bytes
from ..context import TooLarge

LIMIT_MESSAGE = "stopped after max_iterations={max_iterations} iterations"


def beyond_message(loop: Loop, j: int, count: int, p: Sliced) -> str:
    return (f"{where(loop)}: the loop iterates beyond sliced input {j}, which has {count} "
            f"entries on axis {p.axis}")


def zero_trip_message(loop: Loop, i: int) -> str:
    r = loop.output_ports[i].result
    return (f"{where(loop)}: output {i} ('{r.name}') has no value: the loop ran zero iterations "
            "and the output is neither a carried value nor loop-invariant")


def output_names(loop: Loop, indices) -> str:
    """``output 1 ('xs')``, ``outputs 1 ('xs'), 2 ('ys')``: loop outputs as the user's file
    names them."""
    names = [f"{i} ('{loop.output_ports[i].output.name}')" for i in indices]
    return ("output " if len(names) == 1 else "outputs ") + ", ".join(names)


def too_large_message(loop: Loop, indices, nbytes: int, what: str, limit: int) -> str:
    """A buffer of `nbytes` for the loop's outputs `indices` is more than `limit` allows."""
    return (f"{where(loop)}: {output_names(loop, indices)} would need {human_bytes(nbytes)} "
            f"({what}), more than this process can allocate ({human_bytes(limit)})")


def out_of_memory_message(loop: Loop, indices, what: str, error: BaseException) -> str:
    """Allocating the buffers of the loop's outputs `indices` failed."""
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (f"{where(loop)}: out of memory allocating {what} for {output_names(loop, indices)}"
            f": {detail}")


def limit_before_size(e: TooLarge, max_it: int | None) -> Error:
    """The error to raise for `e`: the iteration limit when `max_it` stops its loop before
    the iterations the buffer was sized for, else an `ExecutionError` with its message."""
    if e.iterations is not None and max_it is not None and max_it < e.iterations:
        message = f"{where(e.loop)}: {LIMIT_MESSAGE}".replace("{max_iterations}", str(max_it))
        return IterationLimitError(message)
    return ExecutionError(str(e))
