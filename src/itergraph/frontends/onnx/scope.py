"""Name resolution with ONNX lexical scoping.

Each graph (the main graph and every subgraph) has a `Scope`. A name is looked up in the
innermost scope first, then outwards: a subgraph's inputs and body-local values shadow outer
values of the same name; a reference to an outer name resolves to the outer `Value` object
itself (an outer-scope capture, at any depth).
"""

from __future__ import annotations

from ...errors import ModelError
from ...ir.graph import Value


class Scope:
    def __init__(self, graph_name: str, parent: Scope | None = None):
        self.graph_name = graph_name
        self.parent = parent
        self.names: dict[str, Value] = {}

    def define(self, name: str, value: Value, what: str) -> None:
        """Bind `name` in this scope; a second definition in the same graph is an error."""
        if name in self.names:
            raise ModelError(
                f"graph '{self.graph_name}': name '{name}' is defined twice (again as {what}); "
                "ONNX graphs must be in SSA form"
            )
        self.names[name] = value

    def lookup(self, name: str) -> Value | None:
        s: Scope | None = self
        while s is not None:
            v = s.names.get(name)
            if v is not None:
                return v
            s = s.parent
        return None
