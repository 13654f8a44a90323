"""``devices="all"`` on 4 forced CPU host devices (the XLA flag must be set before JAX starts,
hence a subprocess): batches sharded over the 4 devices give the single runs' results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import jax, numpy as np
import itergraph as ig
import scale_models as M
from itergraph.scale import devices

assert jax.device_count() == 4, jax.devices()
placed = []
put = devices.Placer.put
def recording_put(self, x, axis):
    y = put(self, x, axis)
    placed.append((axis, len(y.sharding.device_set), y.sharding.is_fully_replicated))
    return y
devices.Placer.put = recording_put

for build, feeds in ((M.lstm_scan, M.lstm_feeds(10, lengths=(4, 7))),
                     (M.decoder, M.decoder_feeds(6))):
    m = ig.load(build())
    want = [m.run(f, backend="jax") for f in feeds]
    got = list(m.run_many(feeds, batch_size=3, backend="jax", devices="all"))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for k in w:
            assert g[k].shape == w[k].shape, (k, g[k].shape, w[k].shape)
            np.testing.assert_allclose(g[k], w[k], rtol=1e-5, atol=1e-6)
# the LSTM's batches (3 rounded up to 4 per batch) went out split over the 4 devices
assert placed and all(n == 4 and not rep for axis, n, rep in placed if axis == 0), placed
print("ok", len(placed))
"""


def test_devices_all_on_four_forced_host_devices_equals_single_runs():
    here = Path(__file__).parent
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(here), str(here.parent),
                                           os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("ok ") and int(r.stdout.split()[1]) >= 9  # 3 inputs x 3 batches
