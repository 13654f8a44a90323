"""The hostile-input harness: cases, their expected outcomes, and the child processes that run them.

A *case* is a function ``fn(c: Ctx)`` registered with `case`: it builds a hostile (or valid)
model, feed or argument and hands it to itergraph. Its `Expect`ation says what must happen:

- `Raises(cls, *words)`: an `itergraph.Error` whose public kind (the first of `KINDS` in its
  class's MRO) is exactly `cls`, with every word of `words` in its message (the element at
  fault: node, layer, input, port, attribute);
- `Ok()`: the case returns normally (a valid control checks its own result with asserts);
- `Warns(category, *words)`: the case returns normally and emits that warning.

Cases run in child processes forked from a server that has imported itergraph and the
cases once (`fork_server`), each under an address-space cap
(`MEMORY_CAP`, ``RLIMIT_AS``) and a wall-clock limit per case. Many cases share one child;
a case marked ``isolate=True`` (it may crash, hang or allocate without bound) gets a child of
its own. A child reports one JSON line as each case starts and one when it ends, so that when
a child dies or hangs the parent knows which case did it, records a crash or hang for that
case, and starts a fresh child for the rest of the group.

Run from the command line (``python tests/hostile/harness.py [module ...] [-k text]``) to see
every case's outcome without pytest. Set
``HOSTILE_ITERGRAPH_SRC`` to another checkout's ``src`` to run the cases against it.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the itergraph the children import: this checkout's, or another (to measure a baseline)
SRC = Path(os.environ.get("HOSTILE_ITERGRAPH_SRC") or HERE.parent.parent / "src")

# The cap catches unbounded allocations. JAX's CPU client starts under 2 GiB of address
# space (measured: it fails to start under 1 GiB), so 4 GiB leaves it room and still stops
# any allocation of a few GiB.
MEMORY_CAP = 4 << 30
CASE_TIMEOUT = 30.0  # seconds per case, from the moment the child starts it
START_TIMEOUT = 90.0  # seconds for a child to import what its first case needs
CASE_MODULES = ("cases_onnx", "cases_openvino", "cases_network", "cases_api", "cases_cli")
KINDS = ("SecurityError", "IterationLimitError", "ModelError", "UnsupportedError", "InputError",
         "ExecutionError")


# -- expectations ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Raises:
    cls: type
    words: tuple[str, ...] = ()

    def __init__(self, cls: type, *words: str):
        object.__setattr__(self, "cls", cls)
        object.__setattr__(self, "words", tuple(words))

    def describe(self) -> str:
        return f"{self.cls.__name__} naming {list(self.words)}"

    def check(self, out: dict) -> str | None:
        if out["kind"] != "error":
            return None
        if out["cls"] != self.cls.__name__:
            return f"raised {out['type']} (kind {out['cls']}): {out['msg']}"
        missing = [w for w in self.words if w not in out["msg"]]
        if missing:
            return f"the message does not name {missing}: {out['msg']}"
        return "ok"


@dataclass(frozen=True)
class Ok:
    def describe(self) -> str:
        return "a normal return (valid control)"

    def check(self, out: dict) -> str | None:
        if out["kind"] != "ok":
            return None
        return "ok"


@dataclass(frozen=True)
class Warns:
    category: type
    words: tuple[str, ...] = ()

    def __init__(self, category: type, *words: str):
        object.__setattr__(self, "category", category)
        object.__setattr__(self, "words", tuple(words))

    def describe(self) -> str:
        return f"a normal return with a {self.category.__name__} naming {list(self.words)}"

    def check(self, out: dict) -> str | None:
        if out["kind"] != "ok":
            return None
        for w in out.get("warnings", []):
            if w["category"] == self.category.__name__ and all(x in w["msg"] for x in self.words):
                return "ok"
        return f"no {self.category.__name__} naming {list(self.words)}; got {out['warnings']}"


Expect = Raises | Ok | Warns


@dataclass
class Case:
    name: str
    fn: Callable
    expect: Expect
    module: str
    isolate: bool = False
    timeout: float = CASE_TIMEOUT
    needs_jax: bool = False
    params: dict = field(default_factory=dict)


REGISTRY: dict[str, Case] = {}


def case(name: str, expect: Expect, *, isolate: bool = False, timeout: float = CASE_TIMEOUT,
         backends: tuple[str, ...] | None = None):
    """Register ``fn(c)`` as case `name`. With `backends`, one case per backend, named
    ``name[backend]``, with ``c.backend`` set (``jax`` cases run in children that import jax)."""

    def deco(fn):
        module = fn.__module__
        variants = [(name, None)] if backends is None else [(f"{name}[{b}]", b) for b in backends]
        for full, backend in variants:
            if full in REGISTRY:
                raise ValueError(f"case {full} is registered twice")
            REGISTRY[full] = Case(full, fn, expect, module, isolate, timeout,
                                  needs_jax=backend == "jax",
                                  params={"backend": backend or "numpy"})
        return fn

    return deco


def load_cases(modules=CASE_MODULES) -> list[Case]:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    for m in modules:
        importlib.import_module(m)
    wanted = set(modules)
    return [c for c in REGISTRY.values() if c.module in wanted]


# -- the child side ------------------------------------------------------------------------------

class Ctx:
    """What a case gets: a private temporary directory and the backend to run on."""

    def __init__(self, tmp: Path, backend: str):
        self.tmp = tmp
        self.backend = backend

    def path(self, name: str) -> Path:
        return self.tmp / name


def _kind(e: BaseException) -> str | None:
    for k in type(e).__mro__:
        if k.__name__ in KINDS and k.__module__ == "itergraph.errors":
            return k.__name__
    return None


def run_one(c: Case, tmp: Path) -> dict:
    from itergraph.errors import Error

    tmp.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            c.fn(Ctx(tmp, c.params["backend"]))
        except Error as e:
            return {"kind": "error", "cls": _kind(e), "type": type(e).__name__, "msg": str(e)}
        except AssertionError as e:
            return {"kind": "assert", "type": "AssertionError", "msg": str(e),
                    "tb": traceback.format_exc(limit=-4)}
        except BaseException as e:  # noqa: BLE001 - everything else is a raw exception
            return {"kind": "raw", "type": type(e).__name__, "msg": str(e)[:2000],
                    "tb": traceback.format_exc(limit=-6)}
    ws = [{"category": w.category.__name__, "msg": str(w.message)} for w in caught
          if w.category.__module__.startswith("itergraph")]
    return {"kind": "ok", "warnings": ws}


def child_main(argv: list[str]) -> int:
    """Run the cases ``MODULE:NAME`` of ``argv = [TMPDIR, MODULE:NAME, ...]``, one JSON line
    each on stdout (in a child of `fork_server`, or as ``harness.py --child TMPDIR ...``).

    The address-space cap is set here, first thing (not with ``preexec_fn``, which forks a
    parent that may run threads)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    tmp = Path(argv[0])
    names = argv[1:]
    load_cases(sorted({n.split(":", 1)[0] for n in names}))
    out = sys.stdout
    sys.stdout = sys.stderr  # what cases print must not mix with the protocol
    for i, full in enumerate(names):
        name = full.split(":", 1)[1]
        print(json.dumps({"start": name}), file=out, flush=True)
        res = run_one(REGISTRY[name], tmp / f"case{i}")
        res["name"] = name
        print(json.dumps(res), file=out, flush=True)
    return 0


