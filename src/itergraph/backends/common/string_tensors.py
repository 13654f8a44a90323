"""OpenVINO ``StringTensorUnpack-15`` and ``StringTensorPack-15`` (domain
``org.openvinotoolkit``): a string tensor <-> its decomposition into ``begins`` and ``ends``
(int, the string tensor's shape) and ``symbols`` (uint8, 1-D): element ``i`` is the bytes
``symbols[begins[i]:ends[i]]``. Unpack lays the elements' bytes out back to back in row-major
order. Pack takes, as OpenVINO checks them, begins and ends each in ascending (row-major)
order, no index below 0 or above the number of symbols, and no element ending before it
begins; spans may overlap or leave gaps. Elements are ``str`` (bytes as `ir.strings` maps
them)."""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError
from ...ir.strings import from_bytes, to_bytes
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the ops' domain)


def unpack(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`strings` (any shape) -> (begins int32, ends int32, symbols uint8)."""
    items = [to_bytes(s) for s in np.asarray(strings, dtype=object).reshape(-1)]
    ends = np.cumsum([len(b) for b in items], dtype=np.int64)
    if len(ends) and ends[-1] >= 2**31:
        raise ExecutionError("StringTensorUnpack: 2 GiB of symbols or more do not fit int32")
    begins = ends - np.asarray([len(b) for b in items], np.int64)
    shape = np.shape(strings)
    symbols = np.frombuffer(b"".join(items), np.uint8).copy()
    return begins.astype(np.int32).reshape(shape), ends.astype(np.int32).reshape(shape), symbols


def pack(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray) -> np.ndarray:
    """(begins, ends, symbols) -> an ``object`` array of ``str`` of begins' shape."""
    begins, ends = np.asarray(begins), np.asarray(ends)
    if begins.shape != ends.shape:
        raise ExecutionError(f"StringTensorPack: begins {list(begins.shape)} and ends "
                             f"{list(ends.shape)} differ in shape")
    symbols = np.asarray(symbols).reshape(-1)
    b, e = begins.reshape(-1).astype(np.int64), ends.reshape(-1).astype(np.int64)
    bad = (b < 0) | (e < b) | (e > symbols.size)
    if bad.any():
        i = int(np.argmax(bad))
        raise ExecutionError(f"StringTensorPack: element {i} spans [{b[i]}, {e[i]}), outside "
                             f"the {symbols.size} symbols or reversed")
    for name, idx in (("begins", b), ("ends", e)):
        down = np.diff(idx) < 0
        if down.any():
            i = int(np.argmax(down)) + 1
            raise ExecutionError(f"StringTensorPack: {name} must be ascending, element {i} is "
                                 f"{idx[i]} after {idx[i - 1]}")
    raw = symbols.astype(np.uint8).tobytes()
    out = np.empty(b.size, dtype=object)
    for i in range(b.size):
        out[i] = from_bytes(raw[b[i]:e[i]])
    return out.reshape(begins.shape)
