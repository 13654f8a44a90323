"""The ``itergraph`` command: a thin layer over `itergraph.api`.

    itergraph run MODEL --input NAME=FILE.npy ... [--output-dir DIR] [--backend numpy|jax|auto]
                                  [--progress/--no-progress]
                                  (DIR/NAME.npy per output; see `safe_file_names`)
    itergraph info MODEL
    itergraph explain MODEL [--backend jax]
    itergraph convert IN OUT          (.onnx <-> .xml)
    itergraph optimize IN OUT [--passes a,b=K,...] [--target T]
    itergraph optimize --list         (the transforms and their contracts)
    itergraph trace MODEL --input NAME=FILE.npy ... [--tensor NAME ...] [--steps 0:10]
                    [--backend numpy|jax|onnxruntime|openvino] -o trace.npz
    itergraph compare MODEL --input NAME=FILE.npy ... [--engines numpy,jax,onnxruntime,openvino]
                    [--atol A] [--rtol R]     (exit 0: all agree, 1: they disagree, 2: error)
    itergraph run-many MODEL --inputs DIR --output-dir OUT [--ray ADDRESS|local]
                                  [--batch-size N] [--backend B] [--workers N]
    itergraph check IN --target T [--fix OUT]   (exit 0: passes, 1: findings, 2: error)
    itergraph view MODEL [--trace trace.npz] [-o loops.html]
    itergraph profile MODEL --input NAME=FILE.npy ... [--backend numpy|jax]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from . import api
from .errors import Error, InputError


def _summary(value) -> str:
    if value is None:
        return "empty optional"
    if isinstance(value, list):
        return f"sequence of {len(value)}: [" + ", ".join(_summary(v) for v in value[:4]) + \
            (", ...]" if len(value) > 4 else "]")
    a = np.asarray(value)
    head = f"shape {a.shape} dtype {a.dtype}"
    if a.size == 0:
        return head + " (empty)"
    if a.dtype.kind in "biuf":
        f = a.astype(np.float64)
        stats = f"min {f.min():.6g} max {f.max():.6g} mean {f.mean():.6g}"
        flat = ", ".join(f"{x:.6g}" for x in f.reshape(-1)[:6]) + (" ..." if a.size > 6 else "")
        return f"{head}  {stats}  [{flat}]"
    return f"{head}  {a.reshape(-1)[:6]}"


def _parse_inputs(items: list[str]) -> dict:
    feeds = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep:
            raise InputError(f"--input expects NAME=FILE.npy, got '{item}'")
        try:
            feeds[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError, MemoryError) as e:
            raise InputError(f"cannot read input '{name}' from '{file}': "
                             f"{type(e).__name__}: {e}") from None
    return feeds


_SAFE_PUNCTUATION = "._-+="
_MAX_STEM = 200  # characters; file systems allow 255 bytes per name


def safe_file_names(names: list[str]) -> dict[str, str]:
    """A file name (``STEM.npy``) for each output name, safe to create inside one directory:
    characters other than letters, digits and ``._-+=`` become ``_`` (so no ``/``, ``\\``,
    ``..`` path or NUL survives), a leading dot gets a ``_`` before it, long names are cut,
    and names that would collide (letter case aside) get a ``_2``, ``_3`` ... suffix."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        stem = "".join(ch if ch.isalnum() or ch in _SAFE_PUNCTUATION else "_" for ch in name)
        if not stem or stem.startswith("."):
            stem = "_" + stem
        stem = stem[:_MAX_STEM]
        candidate, k = stem, 1
        while candidate.casefold() in taken:
            k += 1
            candidate = f"{stem}_{k}"
        taken.add(candidate.casefold())
        out[name] = f"{candidate}.npy"
    return out


