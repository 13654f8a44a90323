"""`optimize`: apply named transforms to a copy of a model and verify the result."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InputError, ModelError
from ..ir.clone import clone_graph
from ..ir.verifier import verify


def parse_pass_list(text: str | Iterable[str]) -> list[tuple[str, str | None]]:
    """``"unroll=4,dead-ports"`` (or a list of such items) as ``[("unroll", "4"),
    ("dead-ports", None)]``; unknown names are an `InputError` that lists the known ones."""
    from .table import TRANSFORMS

    items = text.split(",") if isinstance(text, str) else list(text)
    out = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        name, sep, arg = item.partition("=")
        name = name.strip()
        if name not in TRANSFORMS:
            raise InputError(f"unknown transform '{name}'; known: {', '.join(TRANSFORMS)}")
        out.append((name, arg.strip() if sep else None))
    return out


def optimize(model, passes: str | Iterable[str] | None = None):
    """A new `Model`: `model` (anything `itergraph.load` takes) with the named transforms
    applied in order to a copy of its graph; the user's model is not changed.

    `passes` is a list of names (``["unroll=4", "dead-ports"]``) or one comma-separated
    string; ``None`` runs `table.DEFAULT`. The result is verified (`ir.verify`). (The public
    ``ig.optimize`` adds a target: `itergraph.targeting`.)
    """
    from ..api import Model, load
    from .table import DEFAULT, TRANSFORMS

    source = load(model)
    graph = clone_graph(source.graph)
    for name, arg in parse_pass_list(passes if passes is not None else DEFAULT):
        TRANSFORMS[name].build(arg)(graph)
    try:
        verify(graph)
    except ModelError as e:
        raise ModelError(f"the transformed model is invalid: {e}") from e
    return Model(graph, source.source)
