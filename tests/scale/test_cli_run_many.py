"""``itergraph run-many`` on one machine: results equal single runs, a killed run restarts
without losing or repeating finished work, and nothing is written outside --output-dir."""

from __future__ import annotations

import os

import numpy as np
import pytest
from killrestart import kill_and_restart, make_job

import itergraph as ig
from itergraph.cli import main


def test_killed_midway_and_restarted(tmp_path):
    kill_and_restart(tmp_path, [], n=120, steps=300, at_least=6, timeout=120)


def test_results_are_one_file_per_input_named_safely(tmp_path, capsys):
    model_path, in_dir, feeds = make_job(tmp_path, 3, 4)
    (in_dir / "in001.npz").rename(in_dir / "..odd name.npz")
    out = tmp_path / "out"
    assert main(["run-many", str(model_path), "--inputs", str(in_dir), "--output-dir",
                 str(out), "--backend", "jax"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["_..odd_name.npz", "in000.npz",
                                                       "in002.npz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "lstm.onnx", "out"]
    m = ig.load(model_path)
    with np.load(out / "in002.npz") as z:
        np.testing.assert_allclose(z["Y"], m.run(feeds[2])["Y"], rtol=1e-5, atol=1e-6)
    assert "3 inputs: 0 already done, 3 computed" in capsys.readouterr().err
    assert main(["run-many", str(model_path), "--inputs", str(in_dir), "--output-dir",
                 str(out)]) == 0
    assert "3 already done, 0 computed" in capsys.readouterr().err


def test_a_link_where_a_result_goes_is_refused(tmp_path, capsys):
    model_path, in_dir, _ = make_job(tmp_path, 2, 4)
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "elsewhere.npz"
    os.symlink(target, out / "in000.npz")
    assert main(["run-many", str(model_path), "--inputs", str(in_dir), "--output-dir",
                 str(out)]) == 2
    assert "symbolic link" in capsys.readouterr().err and not target.exists()


@pytest.mark.parametrize("bad", ["--inputs-missing", "--batch-size-zero", "--workers-zero"])
def test_bad_arguments_are_the_users_error(tmp_path, capsys, bad):
    model_path, in_dir, _ = make_job(tmp_path, 1, 4)
    args = ["run-many", str(model_path), "--inputs", str(in_dir), "--output-dir",
            str(tmp_path / "out")]
    if bad == "--inputs-missing":
        args[3] = str(tmp_path / "nope")
    elif bad == "--batch-size-zero":
        args += ["--batch-size", "0"]
    else:
        args += ["--workers", "0"]
    assert main(args) == 2
    assert "itergraph: error:" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["truncated", "empty", "not_npz"])
def test_a_damaged_result_is_computed_again(tmp_path, capsys, damage):
    """A result file cut short (a full disk, an interrupted copy), empty or not an archive is
    not taken as finished: the restart computes that input again."""
    model_path, in_dir, feeds = make_job(tmp_path, 3, 4)
    out = tmp_path / "out"
    args = ["run-many", str(model_path), "--inputs", str(in_dir), "--output-dir", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    victim = out / "in001.npz"
    data = victim.read_bytes()
    victim.write_bytes({"truncated": data[: len(data) // 2], "empty": b"",
                        "not_npz": b"not an archive"}[damage])
    assert main(args) == 0
    assert "3 inputs: 2 already done, 1 computed" in capsys.readouterr().err
    with np.load(victim) as z:
        np.testing.assert_allclose(z["Y"], ig.load(model_path).run(feeds[1])["Y"], rtol=1e-5,
                                   atol=1e-6)


def test_feed_files_that_do_not_name_the_inputs_are_named_before_any_run(tmp_path, capsys):
    model_path, in_dir, feeds = make_job(tmp_path, 3, 4)
    np.savez(in_dir / "in001.npz", wrong=np.zeros(2, np.float32))
    out = tmp_path / "out"
    assert main(["run-many", str(model_path), "--inputs", str(in_dir), "--output-dir",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "in001.npz': unknown 'wrong'; missing" in err and "nothing was run" in err
    assert not list(out.iterdir())
