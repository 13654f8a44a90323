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
    if args.ray:
        from .. import ray as ig_ray

        ig_ray.init(args.ray)
        ig_ray.run_files(args.model, todo, progress, concurrency=args.workers, **kw)
    else:
        scale_jobs.run_local(api.load(args.model), todo, progress, **kw)
    progress.close(out_dir)
    return 0
