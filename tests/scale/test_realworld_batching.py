"""`run_many` on the real-world corpus: every exported model the batch-axis proof admits
gives, batched with other inputs, the framework's own outputs for its feeds and the single
runs' outputs for the others; and the proof admits the common exporter patterns (shapes read
from the input to build a zero state or a reshape target)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))

from corpus import entries  # noqa: E402

import itergraph as ig  # noqa: E402
from itergraph.scale.run_many import batching_plan  # noqa: E402


def _admitted():
    out = []
    for e in entries():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = ig.load(e.file)
        except ig.Error:
            continue
        axes, verdict = batching_plan(m)
        if verdict.ok:
            out.append((e, m, axes))
    return out


def test_admitted_corpus_models_batch_to_the_frameworks_and_single_runs_outputs():
    admitted = _admitted()
    assert len(admitted) >= 20, [e.id for e, _, _ in admitted]
    assert any("Shape" in {n.op_type for _, n in m.graph.walk()} for _, m, _ in admitted)
    rng = np.random.default_rng(0)
    failures = []
    for e, m, _ in admitted:
        feeds = e.feeds()
        other = {k: (x * (1 + 0.1 * rng.standard_normal(x.shape))).astype(x.dtype)
                 if x.dtype.kind == "f" else x for k, x in feeds.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = list(m.run_many([other, feeds, other], batch_size=2))
            single = m.run(other)
        for k, want in zip(got[1], e.expected()):
            if not np.allclose(got[1][k], want, rtol=e.rtol, atol=e.atol, equal_nan=True):
                failures.append(f"{e.id}: output {k} differs from the framework's")
        for g in (got[0], got[2]):
            for k, w in single.items():
                if g[k].shape != w.shape or not np.allclose(g[k], w, rtol=1e-4, atol=1e-5,
                                                            equal_nan=True):
                    failures.append(f"{e.id}: output {k} differs from its single run")
    assert not failures, "\n".join(failures)
