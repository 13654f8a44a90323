"""The loop rewrites the NumPy backend applies before compiling a loop, in order.

`optimize_loops(graph) -> int` runs, on `graph` in place (every loop at any depth):

1. `passthrough_condition`: a condition that passes the condition input through is dropped;
2. `iteration_gather`: ``Gather(data, iteration number)`` becomes a sliced input;
3. `hoist_invariants`: loop-invariant body nodes move out of the loop;
4. `precompute_sliced`: computation on sliced inputs runs once over the whole inputs.

It returns the total number of rewrites (0: the graph is unchanged). Each pass keeps every
output's value on every input the original runs without error (see their contracts).
"""

from __future__ import annotations

from ..ir.graph import Graph
from .hoist_invariants import hoist_invariants
from .iteration_gather import iteration_gather
from .passthrough_condition import passthrough_condition
from .precompute_sliced import precompute_sliced

PASSES = (passthrough_condition, iteration_gather, hoist_invariants, precompute_sliced)


def optimize_loops(graph: Graph) -> int:
    """Apply `PASSES` to `graph` in place; the number of rewrites made."""
    return sum(p(graph) for p in PASSES)
