"""The ONNX node-suite cases about loops, branches, sequences, optionals and recurrent cells,
and about the lowerings of quantized products, Lp pooling and the normalizations, on the
JAX backend.

Same expectations as ``tests/conformance`` (outputs of every data set match the suite's),
through ``itergraph.onnx_backend`` with ``backend="jax"``; parts that cannot compile fall back to
NumPy, so every case must pass.
"""

from __future__ import annotations

import warnings

import pytest

from conformance.node_suite import _normalize, assert_similar, cases, known_failures

KEYS = ("loop", "scan", "_if", "range", "lstm", "gru", "_rnn_", "slice", "top_k", "sequence",
        "optional", "resize", "scatternd", "gathernd", "quantizelinear", "trilu", "swish",
        "rms_normalization", "lppool", "lpnormalization", "group_normalization", "mvn",
        "qlinearconv", "qlinearmatmul", "matmulinteger", "convinteger", "reversesequence")
KNOWN = known_failures()
CASES = [c for c in cases() if any(k in c.name for k in KEYS) and c.name not in KNOWN]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case_on_jax(case):
    import itergraph.onnx_backend as backend

    rep = backend.prepare(case.model, "CPU", backend="jax")
    for inputs, expected in case.data_sets:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = rep.run([_normalize(x) for x in inputs])
        expected = [_normalize(x) for x in expected]
        assert len(outs) == len(expected)
        for i, (r, o) in enumerate(zip(expected, outs)):
            assert_similar(r, o, case.rtol, case.atol, f"output {i}")
