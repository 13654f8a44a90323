"""Shared test helpers: building small ONNX models and running them on ORT and itergraph."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# Every pass pipeline verifies the graph after each pass (`itergraph.passes.pipelines`).
os.environ["ITERGRAPH_VERIFY_PASSES"] = "1"
# Tests that name no backend check the NumPy reference engine; tests of the default engine
# ("auto") remove this (tests/core/test_sessions.py).
os.environ["ITERGRAPH_BACKEND"] = "numpy"
# Most of the suite's JAX time is XLA compiling many small programs once each: LLVM's
# optimisation level 0 compiles them about a third faster. XLA's own HLO passes (fusion,
# layout, simplification) still run, and float semantics are the same at every level, so
# what the tests check does not change; the benches and users keep XLA's default level.
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_backend_optimization_level=0").strip()
# About a quarter of the programs the suite compiles are compiled again by another test (the
# same node in the ONNX node suite and in OpenVINO's conversion of it, a corpus model in its
# stages and in the transforms' checks). One XLA compilation cache, made empty for this run
# and shared by the test workers and the processes they start, compiles each program once.
# The process that makes it (pytest itself, before it starts any worker) removes it at exit;
# a cache the user names in ITERGRAPH_JAX_CACHE_DIR is used as it is.
if "ITERGRAPH_JAX_CACHE_DIR" not in os.environ:
    _xla_cache = tempfile.mkdtemp(prefix="itergraph-tests-xla-")
    os.environ["ITERGRAPH_JAX_CACHE_DIR"] = _xla_cache
    atexit.register(shutil.rmtree, _xla_cache, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    """After a run that included the real-world corpus, list the stages it skips and why
    (``tests/realworld/skips.json``; each must still end in `UnsupportedError`)."""
    reports = [r for rs in terminalreporter.stats.values() for r in rs
               if "realworld/" in getattr(r, "nodeid", "")]
    if not reports:
        return
    skips_file = Path(__file__).parent / "realworld" / "skips.json"
    skips = json.loads(skips_file.read_text()) if skips_file.exists() else {}
    count = sum(len(stages) for stages in skips.values())
    terminalreporter.section(f"real-world corpus: {count} stage(s) refused as expected")
    for entry, stages in sorted(skips.items()):
        for stage, reason in sorted(stages.items()):
            terminalreporter.write_line(f"{entry}:{stage}: {reason}")
