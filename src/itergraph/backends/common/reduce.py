"""Reduction facts shared by both backends."""

from __future__ import annotations

import numpy as np


def extreme_identity(dtype, low: bool):
    """What ReduceMax (`low`) / ReduceMin of an empty set gives: the dtype's lowest/highest."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if low else info.max
    if dtype.kind == "b":
        return not low
    return 0
