"""Kill ``itergraph run-many`` midway, restart it, and check the results: all there, equal
to single runs, and the finished files of the first run untouched by the second."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import scale_models as M

import itergraph as ig

SRC = Path(ig.__file__).resolve().parents[1]


def make_job(tmp: Path, n: int, steps: int) -> tuple[Path, Path, list[dict]]:
    model_path, in_dir = tmp / "lstm.onnx", tmp / "in"
    onnx.save(M.lstm_scan(), model_path)
    in_dir.mkdir()
    feeds = M.lstm_feeds(n, lengths=(steps, steps - 1))
    for i, f in enumerate(feeds):
        np.savez(in_dir / f"in{i:03d}.npz", **f)
    return model_path, in_dir, feeds


def _cmd(model_path, in_dir, out_dir, extra) -> list[str]:
    return [sys.executable, "-m", "itergraph.cli", "run-many", str(model_path), "--inputs",
            str(in_dir), "--output-dir", str(out_dir), "--batch-size", "2", *extra]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC),
                                                        os.environ.get("PYTHONPATH", "")]))


def _results(out_dir: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in out_dir.glob("*.npz") if not p.name.startswith(".")}


def _settled(out_dir: Path) -> dict[str, tuple[int, int]]:
    """The results once no more appear: the workers of a killed Ray driver end soon after
    it, and may finish the file they are writing."""
    last = _results(out_dir)
    for _ in range(30):
        time.sleep(0.5)
        now = _results(out_dir)
        if now == last:
            return now
        last = now
    raise AssertionError("results still appear 15 s after the kill")


def kill_and_restart(tmp: Path, extra: list[str], n: int, steps: int, at_least: int,
                     timeout: float) -> None:
    model_path, in_dir, feeds = make_job(tmp, n, steps)
    out_dir = tmp / "out"
    proc = subprocess.Popen(_cmd(model_path, in_dir, out_dir, extra), env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if out_dir.is_dir() and len(_results(out_dir)) >= at_least:
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    first = _settled(out_dir)
    assert at_least <= len(first) < n, f"not killed midway: {len(first)} of {n} results"
    r = subprocess.run(_cmd(model_path, in_dir, out_dir, extra), env=_env(),
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    done, computed = map(int, re.search(r"(\d+) already done, (\d+) computed",
                                        r.stderr).groups())
    assert (done, computed) == (len(first), n - len(first))  # nothing twice, nothing missing
    after = _results(out_dir)
    assert sorted(after) == [f"in{i:03d}.npz" for i in range(n)]
    assert {k: after[k] for k in first} == first  # finished files were not rewritten
    assert not [p for p in out_dir.iterdir() if p.name.endswith(".part")]
    m = ig.load(model_path)
    for i, f in enumerate(feeds):
        want = m.run(f)
        with np.load(out_dir / f"in{i:03d}.npz") as got:
            assert sorted(got.files) == sorted(want)
            for k in want:
                np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)
