"""Names for the ONNX writer: data flow in the IR is by reference, ONNX names every value.

`Namer` hands out names unique across the whole model (SSA over all scopes); `Env` records
which name an IR value has in one ONNX scope and looks outwards like ONNX scoping does.
"""

from __future__ import annotations

from ...ir.graph import Value


class Namer:
    """Hands out names unique across the model."""

    def __init__(self):
        self.used: set[str] = set()
        self._next: dict[str, int] = {}

    def fresh(self, hint: str = "") -> str:
        base = hint or "v"
        if base not in self.used:
            self.used.add(base)
            return base
        k = self._next.get(base, 1)
        while f"{base}_{k}" in self.used:
            k += 1
        self._next[base] = k + 1
        name = f"{base}_{k}"
        self.used.add(name)
        return name


class Env:
    """Names of IR values in one ONNX scope; looks outwards like ONNX scoping does."""

    def __init__(self, parent: Env | None = None):
        self.parent = parent
        self.names: dict[int, str] = {}

    def lookup(self, v: Value) -> str | None:
        e: Env | None = self
        while e is not None:
            n = e.names.get(v.uid)
            if n is not None:
                return n
            e = e.parent
        return None
