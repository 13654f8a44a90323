"""Recurrent cells' attributes as ONNX Runtime reads them, for the backends and the writers."""

from __future__ import annotations


def clip_threshold(op: str, clip) -> float | None:
    """The bound `clip` (the attribute of an `op` cell, None when absent) puts on activation
    inputs, None for no clipping, as ONNX Runtime 1.32 reads it: an ``RNN`` takes a negative
    (or NaN) clip as no clipping and 0 (or -0.0) as clipping to 0; an ``LSTM`` or
    ``GRU`` refuses a clip that is not above 0 when the session is made (the ONNX reader
    refuses the file so, `frontends.onnx.schema_check`)."""
    if clip is None:
        return None
    c = float(clip)
    return None if op == "RNN" and not c >= 0 else c
