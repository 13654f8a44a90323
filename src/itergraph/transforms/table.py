"""The transforms users can name, in the order ``itergraph optimize --list`` prints them."""

from __future__ import annotations

from ..passes.hoist_invariants import hoist_invariants
from .registry import Transform

TRANSFORMS: dict[str, Transform] = {t.name: t for t in (
    Transform.of("hoist", "loop-invariant body nodes move out of their loop", hoist_invariants),
)}

#: What ``optimize`` runs when given neither passes nor a target.
DEFAULT: tuple[str, ...] = ("hoist",)
