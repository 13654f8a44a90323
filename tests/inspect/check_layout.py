"""Check the view page's layout on every real-world corpus model with a loop (run by hand).

    PYTHONPATH=src python tests/inspect/check_layout.py [--every N] [--jobs 2] [OUT_DIR]

Writes each model's page and opens it in headless Chromium with ``?check=1``; prints the
models whose page has overlapping or cut text, and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import queue
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "realworld")]

from browser import layout_check  # noqa: E402

import itergraph as ig  # noqa: E402
from itergraph.inspect import view  # noqa: E402
from itergraph.ir import Loop  # noqa: E402


def loadable_entries() -> list:
    """The corpus entries whose load is not refused (`skips.json`: invalid files, which the
    corpus tests assert are refused cleanly)."""
    from corpus import entries, skip_reason

    return [e for e in entries() if "ModelError" not in (skip_reason(e, "numpy") or "")]


def corpus_models() -> list[tuple[str, Path]]:
    """(id, file) of every corpus entry whose graph holds a loop, OpenVINO IR included
    (files itergraph refuses to load, as their peers do, are not drawn)."""
    out = []
    for e in loadable_entries():
        graph = ig.load(str(e.file)).graph
        if any(isinstance(n, Loop) for _, n in graph.walk()):
            out.append((e.id, e.file))
    return out


def check(models: list[tuple[str, Path]], out_dir: Path, jobs: int = 2):
    """[(id, texts measured, problems)] for `models`, `jobs` Chromiums at a time."""
    profiles = queue.SimpleQueue()  # one Chromium profile per running check
    for j in range(jobs):
        profiles.put(out_dir / f"profile-{j}")

    def one(k_item):
        k, (ident, file) = k_item
        page = out_dir / f"{k:04d}.html"
        view.write(str(file), page)
        profile = profiles.get()
        try:
            n, problems = layout_check(page, profile)
        finally:
            profiles.put(profile)
        return ident, n, problems

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, enumerate(models)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--every", type=int, default=1, help="check every Nth model only")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="view-layout-"))
    out.mkdir(parents=True, exist_ok=True)
    models = corpus_models()[::a.every]
    bad = 0
    for ident, n, problems in check(models, out, a.jobs):
        if problems:
            bad += 1
            print(f"{ident}: {len(problems)} of {n} texts", *problems[:10], sep="\n    ")
    print(f"{len(models)} models checked, {bad} with overlapping or cut text; pages in {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
