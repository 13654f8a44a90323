"""The JAX lowering table: one rule per op and opset version range.

A rule is ``fn(cx, *inputs)`` returning the node's output, or a tuple when the node has a
number of outputs other than one. `cx` is an `OpContext`: ``cx.node`` is the node,
``cx.xp`` the array module to compute with, ``cx.const(x, what)`` demands a value known at
trace time (a NumPy array), ``cx.check(bad, message)`` records a run-time error condition.

Inputs are NumPy arrays when their value is known while tracing ("static": constants and
everything computed from constants and shapes) and JAX arrays otherwise; an omitted optional
input is ``None``. A rule registered with ``fold=True`` is written against ``cx.xp`` alone,
so when all its inputs are static it runs with ``xp = numpy`` and its result stays static:
that is what keeps ``Shape -> Gather -> Concat -> Reshape`` chains static inside a trace.
Rules without `fold` always run with ``xp = jax.numpy``.

Control flow (``Loop``, ``If``) is registered here like any other op, with
``traces_subgraphs=True``: such a rule is called as ``fn(tc, node, scope)`` (the
`TraceContext`, the node, the `Scope` of the graph holding it), traces the node's subgraphs
itself and returns the list of the node's output values.

This module imports no JAX, so the table can be inspected without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...registry import OpTable

LOWERINGS = OpTable("jax lowering")


@dataclass(frozen=True)
class Rule:
    fn: Callable
    fold: bool = False
    traces_subgraphs: bool = False  # fn(tc, node, scope) -> outputs (control flow)
    # refuses(node) -> why the rule will give the node back to NumPy (None: it lowers); the
    # rule itself fails with that reason, and `analysis` reports it before any trace
    refuses: Callable | None = None


def lowering(op: str | list[str], since: int = 1, domain: str = "", fold: bool = False,
             traces_subgraphs: bool = False, refuses: Callable | None = None):
    """Decorator: ``@lowering("Add", since=7, fold=True)`` registers ``fn(cx, *inputs)``;
    ``@lowering("If", traces_subgraphs=True)`` registers ``fn(tc, node, scope)``;
    ``refuses(node)`` names the nodes of the op the rule does not lower (checked statically
    by `analysis`, and by the rule through `refused`)."""
    names = [op] if isinstance(op, str) else list(op)

    def deco(fn):
        rule = Rule(fn, fold, traces_subgraphs, refuses)
        for name in names:
            LOWERINGS.add(name, rule, since=since, domain=domain)
        return fn

    return deco


_loaded = False


def load_all() -> None:
    """Import every rule module of `ops`, and `control_flow`, so that each registers its ops
    (idempotent)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    from . import ops

    for info in pkgutil.iter_modules(ops.__path__):
        importlib.import_module(f"{ops.__name__}.{info.name}")
    importlib.import_module(f"{__package__}.control_flow")
    _loaded = True


def refused(cx, refuses: Callable) -> None:
    """Fail `cx` with ``refuses(cx.node)``'s reason, if it gives one."""
    why = refuses(cx.node)
    if why:
        cx.fail(why)


def lookup(node) -> Rule | None:
    """The rule for `node` (its op, domain and version), or None."""
    load_all()
    return LOWERINGS.lookup(node.op_type, node.version, node.domain)
