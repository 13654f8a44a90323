"""One recurrence written as a Scan, as a Loop and unrolled gives one result everywhere."""

from hypothesis import given
from hypothesis import strategies as st
from loopgen import bounded, build_step, step_feeds, step_specs

import itergraph as ig
from onnx_builders import assert_same, run_ort

FORMS = ("scan", "loop", "unrolled")


@bounded(60)
@given(spec=step_specs(), seed=st.integers(0, 3))
def test_scan_loop_and_unrolled_agree_on_both_backends(spec, seed):
    feeds = step_feeds(spec, seed)
    models = {form: build_step(spec, form) for form in FORMS}
    # the unrolled model on ONNX Runtime is the reference (ORT dies on a Scan of length 0)
    want = run_ort(models["unrolled"], feeds)
    if spec.length:
        assert_same(run_ort(models["scan"], feeds), want)
    assert_same(run_ort(models["loop"], feeds), want)
    for form, m in models.items():
        loaded = ig.load(m)
        for backend in ("numpy", "jax"):
            try:
                assert_same(loaded.run(feeds, backend=backend), want)
            except AssertionError as e:
                raise AssertionError(f"{form} on {backend}: {e}") from e
