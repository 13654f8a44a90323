"""The transforms users can name, in the order ``itergraph optimize --list`` prints them."""

from __future__ import annotations

from ..inspect.mark import MarkTensors
from ..passes.hoist_invariants import hoist_invariants
from .registry import Transform

TRANSFORMS: dict[str, Transform] = {t.name: t for t in (
    Transform.of("hoist", "loop-invariant body nodes move out of their loop", hoist_invariants),
    Transform("mark", "body tensors (NAMES joined by '+'; default: carried values and "
              "conditions) become graph outputs through scan outputs of their loops",
              lambda arg: MarkTensors(None if arg is None else arg.split("+")), "NAMES"),
)}

#: What ``optimize`` runs when given neither passes nor a target.
DEFAULT: tuple[str, ...] = ("hoist",)
