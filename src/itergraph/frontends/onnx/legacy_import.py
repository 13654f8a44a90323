"""Ops of early ONNX releases that exporters still write and later releases removed.

``ConstantFill`` (experimental, ONNX 1.2-1.3; torch.onnx writes it at opset 7 and 8 to make
a loop's zero-filled initial values): a tensor of `dtype` filled with `value`, shaped by its
input's *values* when ``input_as_shape=1``, or by the ``shape`` attribute when it has no
input. It becomes the standard node with that meaning (``ConstantOfShape``, opset 9, or a
``Constant``), so every backend and writer handles it; OpenVINO's ONNX frontend reads it too.
ONNX Runtime no longer does. The node's ``meta["read_as"]`` keeps the op the file wrote (the
portability check reports it).
"""

from __future__ import annotations

import numpy as np
import onnx

from ...errors import ModelError, UnsupportedError
from ...ir.graph import Node, Value
from ...ir.types import DataType
from .node_import import where
from .scope import Scope

A = onnx.AttributeProto
#: ConstantFill's attributes and the kinds they may have (it has no schema in onnx.defs;
#: ``value`` is checked as a number below)
_KINDS = {"dtype": (A.INT,), "shape": (A.INTS,), "extra_shape": (A.INTS,),
          "input_as_shape": (A.INT,)}


def _check_kinds(p: onnx.NodeProto, kinds: dict[str, int]) -> None:
    for name, kind in kinds.items():
        allowed = _KINDS.get(name)
        if allowed is not None and kind not in allowed:
            want = " or ".join(A.AttributeType.Name(k) for k in allowed)
            raise ModelError(f"{where(p)}: attribute '{name}' is {A.AttributeType.Name(kind)}, "
                             f"where ConstantFill's is {want}")


def import_constant_fill(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                         outputs: list[Value], version: int) -> Node:
    attrs, kinds = r.attrs(p, scope)
    _check_kinds(p, kinds)
    try:
        element = DataType.from_onnx(int(attrs.get("dtype", onnx.TensorProto.FLOAT)))
        if element is None:  # 0: UNDEFINED
            raise ValueError
        dtype = element.numpy
    except (KeyError, ValueError):
        raise ModelError(f"{where(p)}: dtype {attrs.get('dtype')} is not an element type") \
            from None
    value = attrs.get("value", 0.0)
    if not isinstance(value, (int, float)):
        raise ModelError(f"{where(p)}: value {value!r} is not a number (ConstantFill's value "
                         "is a float attribute)")
    fill = np.array([value]).astype(dtype)
    extra = list(attrs.get("extra_shape", []))
    source = inputs[0] if inputs else None
    if source is None:
        shape = [*attrs.get("shape", []), *extra]
        if any(d < 0 for d in shape):
            raise ModelError(f"{where(p)}: shape {shape} has a negative dimension")
        node = Node("Constant", [], outputs, {"value": np.full(shape, fill[0], dtype)},
                    version=1, name=p.name)
        node.meta["read_as"] = "ConstantFill"
        return node
    if int(attrs.get("input_as_shape", 0)) != 1 or extra:
        raise UnsupportedError(f"{where(p)}: only input_as_shape=1 without extra_shape is "
                               "supported (a fill shaped like its input tensor is not)")
    node = Node("ConstantOfShape", [source], outputs, {"value": fill}, version=9, name=p.name)
    node.meta["read_as"] = "ConstantFill"
    return node
