"""``ig.optimize``: the named transforms, then what a target's portability check asks for.

Above both `transforms` (which rewrite) and `portability` (which tries the transforms to
prove a fix), so that neither imports the other's caller.
"""

from __future__ import annotations

from collections.abc import Iterable


def optimize(model, passes: str | Iterable[str] | None = None, target: str | None = None,
             report: list | None = None):
    """A new `Model`: `model` (anything `itergraph.load` takes) with the transforms `passes`
    applied in order to a copy (`transforms.optimize`; with neither `passes` nor `target`,
    the default pipeline), then, with `target`, the fixes the portability check of `target`
    names for the result (`portability.fixes_for`). The user's model is not changed.
    `report` receives what each transform did (`transforms.apply.Applied`)."""
    from .portability import fixes_for
    from .transforms import optimize as apply

    if target is None:
        return apply(model, passes, report)
    out = apply(model, passes if passes is not None else (), report)
    fixes = fixes_for(out, target)
    return apply(out, fixes, report) if fixes else out
