"""Helpers shared by the NumPy kernel modules: result wrapping (attribute readers live in
`backends.common.attributes`, shared with the JAX backend)."""

from __future__ import annotations

from typing import Any

import numpy as np

ndarray = np.ndarray
asarray = np.asarray


def wrap(x: Any) -> np.ndarray:
    """`x` as an ndarray (NumPy ufuncs return NumPy scalars for 0-d operands)."""
    return x if x.__class__ is ndarray else asarray(x)
