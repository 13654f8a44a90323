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


#: (axis length, k): the edges (k = 0, k = n, n = 1, k = SMALL_K) and lengths around them
SHAPES = [(1, 0), (1, 1), (2, 2), (5, 3), (16, 16), (17, SMALL_K), (33, 1), (59, 7), (59, SMALL_K)]


@pytest.mark.parametrize(("n", "k"), SHAPES, ids=lambda v: str(v))
def test_small_top_k_is_lax_top_k(n, k):
    import jax.numpy as jnp

    rng = np.random.default_rng(n * 100 + k)
    special = rng.choice(SPECIAL, size=(40, 3, n))
    ties = rng.standard_normal((40, 3, n)).round(1).astype(np.float32)  # many ties
    x = np.concatenate([special, ties])
    with x64():  # one compiled program per shape: the rows are the draws
        want_v, want_i = jax.jit(jax.lax.top_k, static_argnums=1)(jnp.asarray(x), k)
        got_v, got_i = jax.jit(_small_top_k, static_argnums=1)(jnp.asarray(x), k)
    np.testing.assert_array_equal(np.asarray(got_i), np.asarray(want_i))
    np.testing.assert_array_equal(np.asarray(got_v).view(np.int32),
                                  np.asarray(want_v).view(np.int32))
