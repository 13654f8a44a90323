"""`SkipReport`: passes that say which loops they left alone and why."""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.loop import Loop


class SkipReport:
    """A mixin for a `LoopPass`: `skipped` lists ``"Loop node 'name': reason"`` for every loop
    the last top-level call left alone (recursive calls into bodies add to it)."""

    _busy = False

    def __init__(self) -> None:
        self.skipped: list[str] = []

    def __call__(self, graph: Graph) -> int:
        if self._busy:
            return super().__call__(graph)
        self.skipped = []
        self._busy = True
        try:
            return super().__call__(graph)
        finally:
            self._busy = False

    def skip(self, loop: Loop, why: str) -> int:
        """Record that `loop` is left alone because of `why`; 0 rewrites."""
        self.skipped.append(f"Loop node '{loop.name or '<unnamed>'}': {why}")
        return 0
