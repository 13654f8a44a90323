"""The check against the real-world corpus: the peer statuses each generator measured on the
converter's own file (ONNX Runtime, OpenVINO) are the oracle.

Whenever the check says a target passes, that peer ran the file; whenever it reports a
finding, the peer refused the file. A peer refusal about a loop construct (a Loop, an If, a
sequence split, the fill ops torch writes for a loop's initial values) must be predicted;
refusals for other reasons (ML-domain operators of sklearn files) are outside a loop check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import itergraph as ig
from itergraph.portability import check

sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))
from corpus import entries  # noqa: E402

PEERS = ("onnxruntime", "openvino")
LOOP_REFUSAL = re.compile(r"Loop-\d+|If-\d+|SplitToSequence|Loop node|ConstantFill|"
                          r"ConstantOfShape")
CASES = [(e, p) for e in entries() for p in PEERS if p in dict(e.peer)]


@pytest.mark.parametrize("entry,peer", CASES, ids=[f"{e.id}-{p}" for e, p in CASES])
def test_check_agrees_with_the_peer(entry, peer):
    status = dict(entry.peer)[peer]
    refused = status.startswith("error")
    try:
        report = check(entry.file, peer)
    except ig.ModelError:  # an invalid file: itergraph refuses to read it, as ORT does
        # (OpenVINO's import is more lenient on some: a list carried by a Loop-11)
        ort = dict(entry.peer).get("onnxruntime", "")
        assert ort.startswith("error"), "itergraph refuses to read a file ONNX Runtime runs"
        return
    if not report.ok:
        assert refused, f"check predicts a refusal that {peer} did not make:\n{report.text()}"
    if not refused:
        assert report.ok
    if refused and LOOP_REFUSAL.search(status):
        assert not report.ok, f"{peer} refused a loop construct unpredicted: {status}"


OV_ENTRIES = [e for e in entries() if e.format != "onnx"]


@pytest.mark.parametrize("entry", OV_ENTRIES, ids=[e.id for e in OV_ENTRIES])
def test_onnxruntime_check_of_an_openvino_file_agrees_with_the_convert_stage(entry):
    """The convert stage writes an OpenVINO IR entry as ONNX and runs ONNX Runtime on it;
    the stage is in the skip list when ONNX Runtime failed there."""
    from corpus import skip_reason

    ort_failed = "onnxruntime failed" in (skip_reason(entry, "convert") or "")
    assert check(entry.file, "onnxruntime").ok != ort_failed
