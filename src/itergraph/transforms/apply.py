"""`optimize`: apply named transforms to a copy of a model and verify the result."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

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


@dataclass
class Applied:
    """What one transform did in an `optimize` run: how many rewrites, and each loop it left
    alone with the reason (for the transforms that report them)."""

    name: str
    argument: str | None
    count: int
    skipped: list[str] = field(default_factory=list)

    def line(self) -> str:
        head = self.name + (f"={self.argument}" if self.argument is not None else "")
        out = f"{head}: {self.count} rewrite{'s' if self.count != 1 else ''}"
        return out + "".join(f"\n    left: {s}" for s in self.skipped)


def optimize(model, passes: str | Iterable[str] | None = None,
             report: list[Applied] | None = None):
    """A new `Model`: `model` (anything `itergraph.load` takes) with the named transforms
    applied in order to a copy of its graph; the user's model is not changed.

    `passes` is a list of names (``["unroll=4", "dead-ports"]``) or one comma-separated
    string; ``None`` runs `table.DEFAULT`. The result is verified (`ir.verify`). (The public
    ``ig.optimize`` adds a target: `itergraph.targeting`.) `report`, when given, receives an
    `Applied` per transform run.
    """
    from ..model import Model, load
    from .table import DEFAULT, TRANSFORMS

    source = load(model)
    graph = clone_graph(source.graph)
    for name, arg in parse_pass_list(passes if passes is not None else DEFAULT):
        p = TRANSFORMS[name].build(arg)
        count = p(graph)
        if report is not None:
            report.append(Applied(name, arg, int(count or 0), list(getattr(p, "skipped", []))))
    try:
        verify(graph)
    except ModelError as e:
        raise ModelError(f"the transformed model is invalid: {e}") from e
    return Model(graph, source.source)
