"""Running mutants: the pipeline one mutant goes through (in a child process), and the parent
side that runs many in children under the hostile harness's limits.

The pipeline, each step a *stage* whose outcome is recorded: ``build`` the mutant's files;
``load`` them with `ig.load`; ``numpy`` and ``jax``, `Model.run` on each backend (loops
bounded by `MAX_ITERATIONS`); ``save``, `ig.save` to the other format (ONNX -> ``.xml``,
IR -> ``.onnx``) in a temporary folder; ``reload``, `ig.load` of that file and a NumPy run.
Then the checks: the two backends agree (`verdicts.differ`: the same outputs, or both
refuse), the reloaded model computes what the model did, no run wrote into the caller's
feeds.

Children are started as ``python -m fuzz.runner --child TMP SPEC...`` (`spawn`); each sets the
harness's address-space cap (`harness.MEMORY_CAP`) first thing, writes a ``{"start": SPEC}``
line and a result line per mutant, and marks each stage on stderr so that a crash or hang is
attributed to its stage. `harness.run_group` does the rest: a time limit per mutant, a fresh
child after a crash or hang.
"""

from __future__ import annotations

import copy
import gc
import json
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import TESTS
from .common import NotApplicable
from .mutants import Mutant, build
from .mutate_network import load_script
from .seeds import seed
from .verdicts import differ, stage_outcome

MAX_ITERATIONS = 1000
MUTANT_TIMEOUT = 30.0  # seconds per mutant, from the moment its child starts it
STAGE_MARK = "FUZZ-STAGE "


@dataclass(frozen=True)
class Item:
    """What `harness.run_group` runs: a mutant's spec as its name, and its time limit."""

    name: str
    timeout: float = MUTANT_TIMEOUT


# -- the child side ------------------------------------------------------------------------------

def _mark(stage: str) -> None:
    print(STAGE_MARK + stage, file=sys.stderr, flush=True)


def _stage(stages: dict, name: str, fn):
    """Run `fn()` as stage `name`: its outcome into `stages`; its value, or None on error."""
    _mark(name)
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - every exception is an outcome
        stages[name] = stage_outcome(e)
        return None
    stages[name] = stage_outcome(None)
    return value


def _same_feeds(a: dict, b: dict) -> bool:
    if list(a) != list(b):
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray) != isinstance(y, np.ndarray):
            return False
        if isinstance(x, np.ndarray):
            if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(
                    x, y, equal_nan=x.dtype.kind in "fc"):
                return False
        elif type(x) is not type(y) or (not isinstance(x, float) and x != y):
            return False
    return True


def _side(stages: dict, name: str) -> str:
    o = stages[name]
    return "ran" if o["kind"] == "ok" else f"{name} raised {o['type']}"


def _under_source_names(model, again: dict) -> dict:
    """The reloaded model's outputs, keyed as the source model's run keys them. A source that
    lists an output twice has it once in its run's dict; the IR writer names the second
    Result after its layer (``NAME/sink_port_0``, as names must be unique in the IR graph),
    so the outputs are then matched by position (tests/hostile/README.md)."""
    names = [v.name for v in model.outputs]
    if len(set(names)) == len(names) or len(names) != len(again):
        return again
    out: dict = {}
    for name, value in zip(names, again.values()):
        out.setdefault(name, value)
    return out


def _loadable(path: Path):
    """What `ig.load` takes for a mutant's file: the path, or for a network script the
    network it builds (the API calls run in the ``load`` stage)."""
    return load_script(path) if path.suffix == ".netpkl" else path


