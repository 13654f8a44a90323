"""Names of the element a generated plan or driver runs, as the file name given to Python's
`compile` holds them: that file name shows in tracebacks, and `compile` refuses a NUL in it
(an ONNX name may hold one)."""

from __future__ import annotations


def source_label(name: str) -> str:
    """`name` with each NUL written ``\\x00``."""
    return name.replace("\0", "\\x00")
