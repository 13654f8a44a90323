"""Varying lengths without a compile per length (`analysis.padding`).

A `CompiledGraph` compiles one program per input signature. When a signature arrives that
has not been compiled but differs from one that has only in the extent of one input along
one axis (a stream whose length varies), `PaddedCalls.route` asks `analysis.padding` whether
padding that axis is exact. If it is, this signature and every later one of that stream run
padded to the next power of two on a second `CompiledGraph` of the padded graph: lengths 1
to 64 make 7 programs instead of 64. Signatures compiled exactly keep their own program.

A padded signature's key is ``("padded", input, axis, inner key)``: `CompiledGraph.signature`
returns it, so the ``auto`` engine judges and compiles buckets, not lengths.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis.padding import VALID_LENGTH, PaddedGraph, plan_padding

MAX_ROUTES = 4096  # signatures whose route is remembered


class PaddedCalls:
    """The padded runs of one `CompiledGraph` (`cg`), planned from its source graph."""

    def __init__(self, cg, source, compile_graph):
        self.cg = cg
        self.source = source
        self.compile_graph = compile_graph  # graph -> a `CompiledGraph` of it
        self.plans: dict[tuple[str, int], tuple[PaddedGraph, Any] | None] = {}
        self.routes: dict[tuple, tuple | None] = {}  # signature -> its padded key or None

    def key(self, raw: tuple, feeds: dict[str, Any], max_iterations: int | None):
        """The padded key of signature `raw`, or None when it runs unpadded."""
        key = self.routes.get(raw, False)
        if key is False:
            where = self._route(raw, feeds)
            key = None if where is None else self._padded_key(where, feeds, max_iterations)
            if len(self.routes) < MAX_ROUTES:
                self.routes[raw] = key
        return key

    def _padded_key(self, where: tuple[str, int], feeds: dict[str, Any],
                    max_iterations: int | None) -> tuple:
        plan, inner = self.plans[where]
        stand_in = dict(feeds)
        x = feeds[plan.input]
        stand_in[plan.input] = np.broadcast_to(np.zeros((), x.dtype), plan.shape(x.shape))
        stand_in[VALID_LENGTH] = np.zeros((), np.int32)
        return ("padded", *where, inner.signature(stand_in, max_iterations))

    def _route(self, raw: tuple, feeds: dict[str, Any]) -> tuple[str, int] | None:
        """(input, axis) when `raw` differs from a compiled signature in that extent only and
        padding it is exact."""
        names = self.cg.feed_names
        for key in self.cg.compiled_keys:
            where = _one_extent_apart(raw, key, names)
            if where is None:
                continue
            if where not in self.plans:
                plan = plan_padding(self.source, *where)
                self.plans[where] = None if plan is None else (
                    plan, self.compile_graph(plan.graph))
            if self.plans[where] is not None:
                return where
        return None

    @property
    def compiled_signatures(self) -> int:
        return sum(len(p[1].compiled_keys) for p in self.plans.values() if p is not None)

    def compiled_for(self, key: tuple) -> bool:
        return self.plans[key[1:3]][1].compiled_for(key[3])

    def prepared_call(self, key: tuple):
        plan, inner = self.plans[key[1:3]]
        fast = inner.prepared_call(key[3])
        if not fast:
            return None

        def call(feeds: dict[str, Any]) -> dict[str, Any] | None:
            padded, n = plan.feeds(feeds)
            out = fast(padded)
            return None if out is None else plan.unpad(out, n)

        return call

    def run(self, key: tuple, feeds: dict[str, Any], max_iterations: int | None):
        plan, inner = self.plans[key[1:3]]
        padded, n = plan.feeds(feeds)
        return plan.unpad(inner.run(padded, max_iterations), n)


def _one_extent_apart(a: tuple, b: tuple, names: tuple[str, ...]) -> tuple[str, int] | None:
    """(feed name, axis) when signatures `a` and `b` differ only in the extent of that feed
    along that axis (both lengths at least 1)."""
    if len(a) != len(b) or a[0] != b[0] or a[len(names) + 1:] != b[len(names) + 1:]:
        return None
    found = None
    for name, x, y in zip(names, a[1:], b[1:]):
        if x == y:
            continue
        if found is not None or x is None or y is None or x[1] != y[1] or len(x[0]) != len(y[0]):
            return None
        axes = [i for i, (m, n) in enumerate(zip(x[0], y[0])) if m != n]
        if len(axes) != 1 or x[0][axes[0]] == 0 or y[0][axes[0]] == 0:
            return None
        found = (name, axes[0])
    return found
