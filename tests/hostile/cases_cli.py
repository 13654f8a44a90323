"""The ``itergraph`` command with hostile output names, links in the output directory, bad
``--input`` files and bad arguments. Every case runs in a sandbox and checks that nothing was
written (or changed) outside the output directory.

`cli_fails` runs the command as a user would (exit status 2 or 1, ``itergraph: error: ...`` on
stderr) and then once more letting the error out, so that the harness sees its class."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from harness import Ok, Raises, case
from hostile_util import F, model, vi
from onnx import helper as h

from itergraph.errors import InputError, ModelError


def _files(root: Path) -> dict[str, bytes | str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            key = str(p.relative_to(root))
            if p.is_symlink():
                out[key] = "link:" + os.readlink(p)
            elif p.is_file():
                out[key] = p.read_bytes()
    return out


class Sandbox:
    """``root/`` holds the model, a victim file and ``work/out`` (the output directory);
    `check` asserts that nothing but files inside ``out`` appeared or changed."""

    def __init__(self, c, names=("y",)):
        self.root = c.tmp / "sandbox"
        self.work = self.root / "a" / "b" / "work"
        self.work.mkdir(parents=True)
        self.out = self.work / "out"
        self.victim = self.root / "victim.npy"
        self.victim.write_bytes(b"precious")
        nodes = [h.make_node("Identity", ["x"], [n], name=f"id{i}") for i, n in enumerate(names)]
        m = model(nodes, [vi("x", F, [2])], [vi(n, F, [2]) for n in names])
        self.model = self.work / "m.onnx"
        self.model.write_bytes(m.SerializeToString())
        self.x = self.work / "x.npy"
        np.save(self.x, np.array([1, 2], np.float32))
        self.before = None

    def argv(self, *extra):
        return ["run", str(self.model), "--input", f"x={self.x}", "--output-dir",
                str(self.out), *extra]

    def snapshot(self):
        self.before = {k: v for k, v in _files(self.root).items()
                       if not k.startswith(str(self.out.relative_to(self.root)))}

    def check(self):
        after = {k: v for k, v in _files(self.root).items()
                 if not k.startswith(str(self.out.relative_to(self.root)))}
        assert after == self.before, f"changed outside the output directory: " \
            f"{sorted(set(after) ^ set(self.before))}"
        assert self.victim.read_bytes() == b"precious"


def cli(*argv) -> tuple[int, str, str]:
    from itergraph.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse
            code = e.code
    return code, out.getvalue(), err.getvalue()


def cli_fails(*argv, status: int = 2) -> None:
    """Exit status `status` (2: the user's error, 1: a failure at run time) with one
    ``itergraph: error:`` line; then raise the error itself."""
    import itergraph.cli as cli_module

    code, _, err = cli(*argv)
    assert code == status, f"exit status {code}, stderr {err!r}"
    assert err.startswith("itergraph: error: "), err

    class _Never(Exception):
        pass

    saved = cli_module.Error, cli_module.InputError
    cli_module.Error = cli_module.InputError = _Never  # let the error out of main
    try:
        cli_module.main(list(argv))
    finally:
        cli_module.Error, cli_module.InputError = saved
    raise AssertionError("the second run did not fail")


def _written_inside(s: Sandbox, names: dict[str, str], stdout: str) -> None:
    for name, file in names.items():
        p = s.out / file
        assert p.is_file() and not p.is_symlink(), (name, sorted(os.listdir(s.out)))
        np.testing.assert_array_equal(np.load(p), [1, 2])
        if file != f"{name}.npy":
            assert f"written as {p}" in stdout, stdout


def _hostile_name(c, name: str, file: str):
    s = Sandbox(c, (name,))
    s.snapshot()
    code, out, err = cli(*s.argv())
    assert code == 0, err
    _written_inside(s, {name: file}, out)
    s.check()


# -- hostile output names -----------------------------------------------------------------------

@case("cli/output_named_dotdot_dotdot_x", Ok())
def _(c):
    _hostile_name(c, "../../x", "_.._.._x.npy")


@case("cli/output_named_dotdot_dotdot_victim", Ok())
def _(c):
    _hostile_name(c, "../../../../victim", "_.._.._.._.._victim.npy")


@case("cli/output_named_an_absolute_path", Ok())
def _(c):
    s = Sandbox(c, (str(c.tmp / "sandbox" / "victim"),))
    s.snapshot()
    code, out, err = cli(*s.argv())
    assert code == 0, err
    assert len(os.listdir(s.out)) == 1 and os.listdir(s.out)[0].endswith("_victim.npy")
    s.check()


@case("cli/output_named_dot", Ok())
def _(c):
    _hostile_name(c, ".", "_..npy")


@case("cli/output_named_dotdot", Ok())
def _(c):
    _hostile_name(c, "..", "_...npy")


@case("cli/output_named_with_backslashes", Ok())
def _(c):
    _hostile_name(c, "..\\..\\x", "_.._.._x.npy")


@case("cli/output_named_with_a_nul_byte", Ok())
def _(c):
    _hostile_name(c, "a\0b", "a_b.npy")


@case("cli/output_named_with_a_newline", Ok())
def _(c):
    _hostile_name(c, "a\nb", "a_b.npy")


@case("cli/output_named_tilde_slash", Ok())
def _(c):
    _hostile_name(c, "~/x", "__x.npy")


@case("cli/output_named_with_a_lookalike_slash", Ok())
def _(c):
    _hostile_name(c, "a\u2215b", "a_b.npy")


@case("cli/output_named_hidden_file", Ok())
def _(c):
    _hostile_name(c, ".bashrc", "_.bashrc.npy")


@case("cli/output_name_of_300_characters", Ok())
def _(c):
    _hostile_name(c, "n" * 300, "n" * 200 + ".npy")


@case("cli/output_named_empty_string", Ok())
def _(c):
    s = Sandbox(c, ("y",))
    m = model([h.make_node("Identity", ["x"], [""], name="id")], [vi("x", F, [2])],
              [vi("", F, [2])])
    s.model.write_bytes(m.SerializeToString())
    s.snapshot()
    code, out, err = cli(*s.argv())
    s.check()
    assert code == 1 and "itergraph: error:" in err, (code, err)


@case("cli/two_outputs_colliding_after_sanitising", Ok())
def _(c):
    s = Sandbox(c, ("a/b", "a_b"))
    s.snapshot()
    code, out, err = cli(*s.argv())
    assert code == 0, err
    _written_inside(s, {"a/b": "a_b.npy", "a_b": "a_b_2.npy"}, out)
    s.check()


@case("cli/outputs_differing_only_in_letter_case", Ok())
def _(c):
    s = Sandbox(c, ("Y", "y"))
    s.snapshot()
    code, out, err = cli(*s.argv())
    assert code == 0, err
    _written_inside(s, {"Y": "Y.npy", "y": "y_2.npy"}, out)
    s.check()


@case("cli/unicode_output_name_kept", Ok())
def _(c):
    _hostile_name(c, "выход_ü", "выход_ü.npy")


# -- links and non-files in the output directory ------------------------------------------------

@case("cli/symlink_in_the_output_directory", Raises(InputError, "output 'y'", "symbolic link"))
def _(c):
    s = Sandbox(c)
    s.out.mkdir()
    (s.out / "y.npy").symlink_to(s.victim)
    s.snapshot()
    try:
        cli_fails(*s.argv())
    finally:
        s.check()


@case("cli/dangling_symlink_in_the_output_directory",
      Raises(InputError, "output 'y'", "symbolic link"))
def _(c):
    s = Sandbox(c)
    s.out.mkdir()
    (s.out / "y.npy").symlink_to(s.root / "created_by_the_link.npy")
    s.snapshot()
    try:
        cli_fails(*s.argv())
    finally:
        s.check()
        assert not (s.root / "created_by_the_link.npy").exists()


@case("cli/symlink_for_a_sanitised_name", Raises(InputError, "symbolic link"))
def _(c):
    s = Sandbox(c, ("../y",))
    s.out.mkdir()
    (s.out / "_.._y.npy").symlink_to(s.victim)
    s.snapshot()
    try:
        cli_fails(*s.argv())
    finally:
        s.check()


@case("cli/directory_where_an_output_file_goes", Raises(InputError, "output 'y'",
                                                        "not a regular file"))
def _(c):
    s = Sandbox(c)
    (s.out / "y.npy").mkdir(parents=True)
    s.snapshot()
    cli_fails(*s.argv())


@case("cli/existing_output_file_is_replaced", Ok())
def _(c):
    s = Sandbox(c)
    s.out.mkdir()
    (s.out / "y.npy").write_bytes(b"old")
    s.snapshot()
    code, out, err = cli(*s.argv())
    assert code == 0, err
    _written_inside(s, {"y": "y.npy"}, out)
    s.check()


@case("cli/output_dir_that_is_a_file", Raises(InputError, "output directory"))
def _(c):
    s = Sandbox(c)
    s.out.write_bytes(b"a file")
    s.snapshot()
    cli_fails(*s.argv())


@case("cli/output_dir_that_is_a_symlink_to_a_directory", Ok())
def _(c):
    # the user names the directory: a link there is followed (it is what was asked for)
    s = Sandbox(c)
    real = s.work / "real"
    real.mkdir()
    s.out.symlink_to(real)
    code, out, err = cli(*s.argv())
    assert code == 0, err
    np.testing.assert_array_equal(np.load(real / "y.npy"), [1, 2])


@case("cli/output_dir_under_a_file", Raises(InputError, "output directory"))
def _(c):
    s = Sandbox(c)
    blocker = s.work / "blocker"
    blocker.write_bytes(b"x")
    cli_fails("run", str(s.model), "--input", f"x={s.x}", "--output-dir", str(blocker / "out"))


# -- inputs and arguments -----------------------------------------------------------------------

@case("cli/input_without_equals", Raises(InputError, "NAME=FILE.npy"))
def _(c):
    s = Sandbox(c)
    cli_fails("run", str(s.model), "--input", str(s.x))


@case("cli/input_file_missing", Raises(InputError, "input 'x'"))
def _(c):
    s = Sandbox(c)
    cli_fails("run", str(s.model), "--input", f"x={s.work / 'missing.npy'}")


@case("cli/input_file_is_a_directory", Raises(InputError, "input 'x'"))
def _(c):
    s = Sandbox(c)
    cli_fails("run", str(s.model), "--input", f"x={s.work}")


@case("cli/input_npy_with_pickled_objects", Raises(InputError, "input 'x'"))
def _(c):
    s = Sandbox(c)
    p = s.work / "evil.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    cli_fails("run", str(s.model), "--input", f"x={p}")


@case("cli/input_npy_claiming_a_huge_shape", Raises(InputError, "input 'x'"), isolate=True)
def _(c):
    s = Sandbox(c)
    p = s.work / "huge.npy"
    np.save(p, np.zeros(4, np.float32))
    data = p.read_bytes().replace(b"(4,)", b"(10000000000000,)")
    p.write_bytes(data)
    cli_fails("run", str(s.model), "--input", f"x={p}")


@case("cli/input_text_file_named_npy", Raises(InputError, "input 'x'"))
def _(c):
    s = Sandbox(c)
    p = s.work / "text.npy"
    p.write_text("1, 2")
    cli_fails("run", str(s.model), "--input", f"x={p}")


@case("cli/input_of_the_wrong_type", Raises(InputError, "input 'x'", "float32"))
def _(c):
    s = Sandbox(c)
    p = s.work / "ints.npy"
    np.save(p, np.array([1, 2], np.int64))
    cli_fails("run", str(s.model), "--input", f"x={p}")


@case("cli/max_iterations_negative", Raises(InputError, "max_iterations"))
def _(c):
    s = Sandbox(c)
    cli_fails(*s.argv("--max-iterations", "-3"))


@case("cli/max_iterations_not_a_number", Ok())
def _(c):
    s = Sandbox(c)
    code, out, err = cli(*s.argv("--max-iterations", "many"))
    assert code == 2 and "--max-iterations" in err, (code, err)


@case("cli/model_missing", Raises(InputError, "no such file"))
def _(c):
    cli_fails("info", str(c.tmp / "nope.onnx"))


@case("cli/model_that_is_garbage", Raises(ModelError, "m.onnx"))
def _(c):
    p = c.tmp / "m.onnx"
    p.write_bytes(b"\x12\x34garbage")
    cli_fails("info", str(p), status=1)


@case("cli/convert_to_an_unknown_suffix", Raises(InputError, "format"))
def _(c):
    s = Sandbox(c)
    cli_fails("convert", str(s.model), str(s.work / "m.txt"))


@case("cli/convert_into_a_missing_directory", Raises(InputError, "cannot write"))
def _(c):
    s = Sandbox(c)
    cli_fails("convert", str(s.model), str(s.work / "no" / "dir" / "m.xml"))


@case("cli/real_process_with_hostile_output_names", Ok(), timeout=60)
def _(c):
    s = Sandbox(c, ("../../../x", "/etc/y", "ok"))
    s.snapshot()
    src = Path(__import__("itergraph").__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": str(src)}
    r = subprocess.run([sys.executable, "-m", "itergraph.cli", *s.argv()], env=env,
                       capture_output=True, text=True, timeout=50, cwd=s.work)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(s.out)) == ["_.._.._.._x.npy", "_etc_y.npy", "ok.npy"], \
        os.listdir(s.out)
    assert r.stdout.count("written as") == 2, r.stdout
    s.check()
