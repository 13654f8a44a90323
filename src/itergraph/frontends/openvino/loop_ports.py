"""Static checks of a ``TensorIterator``/``Loop`` layer that OpenVINO makes when it reads a
model, run before the layer is translated:

- a ``Loop`` has an output port-map entry with ``purpose="execution_condition"`` (Loop-5
  requires the body to say whether to go on), its trip count input (port 0) has an integer
  element type and its execution condition input (port 1) is boolean;
- a sliced input (a port-map input with ``axis``) names an axis within its input's rank, and
  when the axis length is known its ``start`` and ``end`` lie on the axis and in the
  stride's direction (``start`` before ``end`` for a positive stride, after it for a
  negative one), as OpenVINO requires: otherwise the loop would silently run no iteration,
  or walk a range OpenVINO refuses.
"""

from __future__ import annotations

from ...errors import ModelError
from ...ir.graph import Value
from ...ir.types import DataType, TensorType
from .netparse import Layer

_INTEGER = (DataType.INT32, DataType.INT64)


def _int(layer: Layer, d: dict, key: str, default: int | None = None) -> int | None:
    if key not in d:
        return default
    try:
        return int(d[key])
    except ValueError:
        raise ModelError(f"{layer.where()}: port_map {key}='{d[key]}' is not an integer") \
            from None


def check_loop_layer(layer: Layer, ins: list[Value]) -> None:
    pm = layer.elem.find("port_map")
    if pm is None:
        return  # the importer reports it
    if layer.type == "Loop":
        _check_loop(layer, pm, ins)
    for d in (dict(e.attrib) for e in pm.findall("input")):
        if "axis" in d:
            _check_slice(layer, d, ins)


def _check_loop(layer: Layer, pm, ins: list[Value]) -> None:
    purposes = [e.get("purpose") for e in pm.findall("output")]
    if "execution_condition" not in purposes:
        raise ModelError(f"{layer.where()}: the port_map has no output with "
                         "purpose=\"execution_condition\"; a Loop's body must give the "
                         "condition to go on (a Result of a boolean, true to continue)")
    for i, (what, ok, want) in enumerate((("trip count", _INTEGER, "i32 or i64"),
                                           ("execution condition", (DataType.BOOL,),
                                            "boolean"))):
        if i >= len(ins):
            break
        t = ins[i].type
        dt = t.dtype if isinstance(t, TensorType) else None
        if i < len(layer.inputs) and layer.inputs[i].dtype is not None:
            dt = layer.inputs[i].dtype
        if dt is not None and dt not in ok:
            raise ModelError(f"{layer.where()}: input port {layer.inputs[i].id} (the {what}) "
                             f"is {dt}; it must be {want}")


def _check_slice(layer: Layer, d: dict, ins: list[Value]) -> None:
    ext = _int(layer, d, "external_port_id")
    index = next((i for i, p in enumerate(layer.inputs) if p.id == ext), None)
    if index is None or index >= len(ins):
        return  # the importer reports a port map naming no input
    t = ins[index].type
    shape = t.shape if isinstance(t, TensorType) else None
    if shape is None and layer.inputs[index].shape:
        shape = layer.inputs[index].shape
    if not shape:
        return
    axis = _int(layer, d, "axis")
    rank = len(shape)
    if not -rank <= axis < rank:
        raise ModelError(f"{layer.where()}: port_map input for port {ext}: axis {axis} is out "
                         f"of range for rank {rank}")
    dim = shape[axis]
    if not isinstance(dim, int):
        return
    posts = {}
    for key, default in (("start", 0), ("end", -1)):
        post = _int(layer, d, key, default)
        if not -(dim + 1) <= post <= dim:
            raise ModelError(f"{layer.where()}: port_map input for port {ext}: {key}={post} "
                             f"lies beyond axis {axis}, of length {dim} (expected "
                             f"{-(dim + 1)} <= {key} <= {dim})")
        posts[key] = post if post >= 0 else dim + 1 + post
    stride = _int(layer, d, "stride", 1)
    s, e = posts["start"], posts["end"]
    if (stride > 0 and not s < e) or (stride < 0 and not s > e):
        raise ModelError(f"{layer.where()}: port_map input for port {ext}: start={d.get('start')}"
                         f" and end={d.get('end')} (positions {s} and {e} on axis {axis}, of "
                         f"length {dim}) leave nothing to walk with stride {stride}; OpenVINO "
                         "walks from start to end: start before end for a positive stride, "
                         "after it for a negative one")
