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


#: the ONNX op of each activation a cell may name in lower case (OpenVINO's cells, ONNX
#: Runtime's ``DynamicQuantizeLSTM`` and the ONNX cells' own expansion)
ACTIVATION_OPS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}

#: each direction's activations by default, in the order of the ``activations`` attribute
DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"),
                       "RNN": ("Tanh",)}


def activation_names(given, op: str, dirs: int) -> list[str]:
    """The activations of an `op` cell of `dirs` directions, in lower case (ONNX Runtime
    matches them without regard to case), each direction's in turn: `given` (the
    ``activations`` attribute), else the defaults; one direction's list serves both."""
    default = [a.lower() for a in DEFAULT_ACTIVATIONS[op]]
    names = [(a.decode() if isinstance(a, bytes) else str(a)).lower()
             for a in given or []] or default * dirs
    return names * 2 if len(names) == len(default) and dirs == 2 else names


def activation_count_error(op: str, directions: int, count: int) -> str | None:
    """Why `count` activations do not suit an `op` cell of `directions` directions (each
    direction's list, or one list that a bidirectional cell uses for both), else None. ONNX
    Runtime refuses such a cell when the session is made, in a loop body that never runs too."""
    per_dir = len(DEFAULT_ACTIVATIONS[op])
    if count in (0, per_dir * directions) or (directions == 2 and count == per_dir):
        return None
    return f"expected {per_dir * directions} activations, got {count}"
