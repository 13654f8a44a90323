"""IR `DataType` <-> NumPy dtype (``ml_dtypes`` supplies bfloat16, float8, int4 and friends)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ...ir.types import DataType

_EXOTIC = {
    DataType.BFLOAT16: ml_dtypes.bfloat16,
    DataType.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    DataType.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    DataType.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    DataType.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    DataType.INT4: ml_dtypes.int4,
    DataType.UINT4: ml_dtypes.uint4,
    DataType.INT2: ml_dtypes.int2,
    DataType.UINT2: ml_dtypes.uint2,
    DataType.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
    DataType.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
}
_TO_NP = {
    dt: np.dtype(_EXOTIC.get(dt, dt.value if dt != DataType.STRING else object)) for dt in DataType
}
_FROM_NP = {v: k for k, v in _TO_NP.items()}
_FROM_NP[np.dtype(object)] = DataType.STRING


def to_numpy(dt: DataType | str) -> np.dtype:
    return _TO_NP[DataType(dt)]


def from_numpy(dtype) -> DataType:
    dtype = np.dtype(dtype)
    if dtype.kind in "US":
        return DataType.STRING
    try:
        return _FROM_NP[dtype]
    except KeyError:
        raise KeyError(f"no IR element type for NumPy dtype {dtype}") from None
