"""`bench/generation.py` in its quick mode prints rows (the ORT contrib-op form and the
standard Loop) whose engines give ONNX Runtime's tokens. Tiny budgets only: this checks the
table, not speed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import loops  # noqa: E402

# by path: `generation` would also name the folder tests/generation
_spec = importlib.util.spec_from_file_location("bench_generation", BENCH / "generation.py")
generation = sys.modules["bench_generation"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generation)


@pytest.mark.parametrize("row", ["greedy-ort", "greedy-loop"])
def test_bench_prints_a_checked_row(row, capsys, monkeypatch):
    monkeypatch.setattr(generation, "configure_threads", lambda n: None)  # keep this env
    monkeypatch.setattr(loops, "configure_threads", lambda n: None)
    generation.main(["--quick", "--only", row, "--engines", "numpy,ort",
                     "--new-tokens", "4", "--budget", "0.01", "--rounds", "1", "--markdown"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(f"| {row} |")]
    assert len(rows) == 1, out
    assert "tok/s" in rows[0] and "MISMATCH" not in rows[0] and "error" not in rows[0]
