"""A carried value that grows every iteration, held as a fixed-capacity buffer: what a loop
body sees of it (`Padded`), how it grows (`Grow`), and the signal that the rewrite does not
apply (`Refused`). The reads are made exact by `padded_reads`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Refused(Exception):  # noqa: N818 - a signal: the rewrite does not apply
    """The growing-buffer rewrite does not apply to this loop (`reason` says why)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Grow:
    """Carried value `index` grows by `d` per iteration on `axis`, from `l0`."""

    index: int
    axis: int
    l0: int
    d: int


class Padded:
    """What a body sees of a grown value: `buf` holds it in its first `length` positions on
    `axis`; `key` = (l0, d, extra): length = l0 + d*k + extra (the same key, the same
    length)."""

    __slots__ = ("buf", "axis", "key", "length")

    def __init__(self, buf, axis: int, key: tuple, length):
        self.buf, self.axis, self.key, self.length = buf, axis, key, length

    @property
    def ndim(self) -> int:
        return self.buf.ndim

    def mask(self, rank: int | None = None, axis: int | None = None):
        """Bool array, True at valid positions, shaped to broadcast along `axis` of a
        `rank`-d array (default: this one's)."""
        import jax.numpy as jnp

        rank = self.buf.ndim if rank is None else rank
        axis = self.axis if axis is None else axis
        c = self.buf.shape[self.axis]
        shape = [1] * rank
        shape[axis] = c
        return (jnp.arange(c, dtype=np.int64) < self.length).reshape(shape)

    def like(self, buf, axis: int | None = None) -> Padded:
        return Padded(buf, self.axis if axis is None else axis, self.key, self.length)
