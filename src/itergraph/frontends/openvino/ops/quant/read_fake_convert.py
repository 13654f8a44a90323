"""Translator of OpenVINO's ``FakeConvert-13`` into ONNX ops.

``FakeConvert(x, scale, shift)`` emulates a round trip through an 8-bit float type
(``destination_type`` ``f8e4m3``, the finite-only E4M3FN, or ``f8e5m2``):
``y = (convert(x * scale - shift) + shift) / scale``, where ``convert`` goes to float16
first, saturates to the largest finite value of the 8-bit type (infinities too), rounds to
nearest even and returns to the input's type. ``shift`` defaults to zero; scale and shift
broadcast NumPy-style.

As ONNX: ``Mul``, ``Sub``, ``Cast`` to float16, ``Clip`` to the finite range, ``Cast`` to
the 8-bit float and back, ``Add``, ``Div`` -- exact, since a float16 value within the range
converts to the 8-bit type with one rounding.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .....errors import ModelError
from .....ir.types import DataType
from ...builder import Builder, dtype_of
from ...import_table import importer
from ...netparse import Layer

F16 = DataType.FLOAT16
_DEST = {"f8e4m3": (DataType.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
         "f8e5m2": (DataType.FLOAT8E5M2, ml_dtypes.float8_e5m2)}


@importer("FakeConvert", since=13)
def _fake_convert(b: Builder, layer: Layer, x):
    if len(x) not in (2, 3):
        raise ModelError(f"{layer.where()}: FakeConvert takes 2 or 3 inputs, got {len(x)}")
    dest = (layer.attr("destination_type", "f8e4m3") or "").strip().lower()
    if dest not in _DEST:
        raise ModelError(f"{layer.where()}: destination_type '{dest}' is not one of "
                         f"{sorted(_DEST)}")
    f8, np_f8 = _DEST[dest]
    dt = dtype_of(x[0])
    if dt is None or not dt.is_floating:
        raise ModelError(f"{layer.where()}: FakeConvert takes floating-point data, got {dt}")
    scale = b.cast(x[1], dt)
    shift = b.cast(x[2], dt) if len(x) == 3 and x[2] is not None else None
    y = b.op("Mul", [x[0], scale], dtype=dt)
    if shift is not None:
        y = b.op("Sub", [y, shift], dtype=dt)
    y = b.cast(y, F16)
    top = float(ml_dtypes.finfo(np_f8).max)
    y = b.op("Clip", [y, b.const(np.float16(-top)), b.const(np.float16(top))], dtype=F16)
    y = b.op("Cast", [y], {"to": f8.onnx, "saturate": 1}, dtype=f8)
    y = b.cast(b.op("Cast", [y], {"to": F16.onnx}, dtype=F16), dt)
    if shift is not None:
        y = b.op("Add", [y, shift], dtype=dt)
    return b.op("Div", [y, scale], dtype=dt)
