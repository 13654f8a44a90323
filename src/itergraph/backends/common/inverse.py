"""OpenVINO ``Inverse`` (domain ``org.openvinotoolkit``): the inverse of each square matrix in
the last two axes of `x`; with ``adjoint`` its transpose (the inverse of the transpose).
A singular matrix gives what the linear-algebra library gives (an error in NumPy)."""

from __future__ import annotations

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def inverse(xp, x, adjoint: bool):
    """`x` [..., N, N] -> its inverses, computed in at least float32 (half types have no LU
    routine), returned in `x`'s type."""
    wide = x.astype(xp.float32) if x.dtype.itemsize < 4 else x
    y = xp.linalg.inv(wide)
    if adjoint:
        y = xp.swapaxes(y, -1, -2)
    return y.astype(x.dtype)
