"""The conventions of the ``itergraph`` command a user of Polygraphy, ONNX Runtime and
OpenVINO's tools expects: ``python -m itergraph``, help for every option with its default,
exit status 2 for usage errors and 1 for failures at run time, inputs made up with the shapes
the user gave, and no traceback for a malformed option."""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.cli import _parser
from itergraph.cli import main as cli
from onnx_builders import I64, B, F, body, const, model, vi

SRC = str(Path(ig.__file__).parent.parent)


def loop_model(x_shape=(2,)):
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"]),
              h.make_node("Identity", ["x_in"], ["y"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, list(x_shape))],
             [vi("c_out", B, []), vi("x_out", F, list(x_shape)), vi("y", F, list(x_shape))],
             [const("one", 1.0, np.float32)])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x", "ys"], body=b, name="count")],
                 [vi("M", I64, []), vi("x0", F, list(x_shape))],
                 [vi("x", F, list(x_shape)), vi("ys", F, [None, *x_shape])])


def two_inputs_model():
    """y = a + b, both [n, 3]: one symbol shared by two inputs."""
    return model([h.make_node("Add", ["a", "b"], ["y"])],
                 [vi("a", F, ["n", 3]), vi("b", F, ["n", 3])], [vi("y", F, ["n", 3])])


def test_python_dash_m_itergraph_runs_the_command():
    r = subprocess.run([sys.executable, "-m", "itergraph", "--version"], capture_output=True,
                       text=True, env={"PYTHONPATH": SRC, "PATH": ""}, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"itergraph {ig.__version__}"


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_argument_has_help_and_every_default_is_shown():
    """Each positional and option of each command says what it is; an option with a default
    other than off says it in its help, as ``(default: ...)``."""
    subs = _subparsers(_parser())
    assert {"run", "info", "explain", "convert", "optimize", "trace", "compare", "run-many",
            "check", "view", "profile"} <= set(subs)
    for name, p in subs.items():
        assert p.description, name
        for a in p._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            what = f"{name} {a.option_strings or a.dest}"
            assert a.help and len(a.help) > 5, what
            if a.option_strings and a.default not in (None, False, [], argparse.SUPPRESS):
                assert "default" in a.help and str(a.default) in a.help, what
            if a.option_strings and a.required:
                assert "required" in a.help, what


def test_exit_status_is_2_for_usage_errors_and_1_for_run_time_failures(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    np.save(tmp_path / "x0.npy", np.zeros(2, np.float32))
    np.save(tmp_path / "M.npy", np.array(1000))
    base = ["run", str(path), "--input", f"x0={tmp_path / 'x0.npy'}"]
    assert cli(base + ["--input", f"M={tmp_path / 'M.npy'}"]) == 0
    # usage: a wrong input name, a missing file, a malformed option, argparse's own
    assert cli(base + ["--input", f"N={tmp_path / 'M.npy'}"]) == 2
    assert cli(base + ["--input", f"M={tmp_path / 'nope.npy'}"]) == 2
    with pytest.raises(SystemExit) as bad:
        cli(["run", str(path), "--bogus"])
    assert bad.value.code == 2
    capsys.readouterr()
    # run time: the loop runs past the limit; a model that cannot be parsed
    assert cli(base + ["--input", f"M={tmp_path / 'M.npy'}", "--max-iterations", "10"]) == 1
    assert "itergraph: error:" in capsys.readouterr().err
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a protobuf")
    assert cli(["info", str(garbage)]) == 1
    assert "itergraph: error:" in capsys.readouterr().err


@pytest.mark.parametrize("value_range", ["M:[1]", "M:[5,1]", "M:[a,b]"])
def test_a_malformed_value_range_is_a_usage_error_not_a_traceback(tmp_path, capsys,
                                                                   value_range):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    assert cli(["run", str(path), "--value-range", value_range]) == 2
    err = capsys.readouterr().err
    assert err.startswith("itergraph: error:") and "M" in err and "Traceback" not in err


def test_an_unknown_input_name_is_said_before_anything_is_made_up(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    np.save(tmp_path / "x.npy", np.zeros(2, np.float32))
    assert cli(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}"]) == 2
    err = capsys.readouterr().err
    assert "no input 'x'" in err and "'M', 'x0'" in err and "generated" not in err


def test_a_symbol_sized_by_input_shapes_sizes_every_input(tmp_path, capsys):
    """``--input-shapes a:[4,3]`` sizes ``n``, so ``b`` [n, 3] is made [4, 3] too; without
    it, one error names every input left without a size and a ready ``--input-shapes``."""
    path = tmp_path / "m.onnx"
    onnx.save(two_inputs_model(), path)
    assert cli(["run", str(path), "--input-shapes", "a:[4,3]", "--json"]) == 0
    out = capsys.readouterr()
    assert "generated input 'b': float32[4, 3]" in out.err
    assert '"shape": [\n   4,\n   3\n  ]' in out.out
    assert cli(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'a' [n, 3], 'b' [n, 3]" in err and '--input-shapes "a:[1,3],b:[1,3]"' in err


def test_a_given_input_of_the_wrong_rank_is_said_first(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(two_inputs_model(), path)
    np.save(tmp_path / "a.npy", np.zeros(3, np.float32))
    assert cli(["run", str(path), "--input", f"a={tmp_path / 'a.npy'}"]) == 2
    err = capsys.readouterr().err
    assert "input 'a': expected rank 2" in err and "generated" not in err


def test_integer_ranges_are_said_as_integers(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    assert cli(["run", str(path), "--value-range", "M:[2,5]"]) == 0
    assert "generated input 'M': int64[], uniform in [2, 5)" in capsys.readouterr().err


def test_info_says_an_unbounded_trip_count_in_words(tmp_path, capsys):
    m = loop_model()
    m.graph.node[0].input[0] = "big"
    m.graph.initializer.append(onnx.numpy_helper.from_array(
        np.array(2**63 - 1, np.int64), "big"))
    del m.graph.input[0]
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    assert cli(["info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "trip count: none (constant 9223372036854775807" in text


def test_a_compile_left_running_does_not_abort_the_program(tmp_path):
    """Called as the program, the command ends the process itself while a compile thread
    still runs (XLA aborts an interpreter that shuts down under a compile)."""
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    code = ("import threading, time, sys\n"
            "threading.Thread(target=time.sleep, args=(60,), name='itergraph-compile',"
            " daemon=True).start()\n"
            f"sys.argv = ['itergraph', 'info', {str(path)!r}]\n"
            "from itergraph.cli import main\n"
            "sys.exit(main())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": SRC, "PATH": ""}, timeout=60)
    assert r.returncode == 0 and "Loop 'count'" in r.stdout


def test_an_archive_of_in0_in1_feeds_the_inputs_by_position(tmp_path, capsys):
    """The corpus's .npz files hold ``in0``, ``in1`` ... (and the expected ``out0`` ...):
    ``--input FILE.npz`` feeds them by position, says so, and leaves the outputs out."""
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    np.savez(tmp_path / "case.npz", in0=np.array(3), in1=np.array([1, 2], np.float32),
             out0=np.zeros(2, np.float32))
    assert cli(["run", str(path), "--input", str(tmp_path / "case.npz"), "--json"]) == 0
    out = capsys.readouterr()
    assert "in0 -> 'M', in1 -> 'x0' by position (out0 left out)" in out.err
    assert '"max": 5.0' in out.out and "generated" not in out.err
    np.savez(tmp_path / "other.npz", in0=np.array(3), extra=np.zeros(1))
    assert cli(["run", str(path), "--input", str(tmp_path / "other.npz")]) == 2
    assert "no input 'extra', 'in0'" in capsys.readouterr().err


def test_compare_with_openvino_after_jax_prints_no_fork_warning(tmp_path):
    """`import openvino` forks for its telemetry after JAX started: JAX's deadlock warning
    about that fork is not the user's concern and is not printed."""
    pytest.importorskip("openvino")
    pytest.importorskip("jax")
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    r = subprocess.run([sys.executable, "-m", "itergraph", "compare", str(path), "--engines",
                        "jax,openvino", "--value-range", "M:[3,4]"],
                       capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": ""},
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "os.fork()" not in r.stderr and "PASSED" in r.stdout


@pytest.mark.parametrize("argv,said", [
    (["--seed", "-1"], "argument --seed: must be at least 0"),
    (["--input-shapes", "M:[2]"], "--input-shapes M:[2]: the input is declared []"),
    (["--input-shapes", "x0:[3]"], "--input-shapes x0:[3]: the input is declared [2]"),
])
def test_out_of_range_options_are_usage_errors(tmp_path, capsys, argv, said):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    try:
        code = cli(["run", str(path), *argv])
    except SystemExit as e:  # argparse
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and "generated" not in err


@pytest.mark.parametrize("command,option", [("profile", "--repeat=0"), ("compare", "--atol=-1"),
                                            ("compare", "--rtol=-0.5")])
def test_counts_and_tolerances_out_of_range_are_refused(tmp_path, capsys, command, option):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    with pytest.raises(SystemExit) as e:
        cli([command, str(path), option])
    assert e.value.code == 2 and "must be at least" in capsys.readouterr().err


def test_optimize_help_names_the_default_pipeline(capsys):
    from itergraph.cli import DEFAULT_PASSES
    from itergraph.transforms import table

    assert tuple(DEFAULT_PASSES) == tuple(table.DEFAULT)
    with pytest.raises(SystemExit):
        cli(["optimize", "--help"])
    assert ",".join(table.DEFAULT) in capsys.readouterr().out.replace("\n", "").replace(" ", "")


def test_itergraphs_warnings_are_one_line_each(tmp_path, capsys, monkeypatch):
    """A `LeniencyWarning` (itergraph runs what a peer refuses) reads as ``itergraph:
    warning: ...``, without Python's file, line number and source line."""
    import warnings

    import itergraph.cli.commands as commands

    def info(args):
        warnings.warn("Loop node 'L': read leniently", ig.LeniencyWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(commands, "cmd_info", info)
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert cli(["info", str(path)]) == 0
    assert capsys.readouterr().err == "itergraph: warning: Loop node 'L': read leniently\n"


def test_an_input_without_a_name_lists_the_models_inputs(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    np.save(tmp_path / "x.npy", np.zeros(2, np.float32))
    assert cli(["run", str(path), "--input", str(tmp_path / "x.npy")]) == 2
    err = capsys.readouterr().err
    assert "NAME=FILE.npy" in err and "(the model's inputs: 'M', 'x0')" in err
