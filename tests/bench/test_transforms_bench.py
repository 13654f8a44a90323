"""`bench/transforms.py` times correct programs and lists every (model, transform) pair.

Small budgets only: this checks the table, not speed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import loops  # noqa: E402

# by path: `transforms` would also name the folder tests/transforms
_spec = importlib.util.spec_from_file_location("bench_transforms", BENCH / "transforms.py")
transforms = sys.modules["bench_transforms"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(transforms)


def test_bench_prints_every_pair_checked(capsys, monkeypatch):
    monkeypatch.setattr(loops, "configure_threads", lambda n: None)  # keep this process's env
    transforms.main(["--quick", "--models", "count-4,scan-32", "--budget", "0.01",
                     "--transforms", "unroll,scan-to-loop,no-such-transform", "--markdown"])
    out = capsys.readouterr().out
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): line
            for line in out.splitlines() if line.startswith("| count-4") or
            line.startswith("| scan-32")}
    assert len(rows) == 6  # 2 models x 3 transforms, none left out
    assert "n/a (not registered)" in rows[("count-4", "no-such-transform")]
    assert "unchanged" in rows[("count-4", "scan-to-loop")]
    for key in (("count-4", "unroll"), ("scan-32", "unroll"), ("scan-32", "scan-to-loop")):
        row = rows[key]
        assert "MISMATCH" not in row and "error" not in row and "rejected" not in row, row
        assert "x |" in row  # a speedup was computed
    assert "Loop -> none" in rows[("count-4", "unroll")]
    assert "Scan -> Loop" in rows[("scan-32", "scan-to-loop")]
