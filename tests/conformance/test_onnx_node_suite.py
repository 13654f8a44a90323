"""The ONNX backend node suite through ``itergraph.onnx_backend`` (one test per case).

Every case must pass except those in ``known_failures.txt``, which must still fail (so the
list stays honest). Two kinds of listed case are checked differently, by the prefix of their
reason: ``random:`` cases (values drawn at random) must produce outputs of the right
structure, shape and dtype; ``needs Pillow:`` cases must pass where Pillow is installed.
Loop, Scan, If, SequenceMap, Range, sequence and optional cases may never be listed.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from node_suite import cases, known_failures, run_case

KNOWN = known_failures()
CASES = cases()
NAMES = {c.name for c in CASES}
HAVE_PILLOW = importlib.util.find_spec("PIL") is not None

# Ops (and name fragments) whose cases must all pass: the constructs itergraph exists for.
MUST_PASS_OPS = {"Loop", "Scan", "If", "SequenceMap", "Range", "Optional", "OptionalHasElement",
                 "OptionalGetElement", "SequenceEmpty", "SequenceConstruct", "SequenceInsert",
                 "SequenceAt", "SequenceErase", "SequenceLength", "SplitToSequence",
                 "ConcatFromSequence"}
MUST_PASS_NAMES = ("loop", "scan", "_if", "sequence", "optional", "range")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case):
    reason = KNOWN.get(case.name)
    if reason is None or (reason.startswith("needs Pillow") and HAVE_PILLOW):
        run_case(case)
    elif reason.startswith("random"):
        outs = run_case(case, values=False)
        for o in outs:  # Bernoulli draws: every value is 0 or 1
            assert np.isin(np.asarray(o, dtype=np.float64), (0.0, 1.0)).all()
    else:
        with pytest.raises(Exception):  # noqa: B017 - any failure; listed with its reason
            run_case(case)


def test_known_failures_are_real_cases_with_reasons():
    assert set(KNOWN) <= NAMES, f"not in the suite: {sorted(set(KNOWN) - NAMES)}"
    assert all(KNOWN.values()), "every known failure needs a reason"


def test_control_flow_sequence_and_optional_cases_are_never_excused():
    for case in CASES:
        if case.name not in KNOWN:
            continue
        ops = {n.op_type for n in case.model.graph.node}
        assert not ops & MUST_PASS_OPS, f"{case.name} uses {sorted(ops & MUST_PASS_OPS)}"
        assert not any(k in case.name for k in MUST_PASS_NAMES), case.name


def test_pass_rate_at_least_95_percent():
    assert (len(CASES) - len(KNOWN)) / len(CASES) >= 0.95
