"""OpenVINO string constants in the ``.bin``: an int32 element count ``N``, then ``N + 1``
int32 offsets (the first 0, each next one the end of an element), then the elements' bytes
back to back (all little-endian). Elements are ``str`` (bytes as `ir.strings` maps them)."""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ...ir.strings import from_bytes, to_bytes


def decode_strings(buf: bytes, shape: tuple[int, ...], where: str) -> np.ndarray:
    """A string constant's ``.bin`` bytes -> an ``object`` array of `shape`."""
    count = int(np.prod(shape, dtype=np.int64))
    head = 4 * (count + 2)
    if len(buf) < head:
        raise ModelError(f"{where}: {len(buf)} bytes cannot hold {count} strings")
    n = int(np.frombuffer(buf, "<i4", 1)[0])
    if n != count:
        raise ModelError(f"{where}: the .bin holds {n} strings, the shape {list(shape)} "
                         f"{count}")
    offsets = np.frombuffer(buf, "<i4", count + 1, 4).astype(np.int64)
    body = buf[head:]
    if offsets[0] != 0 or (np.diff(offsets) < 0).any() or offsets[-1] != len(body):
        raise ModelError(f"{where}: string offsets do not describe the "
                         f"{len(body)} bytes that follow them")
    out = np.empty(count, dtype=object)
    for i in range(count):
        out[i] = from_bytes(body[offsets[i]:offsets[i + 1]])
    return out.reshape(shape)


def encode_strings(arr) -> bytes:
    """An array of strings -> the ``.bin`` bytes of a string constant."""
    items = [to_bytes(s) for s in np.asarray(arr, dtype=object).reshape(-1)]
    ends = np.cumsum([0] + [len(b) for b in items], dtype=np.int64)
    if ends[-1] >= 2**31:
        raise ModelError("a string constant of 2 GiB or more cannot be written")
    return (np.asarray([len(items)], "<i4").tobytes() + ends.astype("<i4").tobytes()
            + b"".join(items))
