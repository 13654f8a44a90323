"""The transforms users can name, in the order ``itergraph optimize --list`` prints them."""

from __future__ import annotations

from ..passes.hoist_invariants import hoist_invariants
from .loop_forms import LOOP_FORMS
from .registry import Transform
from .unroll import UNROLL

TRANSFORMS: dict[str, Transform] = {t.name: t for t in (
    Transform.of("hoist", "loop-invariant body nodes move out of their loop", hoist_invariants),
    UNROLL,
    *LOOP_FORMS,
)}

#: What ``optimize`` runs when given neither passes nor a target.
DEFAULT: tuple[str, ...] = ("hoist",)
