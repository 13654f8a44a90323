"""Recognising an allocation that failed while running a compiled function.

XLA reports it as a ``JaxRuntimeError`` whose message starts with ``RESOURCE_EXHAUSTED``;
copying a result to the host can raise NumPy's ``MemoryError``. The steps that call compiled
functions turn either into an `itergraph.ExecutionError` naming what they were computing.
"""

from __future__ import annotations


def is_out_of_memory(e: BaseException) -> bool:
    """Is `e` a failed allocation (XLA's ``RESOURCE_EXHAUSTED`` or a ``MemoryError``)?"""
    if isinstance(e, MemoryError):
        return True
    return type(e).__name__ in ("JaxRuntimeError", "XlaRuntimeError") and (
        "RESOURCE_EXHAUSTED" in str(e))
