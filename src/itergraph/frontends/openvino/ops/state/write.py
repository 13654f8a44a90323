"""The ``org.openvinotoolkit`` state nodes (`ir.state`) -> ``ReadValue-6`` (with its
``variable_type`` and ``variable_shape``, and the init value when it has one) and
``Assign-6``. OpenVINO's IR reader declares a variable from each ReadValue-6 and makes every
Assign layer a sink of the model, so no Result is written for it."""

from __future__ import annotations

from .....errors import ModelError, where
from .....ir.graph import Node
from .....ir.traits import OPENVINO_DOMAIN
from .....ir.types import TensorType
from ...elements import to_element_type
from ...export_table import exporter
from ...net_writer import NetWriter, dims_attr, value_dtype, value_shape

V6 = "opset6"


@exporter("ReadValue", since=1, domain=OPENVINO_DOMAIN)
def _read_value(w: NetWriter, node: Node, ins):
    t = node.attrs.get("variable_type")
    vid = node.attrs.get("variable_id")
    if not isinstance(t, TensorType) or not vid:
        raise ModelError(f"{where(node)}: a ReadValue needs variable_id and variable_type")
    data = {"variable_id": vid,
            "variable_type": to_element_type(t.dtype, f"variable '{vid}'"),
            "variable_shape": dims_attr(t.shape)}
    shape = None if t.shape is None else tuple(d if isinstance(d, int) else None
                                               for d in t.shape)
    return w.one("ReadValue", V6, ins[:1], data, dtype=t.dtype, shape=shape,
                 name=node.name)


@exporter("Assign", since=1, domain=OPENVINO_DOMAIN)
def _assign(w: NetWriter, node: Node, ins):
    v = node.inputs[0]
    return w.one("Assign", V6, ins[:1], {"variable_id": node.attrs["variable_id"]},
                 dtype=value_dtype(v), shape=value_shape(v), name=node.name)
