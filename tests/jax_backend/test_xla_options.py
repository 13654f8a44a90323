"""``ITERGRAPH_XLA_OPTIONS``: the XLA options every program of the JAX backend compiles with."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

from itergraph.backends.jax import config  # noqa: E402


@pytest.fixture
def options(monkeypatch):
    def set_spec(spec: str) -> dict:
        monkeypatch.setenv("ITERGRAPH_XLA_OPTIONS", spec)
        monkeypatch.setattr(config, "_options", None)
        return config.compiler_options()
    return set_spec


def test_option_values_are_typed_as_xla_reads_them(options):
    got = options("xla_cpu_prefer_vector_width=256 xla_cpu_enable_fast_min_max=false "
                  "xla_cpu_use_xnnpack=True")
    assert got == {"xla_cpu_prefer_vector_width": 256, "xla_cpu_enable_fast_min_max": False,
                   "xla_cpu_use_xnnpack": True}
    # XLA refuses a boolean option given as a string; these compile and run
    f = config.jit(lambda x: x * 2 + 1)
    np.testing.assert_array_equal(np.asarray(f(np.arange(3.0, dtype=np.float32))), [1, 3, 5])


def test_empty_spec_selects_xla_defaults(options):
    assert options("") == {}
