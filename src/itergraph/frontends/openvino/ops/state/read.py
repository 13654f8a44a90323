"""``ReadValue-3/6`` and ``Assign-3/6`` -> the ``org.openvinotoolkit`` state nodes of
`ir.state` (semantics there).

The variable's type: ReadValue-6's ``variable_type``/``variable_shape`` (``dynamic`` and
``...`` leave the element type and rank to the init value or the output port); ReadValue-3
declares none, so its init value's type (the output port's) is the variable's. A state layer
inside a loop body or If branch is refused (`UnsupportedError`): OpenVINO keeps state only
between inference calls of a whole model.
"""

from __future__ import annotations

from .....errors import ModelError, UnsupportedError
from .....ir.state import ASSIGN, READ
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import TensorType
from ...builder import Builder, dtype_of, shape_of
from ...elements import element_type_name, from_element_type
from ...import_table import importer
from ...netparse import Layer, parse_shape_attr


def _variable_id(b: Builder, layer: Layer) -> str:
    if getattr(b.reader, "depth", 0) > 0:
        raise UnsupportedError(f"{layer.where()}: a {layer.type} inside a loop body or If "
                               "branch (OpenVINO keeps state only between inference calls "
                               "of the whole model)")
    vid = layer.attr("variable_id", required=True)
    if not vid:
        raise ModelError(f"{layer.where()}: empty variable_id")
    return vid


def _variable_type(layer: Layer, ins) -> TensorType:
    port = layer.outputs[0] if layer.outputs else None
    init = ins[0] if ins else None
    dt = None
    et = layer.attr("variable_type")
    if et is not None and element_type_name(et) not in ("dynamic", "undefined"):
        dt = from_element_type(element_type_name(et), layer.where())
    dt = dt or (port.dtype if port else None) or dtype_of(init)
    shape_text = layer.attr("variable_shape")
    if shape_text is not None:
        shape = parse_shape_attr(shape_text, layer.where())
    elif port is not None and port.shape is not None:
        shape = port.shape
    else:
        shape = shape_of(init)
    if dt is None:
        raise ModelError(f"{layer.where()}: the variable's element type is not known (no "
                         "variable_type, port precision or init value)")
    return TensorType(dt, tuple(shape) if shape is not None else None)


@importer("ReadValue", since=3)
def _read_value(b: Builder, layer: Layer, ins):
    vid = _variable_id(b, layer)
    if layer.opset is not None and layer.opset < 6 and len(ins) != 1:
        raise ModelError(f"{layer.where()}: ReadValue-3 takes one input (the init value), "
                         f"got {len(ins)}")
    if len(ins) > 1:
        raise ModelError(f"{layer.where()}: ReadValue takes at most one input, got {len(ins)}")
    t = _variable_type(layer, ins)
    out = b.op(READ, ins, {"variable_id": vid, "variable_type": t}, dtype=t.dtype,
               domain=DOMAIN, name=layer.name)
    out.type = t
    return out


@importer("Assign", since=3)
def _assign(b: Builder, layer: Layer, ins):
    vid = _variable_id(b, layer)
    if len(ins) != 1:
        raise ModelError(f"{layer.where()}: Assign takes one input, got {len(ins)}")
    out = b.op(ASSIGN, ins, {"variable_id": vid}, dtype=dtype_of(ins[0]), domain=DOMAIN,
               name=layer.name)
    out.type = ins[0].type
    return out
