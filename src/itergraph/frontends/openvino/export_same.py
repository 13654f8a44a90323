"""Translators of ONNX ops that are one OpenVINO op with their attributes moved: IsInf, Selu,
BitShift, ScatterElements, OneHot.

ONNX semantics kept where OpenVINO's op differs:
- ``Selu``'s ``alpha``/``gamma`` attributes become OpenVINO's ``alpha``/``lambda`` inputs;
- ``BitShift`` is ``BitwiseLeftShift``/``BitwiseRightShift-15``;
- ``ScatterElements`` with a reduction is ``ScatterElementsUpdate-12`` (``add`` is ``sum``,
  ``mul`` is ``prod``);
- ``OneHot`` counts a negative index from the end (OpenVINO turns it into a row of
  ``off_value``): the index is first moved into range.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, where
from ...ir.graph import Node
from ...ir.types import DataType
from .elements import to_numpy
from .export_table import exporter
from .net_writer import NetWriter

I64, BOOL = DataType.INT64, DataType.BOOL
_NUMPY = {"auto_broadcast": "numpy"}


@exporter("IsInf", since=10)
def _is_inf(w: NetWriter, node: Node, ins):
    data = {"detect_negative": bool(node.attrs.get("detect_negative", 1)),
            "detect_positive": bool(node.attrs.get("detect_positive", 1))}
    return w.one("IsInf", "opset10", ins[:1], data, dtype=BOOL, shape=ins[0].shape)


@exporter("Selu", since=1)
def _selu(w: NetWriter, node: Node, ins):
    npdt = to_numpy(ins[0].dtype) if ins[0].dtype else np.float32
    alpha = w.const(np.array(float(node.attrs.get("alpha", 1.67326319217681884765625)), npdt))
    lam = w.const(np.array(float(node.attrs.get("gamma", 1.05070102214813232421875)), npdt))
    return w.one("Selu", "opset1", [ins[0], alpha, lam], dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("BitShift", since=11)
def _bit_shift(w: NetWriter, node: Node, ins):
    direction = str(node.attrs.get("direction", "")).upper()
    ov = {"LEFT": "BitwiseLeftShift", "RIGHT": "BitwiseRightShift"}.get(direction)
    if ov is None:
        raise UnsupportedError(f"{where(node)}: BitShift direction '{direction}' is not LEFT or "
                               "RIGHT")
    return w.one(ov, "opset15", ins[:2], _NUMPY, dtype=ins[0].dtype)


_REDUCTION = {"none": "none", "add": "sum", "mul": "prod", "min": "min", "max": "max"}


@exporter("ScatterElements", since=11)
def _scatter_elements(w: NetWriter, node: Node, ins):
    red = str(node.attrs.get("reduction", "none"))
    if red not in _REDUCTION:
        raise UnsupportedError(f"{where(node)}: ScatterElements reduction '{red}' is not "
                               "supported")
    data = {"reduction": _REDUCTION[red], "use_init_val": True}
    return w.one("ScatterElementsUpdate", "opset12",
                 [ins[0], ins[1], ins[2], w.i64(int(node.attrs.get("axis", 0)))], data,
                 dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("OneHot", since=9)
def _one_hot(w: NetWriter, node: Node, ins):
    idx = w.one("Convert", "opset1", ins[:1], {"destination_type": "i64"}, dtype=I64,
                shape=ins[0].shape)
    depth = w.one("Convert", "opset1", [ins[1]], {"destination_type": "i64"}, dtype=I64)
    depth = w.one("Reshape", "opset1", [depth, w.i64([])], {"special_zero": False}, dtype=I64,
                  shape=())
    neg = w.one("Less", "opset1", [idx, w.i64(0)], _NUMPY, dtype=BOOL)
    moved = w.one("Add", "opset1", [idx, depth], _NUMPY, dtype=I64)
    idx = w.one("Select", "opset1", [neg, moved, idx], _NUMPY, dtype=I64)
    dt = ins[2].dtype
    off = w.one("Gather", "opset8", [ins[2], w.i64(0), w.i64(0)], {"batch_dims": 0}, dtype=dt,
                shape=())
    on = w.one("Gather", "opset8", [ins[2], w.i64(1), w.i64(0)], {"batch_dims": 0}, dtype=dt,
               shape=())
    return w.one("OneHot", "opset1", [idx, depth, on, off], {"axis": int(node.attrs.get("axis",
                                                                                    -1))},
                 dtype=dt)
