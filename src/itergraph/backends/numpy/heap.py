"""glibc's heap thresholds, set so that a NumPy plan's large temporaries are reused, not
fetched from the kernel page by page on every call.

A plan allocates its intermediate arrays afresh on every call (a Conv's output of a few
hundred KiB to a few MiB, its im2col buffer). glibc's malloc serves such sizes from the heap
once its dynamic thresholds have grown to them, but keeps at most `M_TRIM_THRESHOLD` of free
memory at the heap's top and returns the rest to the kernel. Whether the temporaries land
there depends on what the process allocated before: after an import of ONNX Runtime, JAX,
OpenVINO or even ``onnx.reference``, measured on PP-OCR's direction classifier, every call
of the same plan freed its arrays back to the kernel and faulted them in again: about 800
page faults and 2 ms of system time per 2.5 ms call, 1.9x slower.

`keep_temporaries` (called once, when the first plan is compiled) fixes glibc's thresholds
at the largest values its own dynamic rule reaches (`M_MMAP_THRESHOLD` 32 MiB, the trim
threshold twice that): arrays under 32 MiB come from the heap, and up to 64 MiB of freed
memory stays in the process. The setting is process-wide (it also serves the caller's other
allocations); the environment variable ``ITERGRAPH_MALLOC_DEFAULTS=1`` leaves glibc's
settings alone. Elsewhere than on glibc (musl, macOS, Windows) nothing is done.
"""

from __future__ import annotations

import ctypes
import os
import sys

ENV_DEFAULTS = "ITERGRAPH_MALLOC_DEFAULTS"
M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # as glibc's dynamic rule pairs them

_done = False


def keep_temporaries() -> bool:
    """Set glibc's thresholds (see the module docstring) the first time; True when set."""
    global _done
    if _done:
        return False
    _done = True
    if os.environ.get(ENV_DEFAULTS, "") not in ("", "0") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - glibc only: musl's mallopt does nothing
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
