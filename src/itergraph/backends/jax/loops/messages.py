"""Error messages of loop lowering, shared by the traced forms and the Python driver."""

from __future__ import annotations

from ....errors import where
from ....ir import Loop, Sliced

LIMIT_MESSAGE = "stopped after max_iterations={max_iterations} iterations"


def beyond_message(loop: Loop, j: int, count: int, p: Sliced) -> str:
    return (f"{where(loop)}: the loop iterates beyond sliced input {j}, which has {count} "
            f"entries on axis {p.axis}")


def zero_trip_message(loop: Loop, i: int) -> str:
    r = loop.output_ports[i].result
    return (f"{where(loop)}: output {i} ('{r.name}') has no value: the loop ran zero iterations "
            "and the output is neither a carried value nor loop-invariant")
