"""The transforms users can name, in the order ``itergraph optimize --list`` prints them."""

from __future__ import annotations

from ..passes import cell_ops
from ..passes.hoist_invariants import hoist_invariants
from .registry import Transform

TRANSFORMS: dict[str, Transform] = {t.name: t for t in (
    Transform.of("hoist", "loop-invariant body nodes move out of their loop", hoist_invariants),
    Transform("fuse-cells", "LSTM/GRU/RNN cell loops become the LSTM/GRU/RNN operator "
              "(=lstm+gru: those kinds only)", cell_ops.for_kinds, argument="KINDS"),
)}

#: What ``optimize`` runs when given neither passes nor a target.
DEFAULT: tuple[str, ...] = ("hoist",)
