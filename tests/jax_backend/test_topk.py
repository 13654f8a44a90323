"""The JAX backend's TopK of float32 with a small k (`ops.extra._small_top_k`: k argmax
passes instead of a sort of the whole axis) gives exactly what ``jax.lax.top_k`` gives:
the same indices and the same value bits, ties (the lower index first), signed zeros,
infinities and NaNs of either sign included."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from itergraph.backends.jax.config import x64  # noqa: E402
from itergraph.backends.jax.ops.extra import SMALL_K, _small_top_k  # noqa: E402

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 2.5,
                    np.finfo(np.float32).max, np.finfo(np.float32).min], np.float32)


@pytest.mark.parametrize("seed", range(6))
def test_small_top_k_is_lax_top_k(seed):
    import jax.numpy as jnp

    rng = np.random.default_rng(seed)
    with x64():
        for _ in range(40):
            n = int(rng.integers(1, 60))
            k = int(rng.integers(0, min(n, SMALL_K) + 1))
            x = (rng.choice(SPECIAL, size=(2, 3, n)) if seed % 2 else
                 rng.standard_normal((2, 3, n)).round(1).astype(np.float32))  # many ties
            want_v, want_i = jax.lax.top_k(jnp.asarray(x), k)
            got_v, got_i = _small_top_k(jnp.asarray(x), k)
            np.testing.assert_array_equal(np.asarray(got_i), np.asarray(want_i))
            np.testing.assert_array_equal(np.asarray(got_v).view(np.int32),
                                          np.asarray(want_v).view(np.int32))
