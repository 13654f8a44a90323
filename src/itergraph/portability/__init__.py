"""Portability check: which loop features a runtime or converter will refuse, and the
transform that fixes each.

    report = ig.check(model, target="tensorrt")     # Report: .ok, .findings, .fixes(), .text()
    fixes_for(model, "tensorrt")                     # ["step-model", ...] for optimize(target=)

The rules are one table (`rules.RULES`), one row per (target, feature), each with its source.
"""

from __future__ import annotations

from dataclasses import replace

from ..analysis.loop_features import Site, sites
from ..errors import Error, InputError
from .report import Finding, Report
from .rules import RULES, TARGETS, WRITE, Rule, rules_for

__all__ = ["RULES", "TARGETS", "WRITE", "Finding", "Report", "Rule", "check", "fixes_for"]


def _format(rule: Rule, site: Site | None) -> str:
    op = ""
    if site is not None:
        from ..analysis.loop_features import node_label

        op = node_label(site.node).split(" ")[0]
    return rule.message.replace("{op}", op)


def check(model, target: str) -> Report:
    """The `Report` of `model` (anything `itergraph.load` takes) against `target`, one of
    `TARGETS`: every (rule, site) where a rule of the target applies, in graph order. A
    finding's fix is the rule's transform only where applying it to this model removes the
    finding (`_proven`); elsewhere the finding says so and has no fix."""
    from ..model import load

    if target not in TARGETS:
        raise InputError(f"unknown check target '{target}'; known: {', '.join(TARGETS)}")
    m = load(model)
    return Report(target, m.source, _proven(m, target, _findings(m, target)))


def _proven(m, target: str, found: list[Finding]) -> list[Finding]:
    """`found`, each fix tried on a copy of `m`: one that leaves its finding in place (the
    transform does not apply here, e.g. ``fold-trip-count`` on a count the user feeds)
    is dropped, and the finding says why."""
    from ..transforms import optimize

    left: dict[str, set[tuple[str, str]]] = {}
    for fix in {f.fix for f in found if f.fix and f.fix != WRITE}:
        try:
            after = _findings(optimize(m, [fix]), target)
            left[fix] = {(g.feature, g.where) for g in after}
        except Error:
            left[fix] = {(f.feature, f.where) for f in found if f.fix == fix}
    out = []
    for f in found:
        if f.fix in left and (f.feature, f.where) in left[f.fix]:
            f = replace(f, fix=None, detail=f"{f.detail} (transform '{f.fix}' would not "
                                            "remove it in this model)")
        out.append(f)
    return out


def _findings(m, target: str) -> list[Finding]:
    rules = rules_for(target)
    found: list[Finding] = []

    def add(rule: Rule, site: Site | None, detail: str) -> None:
        where = site.where if site is not None else "model"
        found.append(Finding(target, rule.feature, where, detail, _format(rule, site),
                             rule.fix, rule.cite, rule.verbatim))

    for rule in rules:
        if rule.scope == "model":
            detail = rule.applies(m.graph)
            if detail:
                add(rule, None, detail)
    for site in sites(m.graph):
        for rule in rules:
            if rule.scope in ("loop", "node"):
                detail = rule.applies(site)
                if detail:
                    add(rule, site, detail)
    return found


def fixes_for(model, target: str) -> list[str]:
    """The transforms `optimize(model, target=target)` applies: those the check's findings
    name, in the order they apply."""
    return check(model, target).fixes()
