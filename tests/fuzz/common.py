"""What the mutation operators share: `NotApplicable`, the interesting values they pick from,
and the `Registry` of operators by name."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class NotApplicable(Exception):
    """The operator finds nothing to mutate in this seed (no Loop, no attribute of a kind)."""


# integers that break arithmetic, bounds and allocations
INTS = (-(2**63), -(2**31), -2, -1, 0, 1, 2, 3, 7, 64, 2**31 - 1, 2**31, 2**40, 2**62,
        2**63 - 1)
DIMS = (-7, -1, 0, 1, 2, 3, 1000, 2**31, 2**40, 2**62)
# what a name operator appends to a name: control characters, NUL, and markers that the
# file's writer turns into bytes no tool would set (`NOT_UTF8`: a byte that is not UTF-8;
# `CONTROL_REF`: an XML reference to a control character, as OpenVINO writes them)
NOT_UTF8, NOT_UTF8_BYTES = "_fuzz_not_utf8_", b"_fuzz_not_utf8\xff"
CONTROL_REF, CONTROL_REF_BYTES = "_fuzz_ref_27_", b"_fuzz&#27;ref_"
NAME_TAILS = ("\x00", "\x1b", "\x01\n", "\t", "\x7f", NOT_UTF8,
              # XML's specials, a CDATA end, bidirectional and combining marks, an astral letter
              "<a&b>\"'", "]]>", "\u202e\ufeff", "e\u0301\U0001d4c1")


def pick(rng: np.random.Generator, seq):
    """One element of a non-empty sequence (`NotApplicable` when it is empty)."""
    seq = list(seq)
    if not seq:
        raise NotApplicable("nothing to pick from")
    return seq[int(rng.integers(len(seq)))]


class Registry(dict):
    """Operators by name: ``fn(target, rng) -> description``; `register` is the decorator."""

    def register(self, name: str) -> Callable:
        def deco(fn):
            if name in self:
                raise ValueError(f"operator {name} is registered twice")
            self[name] = fn
            return fn
        return deco
