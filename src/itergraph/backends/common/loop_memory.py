"""What both backends say when a loop's output buffer cannot be allocated.

A buffer whose size is known before it is allocated is compared with `memory.memory_limit`
first (`check_buffer`): one that cannot fit is refused with `too_large_message`, naming the
loop and its outputs as the user's file names them (``Loop node 'L': output 1 ('seq') would
need 7.45 GiB (length 1000000000), more than this process can allocate (4.00 GiB)``). An
allocation that fails anyway gives `allocation_failed_message`: the same words when the
buffer is over the limit, else `out_of_memory_message`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...errors import ExecutionError, where
from .memory import human_bytes, memory_limit, over_limit


def output_names(loop, indices: Iterable[int]) -> str:
    """``output 1 ('xs')``, ``outputs 1 ('xs'), 2 ('ys')``: loop outputs as the user's file
    names them."""
    names = [f"{i} ('{loop.output_ports[i].output.name}')" for i in indices]
    return ("output " if len(names) == 1 else "outputs ") + ", ".join(names)


def too_large_message(loop, indices, nbytes: int, what: str, limit: int) -> str:
    """A buffer of `nbytes` for the loop's outputs `indices` is more than `limit` allows."""
    return (f"{where(loop)}: {output_names(loop, indices)} would need {human_bytes(nbytes)} "
            f"({what}), more than this process can allocate ({human_bytes(limit)})")


def out_of_memory_message(loop, indices, what: str, error: BaseException) -> str:
    """Allocating the buffers of the loop's outputs `indices` failed."""
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return (f"{where(loop)}: out of memory allocating {what} for {output_names(loop, indices)}"
            f": {detail}")


def allocation_failed_message(loop, indices, nbytes: int, what: str,
                              error: BaseException) -> str:
    """An allocation of `nbytes` for the loop's outputs `indices` failed with `error`."""
    limit = memory_limit()
    if limit is not None and nbytes > limit:
        return too_large_message(loop, indices, nbytes, what, limit)
    return out_of_memory_message(loop, indices, f"{what} ({human_bytes(nbytes)})", error)


def nbytes_of(shape, dtype) -> int:
    """Bytes of an array of `shape` and `dtype` (exact, whatever the size)."""
    return int(np.prod([int(d) for d in shape], dtype=object)) * np.dtype(dtype).itemsize


def check_buffer(loop, indices, nbytes: int, what: str) -> None:
    """`ExecutionError` naming the loop's outputs `indices`, before anything is allocated,
    when a buffer of `nbytes` cannot fit in memory."""
    limit = over_limit(nbytes)
    if limit is not None:
        raise ExecutionError(too_large_message(loop, indices, nbytes, what, limit))


def allocate(loop, indices, shape, dtype, what: str, zeros: bool = False) -> np.ndarray:
    """``np.empty(shape, dtype)`` (``np.zeros`` with `zeros`) for the loop's outputs
    `indices`, refused or reported as `check_buffer` and `allocation_failed_message` say."""
    nbytes = nbytes_of(shape, dtype)
    check_buffer(loop, indices, nbytes, what)
    try:
        return np.zeros(shape, dtype) if zeros else np.empty(shape, dtype)
    except MemoryError as e:
        raise ExecutionError(allocation_failed_message(loop, indices, nbytes, what, e)) \
            from None
