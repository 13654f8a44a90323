"""`IterationLimitError` comes exactly when a loop needs more than `max_iterations` iterations.

The limit bounds every loop on its own (each run of a nested loop counts from zero). The
iterations a loop needs are read off an unlimited ONNX Runtime run: the outer counter `n`,
and the inner loop's counter per outer iteration (`inner_ns`). A loop that never ends on its
own needs infinitely many.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from loopgen import bounded, build_loop, build_scan, loop_feeds, loop_specs, scan_feeds, scan_specs

import itergraph as ig
from itergraph.errors import IterationLimitError
from onnx_builders import assert_same, run_ort

BACKENDS = ("numpy", "jax")


def check_limit(loaded, feeds, needed, limits, want=None):
    for backend in BACKENDS:
        for limit in limits:
            if needed > limit:
                with pytest.raises(IterationLimitError, match=f"max_iterations={limit}"):
                    loaded.run(feeds, backend=backend, max_iterations=limit)
            else:
                got = loaded.run(feeds, backend=backend, max_iterations=limit)
                if want is not None:
                    assert_same(got, want)


@bounded(60)
@given(spec=loop_specs(terminating=False), seed=st.integers(0, 3), runaway=st.integers(0, 5))
def test_loop_limit_is_exact(spec, seed, runaway):
    m = build_loop(spec)
    feeds = loop_feeds(spec, seed)
    want = None
    if spec.terminates:
        want = run_ort(m, feeds)
        inner = want.get("inner_ns", np.zeros(0, np.int64))
        needed = max(int(want["n"]), int(inner.max(initial=0)))
        limits = sorted({max(needed - 1, 0), needed})  # the one just too small, and enough
    else:
        needed, limits = math.inf, [runaway]
    check_limit(ig.load(m), feeds, needed, limits, want)


@bounded(40)
@given(spec=scan_specs(), seed=st.integers(0, 3))
def test_scan_limit_is_exact(spec, seed):
    m = build_scan(spec)
    feeds = scan_feeds(spec, seed)
    inner = spec.elem[0] if spec.nested and spec.length else 0
    needed = max(spec.length, inner)
    check_limit(ig.load(m), feeds, needed, sorted({max(needed - 1, 0), needed}))
