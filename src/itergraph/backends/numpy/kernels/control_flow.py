"""The NumPy kernel of ONNX `If`: both branches compiled once, one of them run per call."""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir import Node
from ..plan import CompileContext
from . import kernel


@kernel("If", since=1)
def if_kernel(node: Node, ctx: CompileContext):
    """``outs = then_branch() if cond else else_branch()``."""
    caps = node.captured()
    cap_pos = {v.uid: i for i, v in enumerate(caps)}
    branches = []
    for attr in ("else_branch", "then_branch"):
        g = node.attrs[attr]
        plan = ctx.compile(g, inputs=[])
        branches.append((plan.fn, [cap_pos[v.uid] for v in plan.captures]))
    n_out = len(node.outputs)

    def run(cond, *outer):
        c = np.asarray(cond)
        if c.size != 1:
            raise ExecutionError(f"{where(node)}: condition must hold one element, got {c.shape}")
        fn, idx = branches[bool(c.reshape(()))]
        res = fn(*[outer[i] for i in idx])
        if len(res) != n_out:
            raise ExecutionError(f"{where(node)}: branch returned {len(res)} values, "
                                 f"the node has {n_out} outputs")
        return res[0] if n_out == 1 else res

    return run
