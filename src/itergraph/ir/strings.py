"""String elements and their bytes: a string tensor is a NumPy ``object`` array of ``str``;
its bytes are UTF-8, and bytes that are not UTF-8 map to lone surrogates
(``surrogateescape``), so any byte string survives a trip to ``str`` and back."""

from __future__ import annotations

import numpy as np

ENCODING = "utf-8"
ERRORS = "surrogateescape"


def to_bytes(s) -> bytes:
    """The bytes of one string element (``str``, ``bytes`` or a NumPy string scalar)."""
    if isinstance(s, bytes | np.bytes_):
        return bytes(s)
    return str(s).encode(ENCODING, ERRORS)


def from_bytes(b) -> str:
    """The string element of `b` (``bytes``, ``bytearray``, ``memoryview`` or uint8 array)."""
    return bytes(b).decode(ENCODING, ERRORS)
