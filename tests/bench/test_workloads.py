"""The benchmark's workloads compute what their NumPy oracles say, on itergraph and ONNX Runtime.

Small sizes only: these tests check that `bench/loops.py` times correct programs, not speed.
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

import engines  # noqa: E402
import loops  # noqa: E402
import workloads  # noqa: E402

NAMES = [w.name for w in workloads.WORKLOADS]


def _check(got, want, what: str) -> None:
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.shape == np.shape(w), f"{what} output {k}: {g.shape} != {np.shape(w)}"
        assert g.dtype == np.asarray(w).dtype, f"{what} output {k}: dtype {g.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{what} output {k}")


@pytest.mark.parametrize("name", NAMES)
def test_itergraph_numpy_matches_oracle(name):
    model, feeds, _ = workloads.BY_NAME[name].make(small=True)
    got = ig.load(model).run(feeds)
    assert list(got) == [o.name for o in model.graph.output]
    _check(list(got.values()), workloads.BY_NAME[name].oracle(feeds), f"itergraph {name}")


@pytest.mark.parametrize("name", NAMES)
def test_onnxruntime_matches_oracle(name):
    model, feeds, _ = workloads.BY_NAME[name].make(small=True)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    _check(sess.run(None, feeds), workloads.BY_NAME[name].oracle(feeds), f"ORT {name}")


def test_loop_iteration_counts_are_data_dependent():
    """while_loop stops on its condition, not on a count: the oracle's length is the count."""
    w = workloads.BY_NAME["while_loop"]
    model, feeds, _ = w.make(small=True)
    n = w.iterations(feeds, w.oracle(feeds))
    x = 0.0
    for _ in range(n - 1):
        x = x * 0.999 + 1.0
        assert x < feeds["thr"]
    assert x * 0.999 + 1.0 >= feeds["thr"]


def test_ti_lstm_tensoriterator_matches_oracle(tmp_path):
    """The real OpenVINO TensorIterator form computes the oracle's Y on OpenVINO and on
    itergraph's OpenVINO reader."""
    import openvino as ov

    feeds, _ = workloads.ti_lstm_openvino(tmp_path / "ti.xml", seq=4, inp=32, hidden=16)
    compiled = ov.Core().compile_model(str(tmp_path / "ti.xml"), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled(feeds)[compiled.outputs[0]]
    want = workloads.ti_lstm_oracle(feeds)
    _check([got], want, "OpenVINO TI")
    _check(list(ig.load(tmp_path / "ti.xml").run(feeds).values()), want, "itergraph TI .xml")


def test_compare_flags_differences():
    a = [np.ones((2, 3), np.float32)]
    assert engines.compare(a, [a[0].copy()]) is None
    assert "shape" in engines.compare(a, [np.ones((3, 2), np.float32)])
    assert "error" in engines.compare(a, [a[0] + 1e-2])
    assert "values differ" in engines.compare([np.arange(3)], [np.arange(1, 4)])


def test_bench_script_prints_a_checked_table(capsys, monkeypatch):
    monkeypatch.setattr(loops, "configure_threads", lambda n: None)  # keep this process's env
    loops.main(["--quick", "--only", "tiny_loop", "--engines", "numpy,ort",
                "--budget", "0.01", "--markdown"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| tiny_loop |"))
    assert "µs/iter" in row and "MISMATCH" not in row and "error" not in row
