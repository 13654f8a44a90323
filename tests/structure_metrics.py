"""Measures issue 25's structure goals on the source tree (no import of itergraph needed).

Run ``python tests/structure_metrics.py [-v]`` for the table; ``test_structure_metrics.py``
holds each metric at its goal (or at today's ceiling where the goal is not reached yet).

The metrics are approximations read with ``ast``:

- domain spellings: the literal ``"ai.onnx"`` and the names ``STD`` / ``STANDARD_DOMAINS``
  outside ``frontends/``;
- version branches: comparisons (``<``, ``>=``, ``==`` ...) with a ``.version`` /
  ``.opset`` / ``opset_version`` operand in ``passes/`` and ``analysis/``;
- builders: classes named ``*Builder`` (not TensorRT's API façade ``IBuilder*``/``Builder``
  in ``tensorrt/builder.py``) outside the frontends' readers, that make IR nodes;
- constant evaluators: functions named like an evaluator of constants
  (``static_int``, ``const_value``, ``_const``, ``_static`` ...);
- retry ladders: ``try`` blocks in ``backends/`` whose handler runs or compiles again;
- foreign private reads: ``x._name`` loads where ``x`` is not ``self``/``cls`` and ``_name``
  is not defined (assigned or def'd) in the same module;
- package cycles: strongly connected components of the import graph between the packages
  ``itergraph.X`` (and ``itergraph.frontends.X``/``backends.X``), lazy imports included;
- Loop flags: the consumers missing a decision for a flag of ``ir.loop.Loop``.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path

# STRUCTURE_SRC: measure another checkout's src/ (the before of a change)
SRC = Path(os.environ.get("STRUCTURE_SRC") or Path(__file__).resolve().parents[1] / "src")
PKG = SRC / "itergraph"

CONST_EVAL_NAMES = re.compile(
    r"^_?(static_int|static_ints|static_value|const_value|const_int|const_ints|_const|const|"
    r"static|constant_value|eval_const|fold_const|evaluate_constant|fold|_fold)$")


def files(under: Path = PKG) -> list[Path]:
    return sorted(under.rglob("*.py"))


def rel(p: Path) -> str:
    return str(p.relative_to(SRC))


@cache
def _tree(p: Path) -> ast.AST:
    return ast.parse(p.read_text(), str(p))


def domain_spellings() -> list[str]:
    out = []
    for p in files():
        if rel(p).startswith("itergraph/frontends/"):
            continue
        for n in ast.walk(_tree(p)):
            if isinstance(n, ast.Constant) and n.value == "ai.onnx":
                out.append(f"{rel(p)}:{n.lineno}")
            elif isinstance(n, ast.Name) and n.id in ("STD", "STANDARD_DOMAINS"):
                out.append(f"{rel(p)}:{n.lineno}")
    return out


def _is_version(e: ast.AST) -> bool:
    if isinstance(e, ast.Attribute) and e.attr in ("version", "opset", "opset_version"):
        return True
    if isinstance(e, ast.Name) and e.id in ("version", "opset", "opset_version"):
        return True
    return False


def version_branches() -> list[str]:
    out = []
    for sub in ("passes", "analysis"):
        for p in files(PKG / sub):
            for n in ast.walk(_tree(p)):
                if isinstance(n, ast.Compare) and any(
                        _is_version(e) for e in [n.left, *n.comparators]) and not all(
                        isinstance(o, (ast.Is, ast.IsNot)) for o in n.ops):
                    out.append(f"{rel(p)}:{n.lineno}")
    return out


def pinned_versions() -> list[str]:
    """``version=<number>`` keywords in passes/ and analysis/ (nodes built at a pinned opset)."""
    out = []
    for sub in ("passes", "analysis"):
        for p in files(PKG / sub):
            for n in ast.walk(_tree(p)):
                if isinstance(n, ast.keyword) and n.arg == "version" and \
                        isinstance(n.value, ast.Constant) and isinstance(n.value.value, int):
                    out.append(f"{rel(p)}:{n.value.lineno}")
    return out


_BUILDER_HELPERS = {"node", "_node", "op", "_op", "add", "make_node", "_make_node"}


def builders() -> list[str]:
    """Node builders: classes named ``*Builder`` that make IR nodes, and the helpers named
    ``node``/``op``/``add``... that call ``Node(...)`` themselves (TensorRT's API façade
    ``tensorrt/builder.py`` is not one)."""
    out = []
    for p in files():
        if rel(p) == "itergraph/tensorrt/builder.py":
            continue
        for n in ast.walk(_tree(p)):
            makes = isinstance(n, (ast.ClassDef, ast.FunctionDef)) and any(
                isinstance(c, ast.Call) and getattr(c.func, "id", None) == "Node"
                for c in ast.walk(n))
            if isinstance(n, ast.ClassDef) and n.name.lstrip("_").endswith("Builder") and makes:
                out.append(f"{rel(p)}:{n.lineno}:{n.name}")
            elif isinstance(n, ast.FunctionDef) and n.name in _BUILDER_HELPERS and makes:
                out.append(f"{rel(p)}:{n.lineno}:{n.name}")
    return sorted({s.split(":")[0] for s in out})


_DELEGATES = {"static_value", "static_int", "fold", "const_value"}


def constant_evaluators() -> list[str]:
    """Modules outside the backends (which run the kernels themselves) with a function named
    like a constant evaluator that looks through producers or dispatches on op types, and
    does not hand the question to `ir.static_values` (``static_value``, ``fold`` ...)."""
    out = set()
    for p in files():
        if rel(p).startswith("itergraph/backends/"):
            continue
        for n in ast.walk(_tree(p)):
            if not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                    CONST_EVAL_NAMES.match(n.name)):
                continue
            reads = any(isinstance(a, ast.Attribute) and a.attr in ("producer", "op_type")
                        for a in ast.walk(n))
            delegates = any(isinstance(c, ast.Call) and getattr(c.func, "id", None) in
                            _DELEGATES for c in ast.walk(n))
            if reads and not (delegates and not rel(p).endswith("ir/static_values.py")):
                out.add(rel(p))
    return sorted(out)


_RETRY_CALLS = re.compile(r"(compile|run|kernel|unfused|unhoisted|rewritten|fallback)", re.I)


def retry_ladders() -> list[str]:
    out = []
    for p in files(PKG / "backends"):
        for n in ast.walk(_tree(p)):
            if not isinstance(n, ast.Try):
                continue
            for h in n.handlers:
                calls = [c for b in h.body for c in ast.walk(b) if isinstance(c, ast.Call)]
                names = [c.func.attr if isinstance(c.func, ast.Attribute) else
                         getattr(c.func, "id", "") for c in calls]
                if any(_RETRY_CALLS.search(x or "") for x in names) and \
                        not any(isinstance(b, ast.Raise) for b in h.body[:1]):
                    if any(re.search(r"unfused|unhoisted|rewritten|original", x or "", re.I)
                           for x in names):
                        out.append(f"{rel(p)}:{h.lineno}")
    return out


def _defined_names(tree: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            out.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).split(".")[0])
    return out


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def foreign_private_reads() -> list[str]:
    out = []
    for p in files():
        tree = _tree(p)
        own = _defined_names(tree)
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Attribute) and _private(n.attr)):
                continue
            v = n.value
            if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                continue
            if n.attr in own:
                continue
            out.append(f"{rel(p)}:{n.lineno}:{n.attr}")
    return out


def private_imports() -> list[str]:
    """``from itergraph.x import _name`` of another module (a foreign private read too)."""
    out = []
    for p in files():
        for n in ast.walk(_tree(p)):
            if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith(
                    "itergraph")):
                for a in n.names:
                    if _private(a.name):
                        out.append(f"{rel(p)}:{n.lineno}:{a.name}")
    return out


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_edges() -> dict[str, set[str]]:
    mods = {_module_name(p): p for p in files()}
    edges: dict[str, set[str]] = {}
    for mod, p in mods.items():
        package = mod if p.name == "__init__.py" else mod.rpartition(".")[0]
        targets = set()
        for n in ast.walk(_tree(p)):
            if isinstance(n, ast.Import):
                targets.update(a.name for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base = package.split(".")
                    base = base[: len(base) - n.level + 1]
                    t = ".".join([*base, n.module] if n.module else base)
                else:
                    t = n.module or ""
                for a in n.names:
                    targets.add(f"{t}.{a.name}" if f"{t}.{a.name}" in mods else t)
        edges[mod] = {t for t in targets if t in mods}
    return edges


def _package(mod: str) -> str:
    parts = mod.split(".")
    if len(parts) > 2 and parts[1] in ("frontends", "backends"):
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def sccs(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one node (also used by
    `test_layers.py`)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:  # the limit is the process's: given back, so later tests see the usual one
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def package_cycles(package=_package) -> list[str]:
    edges: dict[str, set[str]] = {}
    for m, ts in _import_edges().items():
        pm = package(m)
        edges.setdefault(pm, set()).update(package(t) for t in ts if package(t) != pm
                                           and not pm.startswith(package(t) + "."))
    return [" <-> ".join(sorted(c)) for c in sccs(edges)]


def subpackage_cycles() -> list[str]:
    """Cycles between any two packages (folders with an __init__), at every depth."""
    pkgs = {_module_name(p) for p in files() if p.name == "__init__.py"}

    def package(mod: str) -> str:
        while mod not in pkgs:
            mod = mod.rpartition(".")[0]
        return mod

    return package_cycles(package)


def loop_flag_gaps() -> list[str]:
    """Consumers (modules declaring HANDLES_LOOP_FLAGS) that do not decide every flag of
    Loop's signature, read statically."""
    loop = _tree(PKG / "ir" / "loop.py")
    flags: set[str] = set()
    for n in ast.walk(loop):
        if isinstance(n, ast.ClassDef) and n.name == "Loop":
            for f in n.body:
                if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                    flags = {a.arg for a in f.args.kwonlyargs
                             if "Value" not in ast.unparse(a.annotation or ast.Constant(""))
                             and a.arg not in ("name", "origin", "origin_attrs")}
    out = []
    for p in files():
        text = p.read_text()
        if "HANDLES_LOOP_FLAGS =" not in text:
            continue
        declared: set[str] = set()
        for n in ast.walk(_tree(p)):
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(isinstance(t, ast.Name) and t.id in (
                        "HANDLES_LOOP_FLAGS", "IGNORES_LOOP_FLAGS") for t in targets):
                    declared |= {c.value for c in ast.walk(n.value)
                                 if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        missing = flags - declared
        if missing:
            out.append(f"{rel(p)}: {sorted(missing)}")
    if not flags:
        out.append("ir/loop.py: no flags found")
    return out


METRICS = {
    "domain spellings outside frontends": domain_spellings,
    "version branches in passes/analysis": version_branches,
    "pinned version= in passes/analysis": pinned_versions,
    "node builders (modules)": builders,
    "constant evaluators (modules)": constant_evaluators,
    "retry ladders": retry_ladders,
    "foreign private reads (attribute)": foreign_private_reads,
    "private names imported from other modules": private_imports,
    "package import cycles (itergraph.X)": package_cycles,
    "package import cycles (every package)": subpackage_cycles,
    "Loop flag gaps": loop_flag_gaps,
}


def main(argv: list[str]) -> None:
    verbose = "-v" in argv
    for name, f in METRICS.items():
        items = f()
        print(f"{len(items):5d}  {name}")
        if verbose:
            if name.startswith("foreign") or name.startswith("private"):
                by = Counter(i.split(":")[0] for i in items)
                for k, v in by.most_common(40):
                    print(f"         {v:4d} {k}")
            else:
                for i in items[:60]:
                    print("         " + i)


if __name__ == "__main__":
    main(sys.argv[1:])
