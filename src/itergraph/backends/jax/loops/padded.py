"""A carried value that grows every iteration, held as a fixed-capacity buffer: what a loop
body sees of it (`Padded`), how it grows (`Grow`), and the signal that the rewrite does not
apply (`Refused`). The reads are made exact by `padded_reads`.

**Rows reordered lazily** (beam search): a cache whose rows the body reorders every
iteration by a Gather (``past = Gather(cache, beam_index)``, then the new keys appended) would
be copied whole each iteration, and XLA copies it once more into the loop's state (the
gather cannot write in place). Where `Grow.rows` names that axis, the buffer is carried
unpermuted with an ancestry table `src` ``[rows, capacity]`` (int32): position `t` of row
`r` is held in row ``src[r, t]`` of the buffer. A Gather of rows gathers the table only; an
append writes the new positions in place, their table entries the row itself; any other read
gathers the buffer once (`Padded.materialized`), where XLA fuses the gather into the read.
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
    rows: int | None = None  # the axis of rows reordered lazily (see above), or None


class Padded:
    """What a body sees of a grown value: `buf` holds it in its first `length` positions on
    `axis`; `key` = (l0, d, extra): length = l0 + d*k + extra (the same key, the same
    length). With `src` (rows reordered lazily, see above): position `t` of row `r` on axis
    `rows` is ``buf[.., src[r, t], .., t, ..]``."""

    __slots__ = ("buf", "axis", "key", "length", "src", "rows")

    def __init__(self, buf, axis: int, key: tuple, length, src=None, rows: int | None = None):
        self.buf, self.axis, self.key, self.length = buf, axis, key, length
        self.src, self.rows = src, rows

    def materialized(self) -> Padded:
        """This value with its rows in place (the buffer gathered by `src`); itself when no
        row is reordered lazily."""
        if self.src is None:
            return self
        return Padded(gather_rows(self.buf, self.src, self.rows, self.axis), self.axis,
                      self.key, self.length)

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


def gather_rows(buf, src, rows: int, axis: int):
    """`buf` with position `t` of row `r` (axes `rows`, `axis`) taken from row ``src[r, t]``."""
    import jax.numpy as jnp

    idx = src if rows < axis else src.T
    shape = [1] * buf.ndim
    shape[rows], shape[axis] = buf.shape[rows], buf.shape[axis]
    return jnp.take_along_axis(buf, idx.reshape(shape), axis=rows, mode="clip")


def identity_rows(n_rows: int, capacity: int):
    """The ancestry table of rows in place: ``src[r, t] = r``."""
    import jax.numpy as jnp

    return jnp.broadcast_to(jnp.arange(n_rows, dtype=np.int32)[:, None], (n_rows, capacity))


def appended_rows(src, length, s: int):
    """`src` with the `s` positions from `length` on read from each row itself (a select, not
    an update in place: XLA fuses it with the gather of the table that precedes it)."""
    import jax.numpy as jnp

    n, c = src.shape
    cols = jnp.arange(c, dtype=np.int64)[None, :]
    new = (cols >= length) & (cols < length + s)
    return jnp.where(new, jnp.arange(n, dtype=np.int32)[:, None], src)
