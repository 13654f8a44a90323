"""``itergraph run-many``: a directory of feed files through `Model.run_many`."""

from __future__ import annotations

from pathlib import Path

from .. import api
from ..errors import InputError
from .files import prepare_output_dir, safe_file_names


def cmd_run_many(args) -> int:
    """Every ``*.npz`` feed file of --inputs through `Model.run_many`; one result ``.npz``
    per input in --output-dir, named as `safe_file_names` names the input's stem. Results
    are written atomically and a restart skips finished ones (`itergraph.scale.jobs`)."""
    from ..scale import jobs as scale_jobs

    in_dir, out_dir = Path(args.inputs), Path(args.output_dir)
    if not in_dir.is_dir():
        raise InputError(f"--inputs '{in_dir}' is not a directory")
    files = sorted(p for p in in_dir.iterdir() if p.suffix == ".npz" and p.is_file())
    prepare_output_dir(out_dir, [])
    names = safe_file_names([p.stem for p in files])
    plan = [(p, out_dir / (names[p.stem][:-len(".npy")] + ".npz")) for p in files]
    scale_jobs.remove_stale_parts(out_dir)
    todo = scale_jobs.pending(plan)
    progress = scale_jobs.Progress(len(plan), len(plan) - len(todo))
    kw = {"batch_size": args.batch_size, "backend": args.backend}
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    model = api.load(args.model)
    _check_names(model.graph, [i for i, _ in todo])
    if args.ray:
        from .. import ray as ig_ray

        ig_ray.init(args.ray)
        ig_ray.run_files(args.model, todo, progress, concurrency=args.workers, **kw)
    else:
        scale_jobs.run_local(model, todo, progress, **kw)
    progress.close(out_dir)
    return 0


def _check_names(graph, files: list[Path]) -> None:
    """Before any run: every feed file names only the model's inputs and all those without a
    default; the files that do not are named (a job stops at its first bad file otherwise)."""
    import numpy as np

    names = [v.name for v in graph.inputs]
    needed = {v.name for v in graph.inputs if v.const is None}
    bad = []
    for f in files:
        try:
            with np.load(f, allow_pickle=False) as z:
                keys = set(z.files)
        except (OSError, ValueError, EOFError) as e:
            bad.append(f"'{f}': unreadable ({type(e).__name__}: {e})")
            continue
        unknown, missing = sorted(keys - set(names)), sorted(needed - keys)
        if unknown or missing:
            bad.append(f"'{f}': " + "; ".join(
                ([f"unknown {', '.join(repr(k) for k in unknown)}"] if unknown else [])
                + ([f"missing {', '.join(repr(k) for k in missing)}"] if missing else [])))
    if bad:
        raise InputError(f"{len(bad)} feed file(s) do not name the model's inputs "
                         f"({', '.join(repr(n) for n in names)}); nothing was run: "
                         + "; ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""))
