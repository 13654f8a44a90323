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

And, once the body is converted, `check_bound_parameter` and `check_current_iteration`:

- a body Parameter that a port-map input feeds declares that input's element type, and a
  shape compatible with it (for a sliced input, the input's shape with ``part_size`` on the
  axis): OpenVINO gives the Parameter its input's type and validates the body with both, so
  a body written for another type is refused there (and here it would run with values of a
  type its body does not expect);
- a Loop's ``current_iteration`` Parameter is an ``i32`` or ``i64`` scalar or ``[1]``, the
  only forms OpenVINO runs.
"""

from __future__ import annotations

from .....errors import ModelError, UnsupportedError
from .....ir.graph import Value
from .....ir.loop import Sliced
from .....ir.types import DataType, Dim, TensorType
from ...elements import to_element_type
from ...netparse import Layer

_INTEGER = (DataType.INT32, DataType.INT64)


def port_int(layer: Layer, d: dict, key: str, default: int | None = None, *,
             required: bool = False) -> int | None:
    """Entry `key` of a port map or back edge `d` as an int; `default` where it is absent (a
    `ModelError` instead where `required` and there is no default)."""
    if key not in d:
        if required and default is None:
            raise ModelError(f"{layer.where()}: port_map entry {d} has no '{key}'")
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
        # the value fed (OpenVINO runs the loop on its type, whatever the port declares)
        # and the port's declared precision must both be of the kind the Loop takes
        t = ins[i].type
        fed = t.dtype if isinstance(t, TensorType) else None
        declared = layer.inputs[i].dtype if i < len(layer.inputs) else None
        port = layer.inputs[i].id if i < len(layer.inputs) else i
        if fed is not None and fed not in ok:
            raise ModelError(f"{layer.where()}: input port {port} (the {what}) is fed "
                             f"'{ins[i].name}', of element type {fed}; it must be {want}")
        if declared is not None and declared not in ok:
            raise ModelError(f"{layer.where()}: input port {port} (the {what}) is {declared}; "
                             f"it must be {want}")


def _check_slice(layer: Layer, d: dict, ins: list[Value]) -> None:
    ext = port_int(layer, d, "external_port_id")
    index = next((i for i, p in enumerate(layer.inputs) if p.id == ext), None)
    if index is None or index >= len(ins):
        return  # the importer reports a port map naming no input
    t = ins[index].type
    shape = t.shape if isinstance(t, TensorType) else None
    if shape is None and layer.inputs[index].shape:
        shape = layer.inputs[index].shape
    if not shape:
        return
    axis = port_int(layer, d, "axis")
    rank = len(shape)
    if not -rank <= axis < rank:
        raise ModelError(f"{layer.where()}: port_map input for port {ext}: axis {axis} is out "
                         f"of range for rank {rank}")
    dim = shape[axis]
    if not isinstance(dim, int):
        return
    posts = {}
    for key, default in (("start", 0), ("end", -1)):
        post = port_int(layer, d, key, default)
        if not -(dim + 1) <= post <= dim:
            raise ModelError(f"{layer.where()}: port_map input for port {ext}: {key}={post} "
                             f"lies beyond axis {axis}, of length {dim} (expected "
                             f"{-(dim + 1)} <= {key} <= {dim})")
        posts[key] = post if post >= 0 else dim + 1 + post
    stride = port_int(layer, d, "stride", 1)
    s, e = posts["start"], posts["end"]
    if (stride > 0 and not s < e) or (stride < 0 and not s > e):
        raise ModelError(f"{layer.where()}: port_map input for port {ext}: start={d.get('start')}"
                         f" and end={d.get('end')} (positions {s} and {e} on axis {axis}, of "
                         f"length {dim}) leave nothing to walk with stride {stride}; OpenVINO "
                         "walks from start to end: start before end for a positive stride, "
                         "after it for a negative one")


def check_bound_parameter(layer: Layer, ext: int, lid: int, param: Value, value: Value,
                          sliced: Sliced | None = None) -> None:
    """Body Parameter `lid` (`param`), fed by input port `ext` (`value`, cut into pieces by
    `sliced` when the input is sliced), declares the input's element type and a compatible
    shape."""
    pt, vt = param.type, value.type
    if not isinstance(pt, TensorType) or not isinstance(vt, TensorType):
        return
    index = next((i for i, p in enumerate(layer.inputs) if p.id == ext), None)
    port = layer.inputs[index] if index is not None else None
    v_dtype = vt.dtype if vt.dtype is not None else (port.dtype if port else None)
    v_shape = vt.shape if vt.shape is not None else (port.shape if port and port.shape else None)
    what = (f"{layer.where()}: port_map input for port {ext} feeds body Parameter {lid} "
            f"('{param.name}')")
    if pt.dtype is not None and v_dtype is not None and pt.dtype != v_dtype:
        raise ModelError(f"{what}, which declares element type {_et(pt.dtype)}, with a value "
                         f"of element type {_et(v_dtype)}; they must be the same")
    if pt.shape is None or v_shape is None:
        return
    want: list[Dim] = list(v_shape)
    if sliced is not None:
        if not -len(want) <= sliced.axis < len(want):
            return  # the slice checks report it
        want[sliced.axis] = sliced.part_size
    if len(pt.shape) != len(want) or any(
            isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(pt.shape, want)):
        got = "a piece" if sliced is not None else "a value"
        raise ModelError(f"{what}, which declares shape {_shape(pt.shape)}, with {got} of "
                         f"shape {_shape(want)}")


def check_current_iteration(layer: Layer, lid: int, param: Value) -> None:
    """The ``current_iteration`` Parameter is an i32 or i64 scalar or ``[1]``."""
    t = param.type
    if not isinstance(t, TensorType):
        return
    bad_type = t.dtype is not None and t.dtype not in _INTEGER
    bad_shape = t.shape is not None and (len(t.shape) > 1 or (
        len(t.shape) == 1 and isinstance(t.shape[0], int) and t.shape[0] != 1))
    if bad_type or bad_shape:
        declared = (f"{_et(t.dtype) if t.dtype is not None else '?'} of shape "
                    f"{_shape(t.shape) if t.shape is not None else '...'}")
        raise ModelError(f"{layer.where()}: body Parameter {lid} ('{param.name}') with "
                         f"purpose=\"current_iteration\" is {declared}; it must be an i32 or "
                         "i64 scalar or of shape [1] (it receives the iteration number)")


def _et(dt: DataType) -> str:
    try:
        return to_element_type(dt)
    except UnsupportedError:
        return str(dt)


def _shape(shape) -> str:
    return "[" + ",".join("?" if not isinstance(d, int) else str(d) for d in shape) + "]"
