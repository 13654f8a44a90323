"""Placing a batch on several JAX devices: the batch axis split over a one-axis mesh.

The compiled program is the same jitted function a single run uses; given inputs sharded
along their batch axis, XLA partitions it over the devices (SPMD: one program, every device
running its share of the examples). Batch-free inputs are replicated.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError


class Placer:
    """`devices`: ``"all"`` (every device JAX sees), a count (the first N), or a list."""

    def __init__(self, devices: Any):
        import jax
        from jax.sharding import Mesh

        seen = jax.devices()
        if devices == "all":
            chosen = seen
        elif isinstance(devices, int) and not isinstance(devices, bool):
            if not 1 <= devices <= len(seen):
                raise InputError(f"devices={devices}: JAX sees {len(seen)} device(s)")
            chosen = seen[:devices]
        elif isinstance(devices, list | tuple) and devices:
            chosen = list(devices)
        else:
            raise InputError(f"devices must be 'all', a count or a list of JAX devices, "
                             f"got {devices!r}")
        self.devices = list(chosen)
        self.count = len(self.devices)
        self.mesh = Mesh(self.devices, ("batch",))

    def put(self, x, axis: int | None):
        """`x` on the mesh: split along `axis`, or replicated when `axis` is None."""
        import jax
        import numpy as np
        from jax.sharding import NamedSharding, PartitionSpec

        from ..backends.jax import config

        if not isinstance(x, np.ndarray):
            return x
        if axis is None:
            spec = PartitionSpec()
        else:
            spec = PartitionSpec(*([None] * (axis % x.ndim)), "batch")
        with config.x64():  # 64-bit inputs stay 64-bit, as in the backend's own calls
            return jax.device_put(x, NamedSharding(self.mesh, spec))
