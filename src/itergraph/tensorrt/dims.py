"""TensorRT's ``Dims`` family, ``Permutation`` and ``volume``.

``Dims`` is what ``ITensor.shape`` returns: a sequence of integers, ``-1`` for a dimension known
only at run time, that compares equal to tuples and lists of the same values and prints like a
tuple. Here it is an immutable tuple subclass, so every tuple operation works on it (TensorRT's
``Dims`` is also writable item by item; a returned shape is a copy there, so code that edits
one builds a new value: ``list(t.shape)``). ``Dims2``/``Dims3``/``Dims4``/``DimsHW`` check their
length; ``Permutation`` is the order of a shuffle's transposes.
"""

from __future__ import annotations

import operator

MAX_DIMS = 8


class Dims(tuple):
    """``Dims()``, ``Dims([2, 3])`` or ``Dims((2, 3))``: a shape (see the module docstring)."""

    MAX_DIMS = MAX_DIMS
    _length: int | None = None

    def __new__(cls, *args):
        if len(args) == 1 and not isinstance(args[0], int):
            values = args[0]
        else:
            values = args
        try:
            out = tuple(operator.index(v) for v in values)
        except TypeError:
            raise TypeError(f"{cls.__name__}: dimensions must be integers, got {values!r}") \
                from None
        if len(out) > MAX_DIMS:
            raise ValueError(f"Input length {len(out)}. Max expected length is {MAX_DIMS}")
        if cls._length is not None and out and len(out) != cls._length:
            raise ValueError(f"Input length {len(out)} not equal to expected {cls.__name__} "
                             f"length, which is {cls._length}")
        return super().__new__(cls, out)

    def __eq__(self, other) -> bool:
        if isinstance(other, list):
            other = tuple(other)
        return isinstance(other, tuple) and tuple(self) == tuple(other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return repr(tuple(self))

    __str__ = __repr__


class Dims2(Dims):
    _length = 2


class Dims3(Dims):
    _length = 3


class Dims4(Dims):
    _length = 4


class DimsHW(Dims2):
    @property
    def h(self) -> int:
        return self[0]

    @property
    def w(self) -> int:
        return self[1]


class Permutation(Dims):
    """The axis order of an ``IShuffleLayer`` transpose (``Permutation([1, 0])``)."""


def volume(iterable) -> int:
    """The product of the entries of `iterable` (1 for an empty one), as ``trt.volume``."""
    vol = 1
    for x in iterable:
        vol *= x
    return vol


__all__ = ["Dims", "Dims2", "Dims3", "Dims4", "DimsHW", "Permutation", "volume"]
