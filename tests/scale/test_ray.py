"""Ray: `itergraph.ray.map_batches` over a Ray Data dataset, and ``itergraph run-many --ray``
killed midway and restarted, on one local Ray instance for the module (starting Ray takes
10-20 s)."""

from __future__ import annotations

import numpy as np
import pytest
import ray
import scale_models as M
from killrestart import kill_and_restart

import itergraph as ig
import itergraph.ray as ig_ray


@pytest.fixture(scope="module")
def ray_address():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def test_map_batches_equals_single_runs_in_order(ray_address, tmp_path):
    import onnx

    path = tmp_path / "lstm.onnx"
    onnx.save(M.lstm_scan(), path)
    feeds = M.lstm_feeds(10, lengths=(5,))
    ds = ray.data.from_items([{"id": i, **f} for i, f in enumerate(feeds)])  # a row per input
    m = ig.load(path)
    rows = ig_ray.map_batches(str(path), ds, batch_size=4, concurrency=2).take_all()
    assert sorted(r["id"] for r in rows) == list(range(len(feeds)))
    for r in rows:
        want = m.run(feeds[r["id"]])
        for k in want:
            np.testing.assert_allclose(r[k], want[k], rtol=1e-5, atol=1e-6)


def test_run_many_cli_on_ray_killed_midway_and_restarted(ray_address, tmp_path):
    kill_and_restart(tmp_path, ["--ray", ray_address, "--workers", "2"], n=200, steps=300,
                     at_least=4, timeout=180)
