"""The NumPy reference backend: always available, exact, runs every op the IR can hold.

``run_graph(graph, feeds)`` compiles `graph` into a plan (see `plan.py`) and runs it once;
`compile_graph` keeps the plan for repeated runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from ...ir import Graph
from .plan import CompileContext, Plan, compile_graph


def run_plan(plan: Plan, feeds: dict[str, Any]) -> dict[str, Any]:
    """Run a top-level plan on `feeds` (name -> value), returning name -> value in output order
    (arrays C-contiguous)."""
    args = []
    for v in plan.inputs:
        if v.name in feeds:
            args.append(feeds[v.name])
        elif v.const is not None:  # an input with a default (ONNX initializer listed as input)
            args.append(v.const)
        else:
            raise InputError(f"missing input '{v.name}'")
    if plan.captures:
        raise InputError(
            f"graph '{plan.graph.name}' uses undefined values: {[v.name for v in plan.captures]}"
        )
    outs = plan.fn(*args)
    # handed out C-contiguous, as other engines do (a Conv may hand its result on channels
    # last, `kernels.conv_nd`; the reader of an output may count on the memory order)
    return {v.name: o if o.__class__ is not np.ndarray or o.flags.c_contiguous
            else np.ascontiguousarray(o) for v, o in zip(plan.graph.outputs, outs)}


def run_graph(graph: Graph, feeds: dict[str, Any], max_iterations: int | None = None) -> dict:
    """Compile and run `graph` once. Feeds are used as given (see `api.Model.run` for checks)."""
    return run_plan(compile_graph(graph, max_iterations), feeds)


__all__ = ["CompileContext", "Plan", "compile_graph", "run_graph", "run_plan"]
