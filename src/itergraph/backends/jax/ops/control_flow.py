"""Rules for the control-flow ops: the canonical ``Loop`` (`loops.lowering`) and ONNX
``If`` (`cond`). They trace their subgraphs themselves (``traces_subgraphs``, see `table`)."""

from __future__ import annotations

from ....ir.traits import STANDARD_DOMAINS
from ..cond import lower_if
from ..loops.lowering import lower_loop
from ..table import lowering

lowering("Loop", domain="itergraph", traces_subgraphs=True)(lower_loop)
for _domain in STANDARD_DOMAINS:
    lowering("If", since=1, domain=_domain, traces_subgraphs=True)(lower_if)