def run_mutant(spec: str, tmp: Path) -> dict:
    """One mutant through every stage; the result line the child reports."""
    import itergraph as ig

    m = Mutant.parse(spec)
    tol = (seed(m.seed_id).rtol, seed(m.seed_id).atol)
    res: dict = {"name": spec, "stages": {}}
    stages = res["stages"]
    shutil.rmtree(tmp, ignore_errors=True)
    _mark("build")
    try:
        built = build(m, tmp / "in")
    except NotApplicable as e:
        return {**res, "kind": "n/a", "msg": str(e)}
    res["desc"] = built.description[:400]
    pristine = copy.deepcopy(built.feeds)
    model = _stage(stages, "load", lambda: ig.load(_loadable(built.path)))
    if model is None:
        return res
    outs = {}
    for backend in ("numpy", "jax"):
        outs[backend] = _stage(stages, backend, lambda b=backend: model.run(
            built.feeds, backend=b, max_iterations=MAX_ITERATIONS))
    if not _same_feeds(built.feeds, pristine):
        res["wrong"] = {"type": "feeds written", "frame": m.op,
                        "msg": "a run changed the caller's feeds"}
    n, j = stages["numpy"], stages["jax"]
    if n["kind"] == "ok" and j["kind"] == "ok":
        d = differ(outs["numpy"], outs["jax"], *tol)
        if d:
            res["disagree"] = {"type": "values", "frame": m.op, "msg": d}
    elif (n["kind"] == "ok") != (j["kind"] == "ok"):
        bad = j if n["kind"] == "ok" else n
        res["disagree"] = {"type": f"{_side(stages, 'numpy')} / {_side(stages, 'jax')}",
                           "frame": bad["frame"], "msg": bad["msg"]}
    target = tmp / ("out.xml" if built.path.suffix == ".onnx" else "out.onnx")
    saved = _stage(stages, "save", lambda: ig.save(model, target) or True)
    if saved:
        again = _stage(stages, "reload", lambda: ig.load(target).run(
            pristine, backend="numpy", max_iterations=MAX_ITERATIONS))
        if again is not None and outs["numpy"] is not None:
            d = differ(outs["numpy"], _under_source_names(model, again), *tol)
            if d:
                res["roundtrip"] = {"type": "values", "frame": m.op, "msg": d}
    return res


def child_main(argv: list[str]) -> int:
    """``--child TMP SPEC...``: run the mutants, one ``start`` line and one result line each."""
    import resource

    from harness import MEMORY_CAP

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    tmp = Path(argv[0])
    out = sys.stdout
    sys.stdout = sys.stderr  # what itergraph prints must not mix with the protocol
    warnings.simplefilter("ignore")
    for spec in argv[1:]:
        print(json.dumps({"start": spec}), file=out, flush=True)
        try:
            res = run_mutant(spec, tmp / "mutant")
        except Exception as e:  # noqa: BLE001 - the fuzzer's own fault, reported as such
            res = {"name": spec, "kind": "n/a", "msg": f"fuzzer: {type(e).__name__}: {e}"}
        print(json.dumps(res, default=str), file=out, flush=True)
        if "jax" in sys.modules:
            sys.modules["jax"].clear_caches()
        gc.collect()
    return 0


# -- the parent side ------------------------------------------------------------------------------

def spawn(items: list[Item], tmp: Path) -> subprocess.Popen:
    """A child running `items`, its stderr into ``tmp/stderr.txt`` (as `harness._spawn`)."""
    from harness import _env

    env = _env()
    env["PYTHONPATH"] = str(TESTS) + ":" + env["PYTHONPATH"]
    args = [sys.executable, "-m", "fuzz.runner", "--child", str(tmp)]
    args += [i.name for i in items]
    with open(tmp / "stderr.txt", "wb") as err:
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, env=env, cwd=str(tmp))


def run_batch(specs: list[str], tmp: Path, timeout: float = MUTANT_TIMEOUT) -> dict[str, dict]:
    """Run mutants in as few children as possible; every spec gets a result. A crash or hang
    is attributed to the last stage its child marked (in the stderr tail the harness kept)."""
    from harness import run_group

    tmp.mkdir(parents=True, exist_ok=True)
    results = run_group([Item(s, timeout) for s in specs], tmp, spawn=spawn)
    for res in results.values():
        if res.get("kind") in ("crash", "hang"):
            marks = re.findall(STAGE_MARK + r"(\w+)", res.get("stderr", ""))
            res["stage"] = marks[-1] if marks else "start"
    return results


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(child_main(sys.argv[2:]))
    sys.exit("usage: python -m fuzz.runner --child TMP SPEC...")
