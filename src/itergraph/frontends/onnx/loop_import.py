"""ONNX ``Loop`` (every version: 1, 11, 13, 16, 19, 21, 23, 24, 25) -> canonical `Loop`.

Node ``Loop(M, cond, v_1..v_N) -> (v_final_1..v_final_N, scan_1..scan_K)`` with body
``(iter_num, cond_in, v_in_1..v_in_N) -> (cond_out, v_out_1..v_out_N, so_1..so_K)`` becomes:

- ``trip_count`` = M (``None`` when omitted), ``initial_condition`` = cond (or ``None``),
- ``iteration_param`` = body input 0, ``condition_param`` = body input 1,
  ``condition_result`` = body output 0,
- ``Carried(v_i, v_in_i, v_out_i)`` with a ``Last`` output for each loop-carried value,
- a ``Concat(so_j, axis=0, new_axis=True)`` output for each scan output.

A negative ``M`` runs no iteration (ONNX Runtime and the reference evaluator agree):
``negative_trip_count="zero"``.

The versions differ only in the types they allow (sequences from 13, optionals from 16, new
element types later), which the conversion does not depend on.
"""

from __future__ import annotations

import onnx

from ...errors import ModelError
from ...ir.graph import Value
from ...ir.loop import Carried, Concat, Last, Loop
from .node_import import where
from .scope import Scope


def import_loop(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                outputs: list[Value], version: int) -> Loop:
    if len(inputs) < 2:
        raise ModelError(f"{where(p)}: expects at least 2 inputs (M, cond; either may be the "
                         f"empty name), got {len(inputs)}")
    m, cond, *init = inputs
    n = len(init)
    for i, v in enumerate(init):
        if v is None:
            raise ModelError(f"{where(p)}: loop-carried input {i} (node input {i + 2}) is empty")
    body = r.body(p, scope)
    if len(body.inputs) != n + 2:
        raise ModelError(f"{where(p)}: body has {len(body.inputs)} inputs; expected 2 + N = "
                         f"{n + 2} (iteration number, condition, {n} loop-carried values)")
    k = len(body.outputs) - 1 - n
    if k < 0:
        raise ModelError(f"{where(p)}: body has {len(body.outputs)} outputs; expected at least "
                         f"1 + N = {n + 1} (condition, {n} loop-carried values)")
    if len(outputs) != n + k:
        raise ModelError(f"{where(p)}: has {len(outputs)} outputs; the body defines N + K = "
                         f"{n + k} ({n} loop-carried values, {k} scan outputs)")
    iter_param, cond_param = body.inputs[0], body.inputs[1]
    cond_out = body.outputs[0]
    carried = [Carried(init[i], body.inputs[2 + i], body.outputs[1 + i]) for i in range(n)]
    outs: list = [Last(body.outputs[1 + i], outputs[i]) for i in range(n)]
    outs += [Concat(body.outputs[1 + n + j], outputs[n + j], axis=0, new_axis=True)
             for j in range(k)]
    return Loop(body, carried, outs, trip_count=m, initial_condition=cond,
                condition_result=cond_out, condition_param=cond_param,
                iteration_param=iter_param, name=p.name, origin="onnx.Loop",
                origin_attrs={"opset": version, "version": r.since(p, version)},
                negative_trip_count="zero")
