"""Op tables: one table per concern (NumPy kernel, JAX lowering, ...), keyed by op and version.

An entry registered ``since=13`` serves every opset version from 13 up to (not including) the
next registered ``since`` for the same op. Look-up with ``version=None`` takes the newest.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any


class OpTable:
    def __init__(self, concern: str):
        self.concern = concern
        self._entries: dict[tuple[str, str], list[tuple[int, Any]]] = {}

    def register(self, op: str | list[str], since: int = 1, domain: str = "") -> Callable:
        """Decorator: ``@table.register("Add", since=7)``; `op` may be a list of names."""
        names = [op] if isinstance(op, str) else list(op)

        def deco(impl):
            for name in names:
                self.add(name, impl, since=since, domain=domain)
            return impl

        return deco

    def add(self, op: str, impl: Any, since: int = 1, domain: str = "") -> None:
        entries = self._entries.setdefault((domain, op), [])
        entries[:] = [e for e in entries if e[0] != since]
        bisect.insort(entries, (since, impl), key=lambda e: e[0])

    def lookup(self, op: str, version: int | None = None, domain: str = "") -> Any | None:
        entries = self._entries.get((domain, op))
        if not entries:
            return None
        if version is None:
            return entries[-1][1]
        i = bisect.bisect_right([s for s, _ in entries], version)
        return entries[i - 1][1] if i else None

    def ops(self) -> list[tuple[str, str]]:
        return sorted(self._entries)

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._entries
