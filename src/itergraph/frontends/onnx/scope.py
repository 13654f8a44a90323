"""Name resolution with ONNX lexical scoping.

Each graph (the main graph and every subgraph) has a `Scope`. A name is looked up in the
innermost scope first, then outwards: a subgraph's inputs and body-local values shadow outer
values of the same name; a reference to an outer name resolves to the outer `Value` object
itself (an outer-scope capture, at any depth).

The body of a model-local function being expanded at a call has a scope of its own without a
parent (a function body sees only its formal inputs), which carries the call (`call`): the
function's opset imports and attribute values, found from any subgraph of the body by looking
outwards. A formal input that the call omits is bound as *absent*: it reads as an omitted
optional input.
"""

from __future__ import annotations

from typing import Any

from ...errors import ModelError
from ...ir.graph import Value


class Scope:
    def __init__(self, graph_name: str, parent: Scope | None = None, *, call: Any = None,
                 label: str = ""):
        self.graph_name = graph_name
        self.parent = parent
        self.label = label or f"graph '{graph_name}'"
        self._call = call
        self.names: dict[str, Value | None] = {}

    @property
    def call(self) -> Any:
        """The function call whose body this scope belongs to (``None`` outside functions)."""
        s: Scope | None = self
        while s is not None:
            if s._call is not None:
                return s._call
            s = s.parent
        return None

    def define(self, name: str, value: Value | None, what: str) -> None:
        """Bind `name` in this scope (`value` ``None``: absent); a second definition in the same
        graph is an error."""
        if name in self.names:
            raise ModelError(
                f"{self.label}: name '{name}' is defined twice (again as {what}); "
                "ONNX graphs must be in SSA form"
            )
        self.names[name] = value

    def find(self, name: str) -> tuple[bool, Value | None]:
        """(whether `name` is bound here or outwards, its value: ``None`` when absent)."""
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return True, s.names[name]
            s = s.parent
        return False, None

    def lookup(self, name: str) -> Value | None:
        return self.find(name)[1]
