"""The recurrent bench's models compute what their oracle says, on every engine it times.

Small sizes only: these tests check that `bench/recurrent.py` times correct programs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import itergraph as ig

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import recurrent  # noqa: E402
import recurrent_models as rm  # noqa: E402

CASES = [(c, f) for c in rm.CELLS for f in rm.FORMS]


def _check(got, want, what: str) -> None:
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{what} output {k}")


def _peer(spec, form: str, feeds: dict, tmp_path) -> list:
    if form in rm.ONNX_FORMS:
        m = rm.onnx_model(spec, form)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return s.run(None, feeds)
    import openvino as ov

    path = str(tmp_path / "m.xml")
    names = rm.openvino_model(spec, form, path)
    c = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    res = c.create_infer_request().infer(feeds)
    by_name = {n: res[o] for o in c.outputs for n in o.get_names()}
    return [by_name[n] for n in names]


def _source(spec, form: str, tmp_path):
    if form in rm.ONNX_FORMS:
        return rm.onnx_model(spec, form)
    path = tmp_path / "ig.xml"
    rm.openvino_model(spec, form, str(path))
    return path


@pytest.mark.parametrize("cell,form", CASES)
def test_form_matches_oracle_on_its_runtime_and_on_itergraph(cell, form, tmp_path):
    spec = rm.Spec(cell, batch=3, seq=5, inp=6, hidden=4)
    feeds = spec.feeds()
    want = rm.oracle(spec, feeds, rm.form_lengths(spec, form))
    ff = rm.form_feeds(form, feeds, spec)
    _check(rm.canonical(form, _peer(spec, form, ff, tmp_path)), want, f"peer {form}")
    got = ig.load(_source(spec, form, tmp_path)).run(ff)
    assert list(got) == ["Y", *spec.finals]
    _check(rm.canonical(form, list(got.values())), want, f"itergraph {form}")


def test_bench_script_prints_a_checked_table(capsys, monkeypatch):
    import loops

    monkeypatch.setattr(loops, "configure_threads", lambda n: None)  # keep this process's env
    recurrent.main(["--cells", "gru", "--forms", "op,scan_gemm", "--batch", "2", "--seq", "3",
                    "--hidden", "4", "--input", "5", "--engines", "numpy,ort",
                    "--budget", "0.01", "--max-repeats", "3", "--markdown"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| gru |")]
    assert len(rows) == 4 and not any("MISMATCH" in r or "error" in r for r in rows)
