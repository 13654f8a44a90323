"""Loop transforms for users: ``optimize(model, passes=[...]) -> Model`` (``ig.optimize`` adds a
target, `itergraph.targeting`).

Each transform has a user-facing name (``unroll``, ``dead-ports``...) and is a
`passes.base.Pass` underneath, whose docstring is its contract. `transforms.table.TRANSFORMS`
lists them; ``itergraph optimize --list`` prints them with their contracts.
"""

from .apply import optimize, parse_pass_list
from .registry import Transform
from .table import TRANSFORMS

__all__ = ["TRANSFORMS", "Transform", "optimize", "parse_pass_list"]
