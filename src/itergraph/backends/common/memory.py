"""The most memory one buffer may take, to refuse a buffer that cannot fit before allocating it.

A backend that can tell a buffer's size before it allocates it (an output padded to a known
length, a loop's output buffer of a given capacity) compares it with `memory_limit` and
raises an error naming the element instead of asking for more than the process can ever get
(which, depending on the allocator and the system, fails late, or not at all until the
system runs out of memory).
"""

from __future__ import annotations

import os


def memory_limit() -> int | None:
    """Bytes that no single buffer can exceed: the machine's physical memory, or the
    process's address-space limit (``RLIMIT_AS``) when that is lower; None when neither is
    known."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            limits.append(soft)
    except (ImportError, AttributeError, ValueError, OSError):
        pass
    limits = [n for n in limits if n > 0]
    return min(limits) if limits else None


def over_limit(nbytes: int) -> int | None:
    """`memory_limit()` when a buffer of `nbytes` exceeds it, else None."""
    limit = memory_limit()
    return limit if limit is not None and nbytes > limit else None


def human_bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps a number of at least 1 (``7.45 GiB``)."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{int(size)} bytes" if unit == "bytes" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{n} bytes"
