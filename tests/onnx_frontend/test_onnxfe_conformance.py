"""The ONNX node test cases with loops, scans, If and sequences: read -> write -> ONNX Runtime
gives the expected outputs stored with each case (and so does the NumPy backend on the
imported graph)."""

from __future__ import annotations

import numpy as np
import pytest
from onnxfe_util import assert_same, numpy_backend, ort_run, written

from itergraph.frontends.onnx import read

ORT_MAX_OPSET = 26
# bfloat16 ReverseSequence exists from opset 27 only, which ONNX Runtime does not run yet
NEEDS_NEW_OPSET = {"test_reversesequence_bfloat16"}
KEYS = ("loop", "scan", "test_if", "sequence", "optional_get_element")


def _cases():
    from onnx.backend.test.case.node import collect_testcases

    with np.errstate(all="ignore"):
        cases = collect_testcases(None)
    return {c.name: c for c in cases if any(k in c.name for k in KEYS)}


CASES = _cases()


def _feeds(model, inputs):
    names = [i.name for i in model.graph.input]
    return {n: x if isinstance(x, list) or x is None else np.asarray(x)
            for n, x in zip(names, inputs)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_case(name):
    case = CASES[name]
    g = read(case.model)
    run_graph = numpy_backend()
    if name in NEEDS_NEW_OPSET:
        written(g)  # valid at its own opset; ONNX Runtime cannot run that opset
        m2 = None
    else:
        # ONNX Runtime runs released opsets only (26 for this version): write at most that
        m2 = written(g, ORT_MAX_OPSET if g.opset_imports[""] > ORT_MAX_OPSET else None)
    for inputs, outputs in case.data_sets:
        feeds = _feeds(case.model, inputs)
        if m2 is not None:
            assert_same(ort_run(m2, feeds), list(outputs))
        assert_same(list(run_graph(g, feeds).values()), list(outputs))
