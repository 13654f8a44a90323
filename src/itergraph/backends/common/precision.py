"""The precision kernels compute in: narrow floating types (float16, bfloat16, the float8
types) are widened to float32 for the arithmetic and the result is cast back, as ONNX Runtime
does for them; every other type is computed in itself."""

from __future__ import annotations

import numpy as np

_F32 = np.dtype(np.float32)


def work_dtype(dtype) -> np.dtype:
    """float32 for a floating type narrower than 32 bits (also the ``ml_dtypes`` ones,
    bfloat16 and the float8 types, whose NumPy kind is ``V``), else `dtype` itself."""
    dtype = np.dtype(dtype)
    narrow = dtype.itemsize < 4 and (
        dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name))
    return _F32 if narrow else dtype
