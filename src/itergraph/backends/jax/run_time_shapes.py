"""Top-level nodes whose compile-time inputs (shapes, axes, counts) come from a loop's
results: the static half of what the JAX backend only finds when tracing.

A loop's results are run-time data; so is the shape of what grows with its iteration count
when the loop can stop early (its concatenated outputs and its grown carried values, the
buffers of `loops.growing`, cut to the run's length). A node that needs such a value when
compiling (a ``ConstantOfShape`` shape, a ``Reshape`` target, ... as
`loops.padded_reads.needs_static` lists them) runs on NumPy (a Concat after such a loop
padding its outputs to a fixed length, say).
"""

from __future__ import annotations

from ...errors import where
from ...ir import Concat, Loop, Node
from .loops.growing import candidates
from .loops.padded_reads import needs_static


class RunTimeShapes:
    """Walks the top-level nodes in order (`problem` for each)."""

    def __init__(self):
        self.data: set[int] = set()   # values known only at run time
        self.shaped: set[int] = set()  # values whose shape is known only at run time

    def problem(self, node: Node, early: bool) -> str | None:
        """Why `node` cannot compile for this reason, or None; then records its outputs.
        `early`: `node` is a loop that can stop early."""
        ins = [(i, v) for i, v in enumerate(node.inputs) if v is not None]
        static = needs_static(node.op_type)
        bad = [i for i, v in ins if v.uid in self.data and (static == "all" or i in static)]
        if bad:
            return (f"{where(node)}: input {bad[0]} is needed when compiling and is computed "
                    "from a loop's results, known only at run time")
        outs = [v for v in node.outputs if v is not None]
        if isinstance(node, Loop):
            self.data.update(v.uid for v in outs)
            if early:
                grown = {node.carried[j].result.uid for j in candidates(node)}
                self.shaped.update(p.output.uid for p in node.output_ports
                                   if p.output is not None and
                                   (isinstance(p, Concat) or p.result.uid in grown))
            return None
        shape_only = node.op_type in ("Shape", "Size")
        if any(v.uid in self.shaped for _, v in ins):
            self.data.update(v.uid for v in outs)
            if not shape_only:
                self.shaped.update(v.uid for v in outs)
        elif not shape_only and any(v.uid in self.data for _, v in ins):
            self.data.update(v.uid for v in outs)
        return None

