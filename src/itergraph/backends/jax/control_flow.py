"""Rules for the control-flow ops: the canonical ``Loop`` (`loops.lowering`) and ONNX
``If`` (`cond`). They trace their subgraphs themselves (``traces_subgraphs``, see `table`).
Beside `ops`, not in it: the loop lowering uses rules of `ops` (the RNN input projection),
so `ops` does not import `loops`."""

from __future__ import annotations

from .cond import lower_if
from .loops.lowering import lower_loop
from .table import lowering

lowering("Loop", domain="itergraph", traces_subgraphs=True)(lower_loop)
lowering("If", since=1, traces_subgraphs=True)(lower_if)
