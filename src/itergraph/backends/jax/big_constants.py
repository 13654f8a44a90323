"""Large constants: passed to jitted functions as (cached) device arguments, not embedded.

XLA embeds every constant of a traced function in the compiled program. Embedded, weights
are laid out for their consumers once, at compile time: passed as arguments, a convolution's
weights are transposed into the layout XLA's kernel wants on every call (silero VAD runs 2.3x
faster with its 2.3 MB of weights embedded, and compiles no slower). But a model of many
megabytes would make tracing and compiling slow and the program large; so when the graph's
large constants (more than `BIG_CONSTANT` elements each) add up to more than `EMBED_BYTES`,
they become arguments instead (see `Scope.get`, `TraceContext.big`).

Work that depends on constants alone is not redone per call either: a node whose inputs
are all constants, some of them such arguments, is computed once on the host (its NumPy
rule), and a rule's own preparation of a constant operand (`OpContext.prepared`: a quantized
weight centered on its zero point) likewise; each result that is not small becomes one more
argument (`derived`). The first trace of a step that needs a result it was not given uses
a stand-in and asks for it (`Retrace`): the step is traced again with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import Error
from ...ir import Graph, Node
from ...ir.attributes import constant_value

BIG_CONSTANT = 1 << 14  # constants with more elements may be passed as arguments
EMBED_BYTES = 8 << 20  # up to this many bytes of them in a graph are embedded all the same


def _big(c) -> bool:
    return isinstance(c, np.ndarray) and c.size > BIG_CONSTANT and c.dtype.kind != "O"


def collect_big(graph: Graph) -> dict[int, np.ndarray]:
    """uid -> value of the large constants anywhere in `graph` (initializers, constant inputs,
    standard ``Constant`` nodes), subgraphs included; empty when they are few enough to embed
    (`EMBED_BYTES`)."""
    big: dict[int, np.ndarray] = {}

    def visit(g: Graph) -> None:
        for v in g.initializers:
            if _big(v.const):
                big[v.uid] = v.const
        for n in g.nodes:
            for v in n.inputs:
                if v is not None and v.producer is None and _big(v.const):
                    big[v.uid] = v.const
            if n.op_type == "Constant" and n.domain == "" and len(n.outputs) == 1:
                try:
                    c = np.asarray(constant_value(n))
                except Error:
                    c = None
                if _big(c):
                    big[n.outputs[0].uid] = c
            for sg in n.subgraphs():
                visit(sg)

    visit(graph)
    if sum(c.nbytes for c in big.values()) <= EMBED_BYTES:
        return {}
    return big


def big_used(nodes: list[Node], big: dict[int, np.ndarray]) -> list[int]:
    """uids of the large constants in `big` that `nodes` (subgraphs included) read or make,
    in first-use order."""
    used: list[int] = []
    seen: set[int] = set()

    def add(uid):
        if uid in big and uid not in seen:
            seen.add(uid)
            used.append(uid)

    def visit(ns):
        for n in ns:
            for v in n.reads():
                add(v.uid)
            for v in n.outputs:
                add(v.uid)
            for g in n.subgraphs():
                for v in g.initializers:
                    add(v.uid)
                visit(g.nodes)

    visit(nodes)
    return used


class Retrace(Exception):  # noqa: N818 - a signal, not an error
    """A trace used derived constants it was not given (`keys`): trace again with them."""

    def __init__(self, keys: list):
        super().__init__(f"{len(keys)} derived constant(s) to pass")
        self.keys = keys


def derived(tc, key: Any, make) -> Any:
    """The argument holding the host result `key` (``make()``, computed once and kept in
    ``tc.store``); when this trace was not given it, a stand-in of its shape and type, and
    the key is recorded in ``tc.wanted``."""
    x = tc.big.get(key)
    if x is not None:
        return x
    value = tc.store.get(key)
    if value is None:
        value = tc.store[key] = np.asarray(make())
    tc.wanted.append(key)
    if tc.top_node is not None:
        tc.cache.derived_by.setdefault(key, id(tc.top_node))
    import jax.numpy as jnp

    stand_in = jnp.zeros(value.shape, value.dtype)
    tc.placeholders.append(stand_in)
    tc.origin[id(stand_in)] = key
    return stand_in


def constant_inputs(tc, inputs: list) -> list | None:
    """The host values of `inputs` when each is None, static, or a large constant (or a
    result derived from them) and at least one is the latter; else None."""
    if not tc.origin:
        return None
    out, any_big = [], False
    for x in inputs:
        if x is None or isinstance(x, np.ndarray):
            out.append(x)
            continue
        key = tc.origin.get(id(x))
        if key is None:
            return None
        out.append(tc.store[key])
        any_big = True
    return out if any_big else None
