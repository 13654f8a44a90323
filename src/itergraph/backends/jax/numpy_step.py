"""A plan step: top-level nodes [a, b) that cannot be lowered, run by the NumPy backend."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import where
from ...ir import Graph
from ..numpy import CompileContext
from .records import Record

HOST_STATIC_MAX = 64  # NumPy-segment results of integer type up to this size count as known


def _host(x: Any) -> Any:
    """A value as the NumPy backend wants it."""
    if x is None or isinstance(x, (np.ndarray, list, tuple)):
        return x
    return np.asarray(x)


class NumpyStep:
    """Top-level nodes [a, b) run by the NumPy backend (they cannot be lowered)."""

    def __init__(self, cg, a: int, b: int, why: Exception):
        self.cg, self.a, self.b = cg, a, b
        self.nodes = cg.nodes[a:b]
        self.why = why
        outs = cg.step_outputs(a, b)
        by_uid = {v.uid: v for n in self.nodes for v in n.outputs}
        self.outputs = [by_uid[u] for u in outs]
        self.graph = Graph(f"{cg.graph.name}/numpy", nodes=self.nodes,
                           opset_imports=cg.graph.opset_imports)
        self._plans: dict = cg.segment_plans

    def run(self, env, static, max_it) -> None:
        key = (self.a, self.b, max_it)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = CompileContext(max_it).compile(
                self.graph, outputs=self.outputs, inputs=[])
        args = [_host(env[v.uid]) for v in plan.captures]
        res = plan.fn(*args)
        for v, x in zip(self.outputs, res):
            env[v.uid] = x
            if (isinstance(x, np.ndarray) and x.size <= HOST_STATIC_MAX
                    and x.dtype.kind in "iub"):
                static[v.uid] = ("value", x.dtype.str, x.shape, x.tobytes())
                env[v.uid] = x

    def records(self) -> list[Record]:
        reason = getattr(self.why, "reason", None) or str(self.why)
        elem = getattr(self.why, "element", None)
        first = self.nodes[0]
        detail = reason if elem is None or elem is first else f"{where(elem)}: {reason}"
        out = [Record(where(first), False, f"runs on NumPy: {detail}")]
        for n in self.nodes[1:]:
            out.append(Record(where(n), False, "runs on NumPy: no JAX lowering for this op"))
        return out
