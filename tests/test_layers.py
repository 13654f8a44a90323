"""The layers of DESIGN.md, enforced: data flows format -> IR -> backend, never back up.

Every ``import`` statement of the package counts, module-level or inside a function.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import itergraph
from structure_metrics import sccs as _sccs

PKG = "itergraph"
SRC = Path(itergraph.__file__).resolve().parents[1]

# Cycles that are the natural shape of the code, not accidents, would be listed here, one
# strongly connected component per entry. There are none: body importers receive the graph
# importer as an argument instead of importing it.
ALLOWED_CYCLES: list[frozenset[str]] = []
# What ir/ may import besides itself: the error classes (a leaf) and numpy's element types.
IR_MAY_IMPORT = {"numpy", "ml_dtypes", f"{PKG}.errors"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(imported module, names imported from it) for every import statement in `path`."""
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.append((target, [a.name for a in node.names]))
    return out


def _graph() -> dict[str, list[tuple[str, list[str]]]]:
    return {_module_name(p): _imports(p) for p in sorted((SRC / PKG).rglob("*.py"))}


GRAPH = _graph()
MODULES = set(GRAPH)


def _resolve(target: str, names: list[str]) -> list[str]:
    """The package modules an import statement loads (a ``from pkg import mod`` loads mod)."""
    out = []
    for n in names:
        if f"{target}.{n}" in MODULES:
            out.append(f"{target}.{n}")
    if target in MODULES and len(out) < max(len(names), 1):
        out.append(target)
    return out


def _edges() -> dict[str, set[str]]:
    return {m: {t for target, names in imps for t in _resolve(target, names) if t != m}
            for m, imps in GRAPH.items()}


def _layer(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:3]) if len(parts) > 2 and parts[1] in ("frontends", "backends") \
        else ".".join(parts[:2])


def test_ir_imports_only_stdlib_numpy_and_itself():
    bad = []
    for mod, imps in GRAPH.items():
        if not mod.startswith(f"{PKG}.ir"):
            continue
        for target, _ in imps:
            top = target.split(".")[0]
            if target.startswith(f"{PKG}.ir") or target in IR_MAY_IMPORT or top in IR_MAY_IMPORT:
                continue
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            bad.append(f"{mod} imports {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("src,dst", [("backends", "frontends"), ("frontends", "backends"),
                                     ("ir", "frontends"), ("ir", "backends"),
                                     ("passes", "frontends"), ("passes", "backends"),
                                     ("semantics", "frontends"), ("semantics", "backends")])
def test_no_upward_or_sideways_arrow(src, dst):
    bad = [f"{m} imports {t}" for m, ts in _edges().items() if m.startswith(f"{PKG}.{src}.")
           or m == f"{PKG}.{src}" for t in ts if t.startswith(f"{PKG}.{dst}")]
    assert not bad, "\n".join(bad)


def test_no_backend_imports_another_backends_private_names():
    bad = []
    for mod, imps in GRAPH.items():
        if not mod.startswith(f"{PKG}.backends."):
            continue
        own = _layer(mod)
        for target, names in imps:
            if not target.startswith(f"{PKG}.backends.") or _layer(target) == own:
                continue
            if _layer(target) == f"{PKG}.backends.common":
                continue
            private = [n for n in names if n.startswith("_")]
            private_mod = any(p.startswith("_") and p != "__init__" for p in target.split("."))
            if private or private_mod:
                bad.append(f"{mod} imports {target}: {names}")
    assert not bad, "\n".join(bad)


def test_no_accidental_import_cycle():
    # A package's __init__ re-exporting its modules is not a cycle of the code.
    edges = {m: {t for t in ts if not (m.startswith(t + ".") and t in MODULES)}
             for m, ts in _edges().items()}
    bad = [sorted(c) for c in _sccs(edges) if frozenset(c) not in ALLOWED_CYCLES]
    assert not bad, "\n".join(" <-> ".join(c) for c in bad)


def _package(mod: str) -> str:
    """The top-level package or module of the package that `mod` belongs to:
    ``itergraph.inspect.compare`` -> ``itergraph.inspect``, ``itergraph.model`` itself."""
    return ".".join(mod.split(".")[:2])


def test_no_import_cycle_between_packages():
    # Lazy imports inside functions count: a package that calls back up into the one that
    # imports it is a cycle however late the import runs.
    edges: dict[str, set[str]] = {}
    for m, ts in _edges().items():
        edges.setdefault(_package(m), set()).update(
            _package(t) for t in ts if _package(t) != _package(m))
    bad = [sorted(c) for c in _sccs(edges)]
    assert not bad, "\n".join(" <-> ".join(c) for c in bad)


def test_tensorrt_emulator_is_a_package_beside_the_rest():
    # itergraph.tensorrt builds on the IR only; the rest of itergraph reaches it through
    # `itergraph.network` (the user's import) and `Network.to_graph()` (what `ig.load` calls).
    emu = f"{PKG}.tensorrt"
    may_read = (emu, f"{PKG}.ir", f"{PKG}.errors")
    bad = [f"{m} imports {t}" for m, ts in _edges().items() if m.startswith(emu)
           for t in ts if not any(t == p or t.startswith(p + ".") for p in may_read)]
    bad += [f"{m} imports {t}" for m, ts in _edges().items()
            if not m.startswith(emu) and m != f"{PKG}.network"
            for t in ts if t == emu or t.startswith(emu + ".")]
    assert not bad, "\n".join(bad)
