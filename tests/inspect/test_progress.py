"""Progress of the outermost loops: on stderr when it is a terminal (or forced), silent
otherwise, with the right step counts, on NumPy per iteration and on JAX per buffer segment;
the outputs never change."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from loop_models import counting_while, nested, nested_feeds, nested_oracle

import itergraph as ig
from itergraph import cli
from itergraph.backends.common.progress import reporting
from itergraph.backends.numpy import CompileContext
from itergraph.backends.numpy.kernels.loop.driver import driver_source
from itergraph.backends.numpy.kernels.loop.layout import LoopLayout
from itergraph.inspect.progress import Reporter, wanted
from itergraph.ir import Loop

SRC = Path(ig.__file__).resolve().parents[1]


class Recorder:
    def __init__(self):
        self.calls: list[tuple[str, int, bool]] = []

    def __call__(self, loop, steps, done=False):
        self.calls.append((loop, steps, done))


@pytest.fixture
def files(tmp_path):
    onnx.save(nested(), str(tmp_path / "nested.onnx"))
    args = []
    for k, v in nested_feeds(7, 3).items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", f"{k}={tmp_path / f'{k}.npy'}"]
    return tmp_path / "nested.onnx", args


def test_numpy_reports_the_outermost_loops_only_and_ends_with_their_counts():
    m = ig.load(nested())
    feeds = nested_feeds(7, 3)
    rec = Recorder()
    got = m.run(feeds, progress=rec)
    assert {c[0] for c in rec.calls} == {"outer", "scan"}  # 'inner' never reports
    for loop in ("outer", "scan"):
        mine = [c for c in rec.calls if c[0] == loop]
        steps = [c[1] for c in mine]
        assert steps == sorted(steps) and steps[0] == 1 and mine[-1] == (loop, 7, True)
        assert all(not c[2] for c in mine[:-1])
    plain = m.run(feeds)
    for k, v in nested_oracle(feeds).items():
        np.testing.assert_allclose(got[k], v, rtol=1e-6)
        np.testing.assert_array_equal(got[k], plain[k])


def test_a_plan_without_progress_has_no_call_in_its_loop():
    loop = next(n for _, n in ig.load(nested()).graph.walk() if isinstance(n, Loop))
    lay = LoopLayout(loop, CompileContext(optimize=False))
    assert "_tick" not in driver_source(lay, None)
    assert "_tick(k + 1)" in driver_source(lay, None, tick=True)


def test_a_tight_loop_is_reported_about_every_50_ms_not_every_step():
    """A 20,000-step loop of a microsecond body: the driver calls the reporter a few times
    (its due step moves by about 50 ms worth of steps), not once per step."""
    m = ig.load(counting_while(20_000))
    feeds = {"c0": np.array(True), "s0": np.array(0, np.float32), "lim": np.array(20_000)}
    rec = Recorder()
    m.run(feeds, backend="numpy", progress=rec)
    assert rec.calls[-1][1:] == (20_000, True)
    assert len(rec.calls) < 1_000


def test_jax_reports_each_buffer_segment():
    from itergraph.backends import jax as jb

    if not jb.available():
        pytest.fail("the jax backend is part of the test setup (pip install -e .[jax])")
    m = ig.load(counting_while(300))
    feeds = {"c0": np.array(True), "s0": np.array(0, np.float32), "lim": np.array(300)}
    cg = jb.compile_graph(m.graph, initial_capacity=16)
    rec = Recorder()
    with reporting(rec):
        got = cg.run(feeds)
    # buffers of 16, 32, 64, 128, 256 iterations: cumulative 16, 48, 112, 240, then 300 done
    assert rec.calls == [("counter", 16, False), ("counter", 48, False),
                         ("counter", 112, False), ("counter", 240, False),
                         ("counter", 300, True)]
    assert float(got["s"]) == sum(range(300))
    np.testing.assert_array_equal(got["seq"], np.arange(300, dtype=np.float32))
    silent = Recorder()
    cg.run(feeds)  # nothing installed: nobody hears
    assert silent.calls == []


def test_jax_whole_compiled_loops_say_they_finished():
    """'outer' (a condition and a scan output) is driven in segments and counts its steps;
    'scan' is compiled whole into one XLA program and only says it finished."""
    m = ig.load(nested())
    rec = Recorder()
    got = m.run(nested_feeds(4, 2), backend="jax", progress=rec)
    assert rec.calls == [("outer", 4, True), ("scan", -1, True)]
    for k, v in nested_oracle(nested_feeds(4, 2)).items():
        np.testing.assert_allclose(got[k], v, rtol=1e-5)


def test_reporter_throttles_and_computes_the_rate():
    t = [0.0]

    def clock():
        return t[0]

    out = io.StringIO()
    r = Reporter(out, interval=0.5, clock=clock)
    for k in range(1, 101):
        t[0] = k * 0.01  # 100 steps/s
        r("L", k)
    r("L", 100, True)
    lines = out.getvalue().splitlines()
    # one line per half second (at steps 50 and 100), then the final one, as tqdm writes them
    assert lines == ["itergraph: loop 'L': 50step [00:00, 100.00step/s]",
                     "itergraph: loop 'L': 100step [00:01, 100.00step/s]",
                     "itergraph: loop 'L' done: 100step [00:01, 100.00step/s]"]
    t[0] = 1.5
    r("M", 10, True)  # the next loop's clock starts when the last one stopped
    assert out.getvalue().splitlines()[-1] == \
        "itergraph: loop 'M' done: 10step [00:00, 20.00step/s]"


def test_reporter_with_a_total_shows_percentage_bar_and_time_left():
    t = [0.0]
    out = io.StringIO()
    r = Reporter(out, interval=0.5, clock=lambda: t[0])
    for k in range(1, 201):
        t[0] = k * 0.01
        r("L", k, total=400)
    first = out.getvalue().splitlines()[0]
    assert first.startswith("itergraph: loop 'L':  12%|")
    assert first.endswith("| 50/400 [00:00<00:03, 100.00step/s]")
    t[0] = 4.0
    r("L", 400, True, total=400)  # at 4 s
    assert out.getvalue().splitlines()[-1].endswith("| 400/400 [00:04<00:00, 100.00step/s]")


class TotalRecorder(Recorder):
    def __call__(self, loop, steps, done=False, total=None):
        self.calls.append((loop, steps, done, total))


def test_callbacks_that_take_total_hear_the_count_known_at_the_start():
    """A counted loop's total is its count; a loop a condition may stop has none. A
    three-argument callback (above) is called without it."""
    rec = TotalRecorder()
    ig.load(nested()).run(nested_feeds(7, 3), progress=rec)
    assert {(c[0], c[3]) for c in rec.calls} == {("outer", 7), ("scan", 7)}
    rec = TotalRecorder()
    m = ig.load(counting_while(300))
    m.run({"c0": np.array(True), "s0": np.array(0, np.float32), "lim": np.array(300)},
          backend="numpy", progress=rec)
    assert rec.calls[-1] == ("counter", 300, True, None)


def test_cli_progress_forced_on_and_off(files, capsys):
    model, args = files
    assert cli.main(["run", str(model), *args, "--progress"]) == 0
    on = capsys.readouterr()
    assert "itergraph: loop 'outer' done: 100%|" in on.err and "| 7/7 [" in on.err
    assert "itergraph: loop 'scan' done: 100%|" in on.err
    assert "'inner'" not in on.err
    assert cli.main(["run", str(model), *args, "--no-progress"]) == 0
    off = capsys.readouterr()
    assert off.err == "" and off.out == on.out
    assert cli.main(["run", str(model), *args]) == 0  # stderr is not a terminal here
    assert capsys.readouterr().err == ""
    assert not wanted(None, io.StringIO()) and wanted(True, io.StringIO())


def _run_with_stderr_on_a_terminal(argv: list[str]) -> tuple[str, str]:
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen([sys.executable, "-c",
                             "import sys; from itergraph.cli import main; sys.exit(main())",
                             *argv], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read()
    assert proc.wait(timeout=120) == 0, err
    os.close(master)
    return out.decode(), err.decode()


def test_progress_shows_on_a_terminal_by_default(files):
    model, args = files
    out, err = _run_with_stderr_on_a_terminal(["run", str(model), *args])
    assert "\ritergraph: loop 'outer' done: 100%|" in err
    assert "\ritergraph: loop 'scan' done: 100%|" in err
    quiet = subprocess.run([sys.executable, "-c",
                            "import sys; from itergraph.cli import main; sys.exit(main())",
                            "run", str(model), *args], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout.replace("\r\n", "\n") == out.replace("\r\n", "\n")


def test_the_time_before_a_loop_starts_is_not_counted_as_the_loops():
    """Loading and preparing the model take 4 s before the loop's first report: the rate and
    the time left come from the loop alone (no "226:10:50" left after one slow step)."""
    t = [0.0]
    out = io.StringIO()
    r = Reporter(out, interval=0.5, clock=lambda: t[0])
    t[0] = 4.0
    r("L", 5, total=1000)  # its first report, 50 ms into the loop at 100 steps/s
    for k in range(6, 101):
        t[0] = 4.0 + (k - 5) * 0.01
        r("L", k, total=1000)
    lines = out.getvalue().splitlines()
    assert lines and all("100.00step/s" in ln or "99." in ln or "100." in ln for ln in lines)
    assert lines[0].endswith("[00:00<00:09, 100.00step/s]"), lines[0]
