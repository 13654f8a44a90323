"""`Finding` and `Report`: what a portability check found, printable and machine-readable."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .rules import WRITE


@dataclass(frozen=True)
class Finding:
    """One feature a target refuses: where (`where`, the node and the enclosing loops as the
    file names them), what (`feature`, `detail`), the target's words (`message`), the
    transform that removes it (`fix`: a transform name, ``"write"`` when writing the file
    with itergraph is enough, None when no transform does), and the source (`cite`)."""

    target: str
    feature: str
    where: str
    detail: str
    message: str
    fix: str | None
    cite: str
    verbatim: bool = True

    def text(self) -> str:
        fix = ("itergraph check --fix (writing the file is enough)" if self.fix == WRITE
               else f"transform '{self.fix}'{_summary(self.fix)}" if self.fix
               else "no transform removes it")
        return (f"{self.where}: {self.detail}\n"
                f"    {self.target} {'says' if self.verbatim else 'documents'}: {self.message}\n"
                f"    fix: {fix}\n"
                f"    source: {self.cite}")


def _summary(fix: str) -> str:
    from ..transforms import TRANSFORMS

    t = TRANSFORMS.get(fix.partition("=")[0])
    return f" ({t.summary})" if t is not None else ""


@dataclass
class Report:
    """The findings of one model against one target; `ok` when there are none."""

    target: str
    source: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def __bool__(self) -> bool:
        return self.ok

    def fixes(self) -> list[str]:
        """The transforms that remove the findings, each once, in the order they apply."""
        from .rules import FIX_ORDER

        names = {f.fix for f in self.findings if f.fix and f.fix != WRITE}
        return sorted(names, key=lambda n: FIX_ORDER.index(n) if n in FIX_ORDER
                      else len(FIX_ORDER))

    def unfixable(self) -> list[Finding]:
        return [f for f in self.findings if f.fix is None]

    def as_dict(self) -> dict:
        """The report as plain data (``itergraph check --json``)."""
        return {"target": self.target, "source": self.source, "ok": self.ok,
                "fixes": self.fixes(), "findings": [asdict(f) for f in self.findings]}

    def text(self) -> str:
        head = f"{self.source or 'model'}: "
        if self.ok:
            return head + f"passes {self.target} (no loop feature it refuses)"
        lines = [head + f"{len(self.findings)} finding(s) for {self.target}"]
        lines += [f.text() for f in self.findings]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()