# -- the parent side ------------------------------------------------------------------------------

def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE), env.get("PYTHONPATH", "")])
    env.setdefault("JAX_PLATFORMS", "cpu")
    if "host_platform_device_count" not in env.get("XLA_FLAGS", ""):
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "")
                            + " --xla_force_host_platform_device_count=1").strip()
    env["PYTHONWARNINGS"] = "ignore::DeprecationWarning"
    env["OMP_NUM_THREADS"] = "1"
    return env


_SERVER = None


def _spawn(cases: list[Case], tmp: Path):
    """A child running `cases`, forked from this process's fork server (started on first
    use; `fork_server`); its stderr goes to ``tmp/stderr.txt`` (a pipe nobody reads while
    waiting for results could fill up and block the child)."""
    global _SERVER
    from fork_server import Server

    if _SERVER is None or not _SERVER.alive():
        _SERVER = Server(_env())
        atexit.register(_SERVER.close)
    return _SERVER.spawn([str(tmp), *(f"{c.module}:{c.name}" for c in cases)])


def _stderr(tmp: Path) -> str:
    return (tmp / "stderr.txt").read_bytes().decode("utf-8", "replace")[-3000:]


def _kill(p: subprocess.Popen) -> None:
    p.kill()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


def run_group(cases: list[Case], tmp: Path, spawn=None) -> dict[str, dict]:
    """Run `cases` in as few children as possible; every case gets an outcome dict.

    `spawn(todo, tmp) -> Popen` starts a child for the cases still to run (default `_spawn`);
    any items with a ``name`` and a ``timeout`` will do, when the child speaks the protocol of
    `child_main` (a ``{"start": name}`` line, then a result line with ``"name"``)."""
    spawn = spawn or _spawn
    results: dict[str, dict] = {}
    todo = list(cases)
    attempt = 0
    while todo:
        attempt += 1
        ctmp = tmp / f"child{attempt}"
        ctmp.mkdir(parents=True, exist_ok=True)
        p = spawn(todo, ctmp)
        by_name = {c.name: c for c in todo}
        current: str | None = None
        deadline = time.monotonic() + START_TIMEOUT + todo[0].timeout
        buf = b""
        failed: dict | None = None
        fd = p.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                what = f"case {current}" if current else "the child's start"
                failed = {"kind": "hang", "msg": f"no result within the time limit ({what})"}
                _kill(p)
                failed["stderr"] = _stderr(ctmp)
                break
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:  # the child exited
                rc = p.wait()
                err = _stderr(ctmp)
                if current is not None or any(c.name not in results for c in todo):
                    failed = {"kind": "crash", "msg": f"the child exited with status {rc}",
                              "stderr": err}
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                if "start" in msg:
                    current = msg["start"]
                    deadline = time.monotonic() + by_name[current].timeout
                else:
                    results[msg["name"]] = msg
                    current = None
        p.stdout.close()
        done = set(results)
        if failed is not None:
            # blame the running case (or, if the child died between cases, the next one)
            blamed = current or next((c.name for c in todo if c.name not in done), None)
            if blamed is not None:
                failed["name"] = blamed
                results[blamed] = failed
                done.add(blamed)
        else:
            if p.poll() is None:
                _kill(p)
        todo = [c for c in todo if c.name not in done]
    return results


