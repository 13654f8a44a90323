"""Ray Data integration (the optional extra ``itergraph[ray]``).

    import ray, itergraph.ray
    ds = ray.data.from_items([{"id": i, "X": x, "H0": h, "C0": c} for ...])  # a row per input
    out = itergraph.ray.map_batches("model.onnx", ds, batch_size=32, concurrency=2)

A row holds one input: a column per model input with the feed ``Model.run`` would take (its
batch axis included), and any other columns (ids, keys), which are passed through to the
output rows beside a column per model output.

Each Ray worker (an actor of `map_batches`) loads the model once, keeps it for every block it
is given (compiled plans included), and runs each block with `Model.run_many`, so batching
follows the same proof as on one machine. A model is passed as a path, ONNX bytes or a
`Model`; a path must be readable where the workers run. `run_files` is what
``itergraph run-many --ray`` runs: the rows are file paths and the workers write each result
file themselves (atomically), so a killed job keeps every finished file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import api
from .errors import UnsupportedError

_MODELS: dict[Any, Any] = {}  # per worker process: model source -> loaded Model


def _ray():
    try:
        import ray
    except ImportError:
        raise UnsupportedError("Ray support needs the ray package "
                               "(pip install 'itergraph[ray]')") from None
    return ray


def _model(source) -> Any:
    key = source if isinstance(source, str | bytes) else id(source)
    m = _MODELS.get(key)
    if m is None:
        m = _MODELS[key] = api.load(source)
    return m


class _Rows:
    """The map_batches callable: columns in, output columns out (one row per input)."""

    def __init__(self, source, run_many_kw: dict):
        self.model, self.kw = _model(source), run_many_kw

    def __call__(self, batch: dict) -> dict:
        inputs = {v.name for v in self.model.inputs}
        names = [k for k in batch if k in inputs]
        n = len(next(iter(batch.values()))) if batch else 0
        rows = ({k: np.asarray(batch[k][i]) for k in names} for i in range(n))
        results = list(self.model.run_many(rows, **self.kw))
        out = {k: v for k, v in batch.items() if k not in inputs}  # keys, ids: passed through
        out.update({k: _column([r[k] for r in results]) for k in (results[0] if results else {})})
        return out


def _column(values: list) -> np.ndarray:
    if len({np.shape(v) for v in values}) == 1:
        return np.stack(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class _Files:
    """The map_batches callable of `run_files`: reads feed files, writes result files."""

    def __init__(self, source, run_many_kw: dict):
        self.model, self.kw = _model(source), run_many_kw

    def __call__(self, batch: dict) -> dict:
        from .scale.jobs import read_feeds, write_atomic

        ins = [Path(str(p)) for p in batch["input"]]
        outs = [Path(str(p)) for p in batch["output"]]
        for out, result in zip(outs, self.model.run_many((read_feeds(p) for p in ins),
                                                          **self.kw)):
            write_atomic(out, result)
        return {"output": np.array([str(p) for p in outs])}


def _source(model):
    if isinstance(model, str | Path):
        return str(Path(model).resolve())
    return model


def map_batches(model, dataset, batch_size: int = 16, concurrency: int = 1,
                num_cpus: float = 1, **run_many_kw):
    """`dataset` (one row per input, a column per model input) -> a dataset with a column
    per model output. `concurrency`: how many workers; `run_many_kw`: `Model.run_many`'s
    options (backend, batch_axes, buckets, pad_axes, devices)."""
    _ray()
    kw = {"batch_size": batch_size, **run_many_kw}
    return dataset.map_batches(_Rows, fn_constructor_args=(_source(model), kw),
                               batch_size=batch_size, compute=_pool(concurrency),
                               num_cpus=num_cpus, batch_format="numpy")


def _pool(workers: int):
    """`workers` actors, each holding the model (Ray's ``concurrency=`` is deprecated)."""
    import ray.data

    return ray.data.ActorPoolStrategy(size=workers)


def run_files(model, jobs: list[tuple[Path, Path]], progress, batch_size: int = 16,
              concurrency: int = 1, **run_many_kw) -> None:
    """Each ``(input, result)`` pair of `jobs` through Ray workers, results written by them."""
    ray = _ray()
    if not jobs:
        return
    ds = ray.data.from_items([{"input": str(i), "output": str(o)} for i, o in jobs])
    kw = {"batch_size": batch_size, **run_many_kw}
    done = ds.map_batches(_Files, fn_constructor_args=(_source(model), kw),
                          batch_size=batch_size, compute=_pool(concurrency), num_cpus=1,
                          batch_format="numpy")
    for batch in done.iter_batches(batch_size=None, batch_format="numpy"):
        progress.step(len(batch["output"]))


def init(address: str) -> None:
    """Connect to Ray: ``"local"`` starts a local instance, anything else is an address."""
    import logging

    ray = _ray()
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # per-block progress lines
    ray.data.DataContext.get_current().enable_progress_bars = False
    if ray.is_initialized():
        return
    if address == "local":
        ray.init(include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
