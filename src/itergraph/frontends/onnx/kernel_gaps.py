"""Element types ONNX allows for an op but ONNX Runtime (1.2x, CPU) has no kernel for.

ONNX Runtime's CPU kernels cover fewer element types than the ONNX schemas: ``Relu`` has none
for int16 and int64, ``Max``/``Min`` none for int16 and uint16, ``PRelu`` none for integers,
``Unique`` only float16/32/64, int8, int64 and strings.
OpenVINO models hold such nodes (a PyTorch ``clamp(min=0)`` on indices becomes an int64
``Relu``), so the writer gives them in an equivalent form ONNX Runtime runs, exactly:

- int64 ``Relu(x)`` is ``Max(x, 0)``;
- int16 / uint16 ``Relu``, ``Max``, ``Min`` are computed in int32 / uint32 between two
  ``Cast``s (a widening, so exact);
- integer ``PRelu(x, slope)`` is ``Where(x < 0, x * slope, x)``;
- int16/int32/uint8/uint16/uint32 ``Unique`` runs on its input cast to int64, bool ``Unique``
  on int8 (widenings that keep order and equality, so the sorted order, indices and counts are
  the same), its unique values cast back; uint64 likewise on int64 with the sign bit flipped
  (``BitwiseXor``, opset 18), so that int64 order is uint64 order.

Other nodes, and these under an opset too old to take integers, go to `emit_node` unchanged.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from ...ir.graph import Node
from ...ir.types import DataType
from .emit import Emitter
from .export_common import dtype_of
from .naming import Env
from .node_export import emit_node
from .types import dtype_to_onnx

WIDER = {DataType.INT16: DataType.INT32, DataType.UINT16: DataType.UINT32}
UNIQUE_WIDER = {DataType.INT16: DataType.INT64, DataType.INT32: DataType.INT64,
                DataType.UINT8: DataType.INT64, DataType.UINT16: DataType.INT64,
                DataType.UINT32: DataType.INT64, DataType.BOOL: DataType.INT8}
INTEGERS = (DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64, DataType.UINT8,
            DataType.UINT16, DataType.UINT32, DataType.UINT64)


def _plain(n: Node) -> bool:
    return n.domain == "" and len(n.outputs) == 1 and all(v is not None for v in n.inputs)


def _widened(w, n: Node, env: Env, nodes: list, dt: DataType) -> None:
    """`n` computed in the wider type of `dt` between Casts."""
    E = Emitter(nodes, w.namer, w.opset)
    user = f"{n.op_type} node '{n.name or '<unnamed>'}'"
    wide = dtype_to_onnx(WIDER[dt])
    ins = [E.op("Cast", [w.name(env, v, user)], "widened", to=wide) for v in n.inputs]
    y = E.op(n.op_type, ins, n.op_type.lower())
    E.op("Cast", [y], out=w.define(env, n.outputs[0]), to=dtype_to_onnx(dt))


def emit_relu(w, n: Node, env: Env, nodes: list) -> None:
    dt = dtype_of(n.inputs[0]) if n.inputs else None
    if not _plain(n) or w.opset < 14 or dt not in (DataType.INT64, *WIDER):
        emit_node(w, n, env, nodes)
    elif dt in WIDER:
        _widened(w, n, env, nodes, dt)
    else:
        E = Emitter(nodes, w.namer, w.opset)
        x = w.name(env, n.inputs[0], f"Relu node '{n.name or '<unnamed>'}'")
        E.op("Max", [x, E.const(0, "zero", dtype=np.int64)], out=w.define(env, n.outputs[0]))


def emit_max_min(w, n: Node, env: Env, nodes: list) -> None:
    dts = {dtype_of(v) for v in n.inputs if v is not None}
    if not _plain(n) or w.opset < 12 or len(dts) != 1 or next(iter(dts)) not in WIDER:
        emit_node(w, n, env, nodes)
    else:
        _widened(w, n, env, nodes, next(iter(dts)))


def emit_prelu(w, n: Node, env: Env, nodes: list) -> None:
    dt = dtype_of(n.inputs[0]) if n.inputs else None
    if not _plain(n) or len(n.inputs) != 2 or dt not in INTEGERS:
        emit_node(w, n, env, nodes)
        return
    E = Emitter(nodes, w.namer, w.opset)
    user = f"PRelu node '{n.name or '<unnamed>'}'"
    x, slope = (w.name(env, v, user) for v in n.inputs)
    zero = E.const(0, "zero", dtype=np.dtype(dt.value))
    neg = E.op("Less", [x, zero], "negative")
    E.op("Where", [neg, E.op("Mul", [x, slope], "scaled"), x], out=w.define(env, n.outputs[0]))


def emit_unique(w, n: Node, env: Env, nodes: list) -> None:
    dt = dtype_of(n.inputs[0]) if n.inputs else None
    flip = dt == DataType.UINT64 and w.opset >= 18
    if len(n.inputs) != 1 or n.inputs[0] is None or w.opset < 11 or \
            (dt not in UNIQUE_WIDER and not flip):
        emit_node(w, n, env, nodes)
        return
    E = Emitter(nodes, w.namer, w.opset)
    user = f"Unique node '{n.name or '<unnamed>'}'"
    wide = DataType.INT64 if flip else UNIQUE_WIDER[dt]
    x = E.op("Cast", [w.name(env, n.inputs[0], user)], "widened", to=dtype_to_onnx(wide))
    if flip:  # uint64 order is int64 order with the sign bit flipped
        sign = E.const(np.iinfo(np.int64).min, "sign_bit")
        x = E.op("BitwiseXor", [x, sign], "ordered")
    outs = [w.define(env, v) if v is not None and i else "" for i, v in enumerate(n.outputs)]
    wide_y = E.fresh("unique_wide")
    attrs = {k: int(v) for k, v in n.attrs.items() if k in ("axis", "sorted") and v is not None}
    nodes.append(helper.make_node("Unique", [x], [wide_y, *outs[1:]],
                                  name=w.node_names.fresh(n.name or "Unique"), **attrs))
    if n.outputs and n.outputs[0] is not None:
        if flip:
            wide_y = E.op("BitwiseXor", [wide_y, sign], "unordered")
        E.op("Cast", [wide_y], out=w.define(env, n.outputs[0]), to=dtype_to_onnx(dt))