def verdict(c: Case, out: dict) -> str:
    """``"ok"`` or why the outcome is wrong, naming the case."""
    res = c.expect.check(out)
    if res == "ok":
        return "ok"
    want = c.expect.describe()
    if res is not None:
        return f"{c.name}: expected {want}; {res}"
    kind = out["kind"]
    if kind == "ok":
        return f"{c.name}: expected {want}; it returned normally (silently accepted)"
    if kind == "error":
        return f"{c.name}: expected {want}; raised {out['type']}: {out['msg']}"
    detail = out.get("tb") or out.get("stderr") or ""
    return f"{c.name}: expected {want}; {kind}: {out.get('type', '')} {out['msg']}\n{detail}"


def plan_groups(cases: list[Case], size: int = 64) -> dict[str, list[Case]]:
    """Groups of cases that share a child: per module and backend, `size` at most; an
    isolated case alone."""
    groups: dict[str, list[Case]] = {}
    buckets: dict[str, list[Case]] = {}
    for c in cases:
        if c.isolate:  # group names are file names
            groups["iso-" + re.sub(r"[^A-Za-z0-9_.-]", "_", c.name)] = [c]
        else:
            buckets.setdefault(f"{c.module}{'-jax' if c.needs_jax else ''}", []).append(c)
    for key, cs in buckets.items():
        for i in range(0, len(cs), size):
            groups[f"{key}-{i // size}"] = cs[i:i + size]
    return groups


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        return child_main(argv[1:])
    pattern = None
    if "-k" in argv:
        i = argv.index("-k")
        pattern = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    cases = load_cases(tuple(argv) or CASE_MODULES)
    if pattern:
        cases = [c for c in cases if pattern in c.name]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for gname, group in plan_groups(cases).items():
            res = run_group(group, Path(d) / gname)
            for c in group:
                v = verdict(c, res[c.name])
                out = res[c.name]
                shown = out.get("msg", "")[:160].replace("\n", " ")
                print(f"{'PASS' if v == 'ok' else 'FAIL'} {c.name}: {out['kind']} "
                      f"{out.get('type', '')} {shown}")
                if v != "ok":
                    bad += 1
                    print("    " + v.replace("\n", "\n    "))
    print(f"{len(cases) - bad} of {len(cases)} cases pass")
    return 1 if bad else 0


if __name__ == "__main__":
    import harness  # the cases register into this module, not into __main__

    sys.exit(harness.main(sys.argv[1:]))
