"""Cell fusion: a loop whose body is an LSTM, GRU or RNN cell, in any spelling, becomes one
``itergraph.RecurrentSequence`` node (`fuse_cells`, the pass; `fuse_cells.fused_kind`, what it
would do with a loop).

The parts, each with one job (none of them a pass but `fuse_cells` and `ops`):

- `match`: a loop body recognised as an LSTM, GRU or RNN cell (`CellMatch`), reading its gate
  pre-activations as affine forms of the step input and the state (`affine`);
- `glue`: the loop's step input and outputs as whole sequences;
- `mask`: per-step masks that keep an entry's states (Keras masking);
- `fission`: cells stacked in one loop split into a loop per cell;
- `counter`: while loops that only count, as counted loops;
- `dims`: which axis an integer is the size of, and when two values are computed alike;
- `emit`: the nodes that replace a fused loop, constants folded at once;
- `ops`: the pass that spells the fused node as the standard ``LSTM``/``GRU``/``RNN``
  operators (``fuse-cells`` among the transforms).
"""

from .fuse_cells import DOMAIN, OP, fuse_cells, fused_kind

__all__ = ["DOMAIN", "OP", "fuse_cells", "fused_kind"]