def _prepare_output_dir(out_dir: Path, names: list[str]) -> dict[str, Path]:
    """Create `out_dir` and plan one file per output inside it. An existing link or non-file
    where a file would go is refused before anything is written: no file is ever written
    outside `out_dir`, and no link is followed."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the output directory '{out_dir}': "
                         f"{e.strerror or e}") from None
    if not out_dir.is_dir():
        raise InputError(f"the output directory '{out_dir}' is not a directory")
    files = {}
    for name, file in safe_file_names(names).items():
        path = out_dir / file
        if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
            what = "a symbolic link" if path.is_symlink() else "not a regular file"
            raise InputError(f"output '{name}': '{path}' is {what}; itergraph does not write "
                             "through it (remove it or choose another --output-dir)")
        files[name] = path
    return files


def _write_npy(path: Path, value) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        raise InputError(f"cannot write '{path}': {e.strerror or e}") from None
    with os.fdopen(fd, "wb") as f:
        np.save(f, np.asarray(value), allow_pickle=False)


def cmd_run(args) -> int:
    model = api.load(args.model)
    files = None
    if args.output_dir:
        files = _prepare_output_dir(Path(args.output_dir), [v.name for v in model.outputs])
    from .inspect.progress import Reporter, wanted

    outs = model.run(_parse_inputs(args.input), backend=args.backend,
                     max_iterations=args.max_iterations,
                     progress=Reporter() if wanted(args.progress) else None)
    for name, value in outs.items():
        print(f"{name}: {_summary(value)}")
        if files is None:
            continue
        if isinstance(value, list) or value is None:
            print(f"  (not written: {name} is not a tensor)")
            continue
        path = files[name]
        if path.name != f"{name}.npy":
            print(f"  (written as {path}: the output's name is not a safe file name)")
        _write_npy(path, value)
    return 0


def cmd_info(args) -> int:
    print(api.load(args.model).info())
    return 0


def cmd_explain(args) -> int:
    print(api.load(args.model).explain(backend=args.backend))
    return 0


def cmd_convert(args) -> int:
    api.save(api.load(args.input), args.output)
    print(f"wrote {args.output}")
    return 0


def cmd_optimize(args) -> int:
    from . import targeting, transforms

    if args.list:
        for t in transforms.TRANSFORMS.values():
            arg = f"[={t.argument}]" if t.argument else ""
            print(f"{t.name}{arg}: {t.summary}\n")
            print("    " + t.contract().replace("\n", "\n    ") + "\n")
        return 0
    if not args.input or not args.output:
        raise InputError("optimize needs IN and OUT (or --list)")
    model = targeting.optimize(args.input, passes=args.passes, target=args.target)
    api.save(model, args.output)
    print(f"wrote {args.output}")
    return 0


def cmd_trace(args) -> int:
    model = api.load(args.model)
    t = model.trace(_parse_inputs(args.input), tensors=args.tensor or None, steps=args.steps,
                    backend=args.backend, path=args.output)
    for key, e in t.items():
        shape = f"{len(e.values)} ragged steps" if e.ragged else f"values {e.values.shape}"
        print(f"{key} ({e.kind}): {len(e)} steps, {shape}")
    print(f"wrote {args.output}")
    return 0


def cmd_compare(args) -> int:
    from .inspect.compare import compare

    report = compare(args.model, _parse_inputs(args.input), engines=args.engines,
                     atol=args.atol, rtol=args.rtol, max_iterations=args.max_iterations)
    print(report.text())
    return report.status


def cmd_run_many(args) -> int:
    """Every ``*.npz`` feed file of --inputs through `Model.run_many`; one result ``.npz``
    per input in --output-dir, named as `safe_file_names` names the input's stem. Results
    are written atomically and a restart skips finished ones (`itergraph.scale.jobs`)."""
    from .scale import jobs as scale_jobs

    in_dir, out_dir = Path(args.inputs), Path(args.output_dir)
    if not in_dir.is_dir():
        raise InputError(f"--inputs '{in_dir}' is not a directory")
    files = sorted(p for p in in_dir.iterdir() if p.suffix == ".npz" and p.is_file())
    _prepare_output_dir(out_dir, [])
    names = safe_file_names([p.stem for p in files])
    plan = [(p, out_dir / (names[p.stem][:-len(".npy")] + ".npz")) for p in files]
    scale_jobs.remove_stale_parts(out_dir)
    todo = scale_jobs.pending(plan)
    progress = scale_jobs.Progress(len(plan), len(plan) - len(todo))
    kw = {"batch_size": args.batch_size, "backend": args.backend}
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    if args.ray:
        from . import ray as ig_ray

        ig_ray.init(args.ray)
        ig_ray.run_files(args.model, todo, progress, concurrency=args.workers, **kw)
    else:
        scale_jobs.run_local(api.load(args.model), todo, progress, **kw)
    progress.close(out_dir)
    return 0


def _check_targets() -> tuple[str, ...]:
    from .portability.rules import TARGETS

    return TARGETS


def cmd_check(args) -> int:
    from . import portability, targeting

    report = portability.check(args.input, args.target)
    print(report.text())
    if args.fix:
        fixed = targeting.optimize(args.input, passes=(), target=args.target)
        api.save(fixed, args.fix)
        after = portability.check(args.fix, args.target)
        print(f"wrote {args.fix} (transforms: {', '.join(report.fixes()) or 'none'}); "
              + ("it passes " + args.target if after.ok else
                 f"{len(after.findings)} finding(s) remain"))
        return 0 if after.ok else 1
    return 0 if report.ok else 1


def cmd_view(args) -> int:
    from .inspect import view

    print(f"wrote {view.write(args.model, args.output, trace=args.trace)}")
    return 0


def cmd_profile(args) -> int:
    from .inspect.profile import profile

    result = profile(args.model, _parse_inputs(args.input), backend=args.backend,
                     max_iterations=args.max_iterations, repeat=args.repeat)
    print(result.text())
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="itergraph", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a model on inputs from .npy files")
    r.add_argument("model")
    r.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    r.add_argument("--output-dir")
    r.add_argument("--backend", default="numpy", choices=api.BACKENDS)
    r.add_argument("--max-iterations", type=int)
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress of the outermost loops on stderr (default: when a terminal)")
    r.set_defaults(fn=cmd_run)
    i = sub.add_parser("info", help="inputs, outputs and the tree of loops")
    i.add_argument("model")
    i.set_defaults(fn=cmd_info)
    e = sub.add_parser("explain", help="which parts compile on a backend and why")
    e.add_argument("model")
    e.add_argument("--backend", default="jax", choices=api.BACKENDS)
    e.set_defaults(fn=cmd_explain)
    c = sub.add_parser("convert", help="convert between .onnx and .xml")
    c.add_argument("input")
    c.add_argument("output")
    c.set_defaults(fn=cmd_convert)
    o = sub.add_parser("optimize", help="apply loop transforms and write the result")
    o.add_argument("input", nargs="?")
    o.add_argument("output", nargs="?")
    o.add_argument("--passes", help="comma-separated transforms, e.g. unroll=4,dead-ports")
    o.add_argument("--target", help="also apply what the portability check for T needs")
    o.add_argument("--list", action="store_true", help="list the transforms and exit")
    o.set_defaults(fn=cmd_optimize)
    t = sub.add_parser("trace", help="per-step values of tensors inside loop bodies")
    t.add_argument("model")
    t.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    t.add_argument("--tensor", action="append", default=[], metavar="NAME",
                   help="body tensor (default: every carried value and loop condition)")
    t.add_argument("--steps", help="START:STOP[:STEP] of the outermost loop, or one per level")
    t.add_argument("--backend", default="numpy",
                   choices=("numpy", "jax", "onnxruntime", "openvino"))
    t.add_argument("-o", "--output", required=True, help="trace file (.npz)")
    t.set_defaults(fn=cmd_trace)
    cp = sub.add_parser("compare", help="compare engines, down to the first divergence in a loop")
    cp.add_argument("model")
    cp.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    cp.add_argument("--engines", default="numpy,jax,onnxruntime,openvino")
    cp.add_argument("--atol", type=float, default=1e-5)
    cp.add_argument("--rtol", type=float, default=1e-5)
    cp.add_argument("--max-iterations", type=int)
    cp.set_defaults(fn=cmd_compare)
    m = sub.add_parser("run-many", help="run a model on every .npz feed file of a directory")
    m.add_argument("model")
    m.add_argument("--inputs", required=True, metavar="DIR")
    m.add_argument("--output-dir", required=True, metavar="OUT")
    m.add_argument("--ray", metavar="ADDRESS|local", help="run on Ray workers")
    m.add_argument("--workers", type=int, default=1, help="Ray workers (with --ray)")
    m.add_argument("--batch-size", type=int, default=16)
    m.add_argument("--backend", default="numpy", choices=api.BACKENDS)
    m.set_defaults(fn=cmd_run_many)
    k = sub.add_parser("check", help="which loop features a target refuses, and the fix")
    k.add_argument("input")
    k.add_argument("--target", required=True, choices=_check_targets())
    k.add_argument("--fix", metavar="OUT", help="apply the fixes and write the result to OUT")
    k.set_defaults(fn=cmd_check)
    v = sub.add_parser("view", help="write an HTML page of the loops (and a trace's plots)")
    v.add_argument("model")
    v.add_argument("--trace", help="a trace file (.npz) to plot step by step")
    v.add_argument("-o", "--output", default="loops.html")
    v.set_defaults(fn=cmd_view)
    pr = sub.add_parser("profile", help="time per loop and per body node, weighted by steps")
    pr.add_argument("model")
    pr.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    pr.add_argument("--backend", default="numpy", choices=api.BACKENDS)
    pr.add_argument("--max-iterations", type=int)
    pr.add_argument("--repeat", type=int, default=3, help="timed runs on jax (best is shown)")
    pr.set_defaults(fn=cmd_profile)
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except Error as e:
        print(f"itergraph: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
