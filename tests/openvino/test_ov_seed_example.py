"""The seed example: Example 2 of the TensorIterator-1 specification.

A [1, 25, 512] input sliced on axis 1 feeds an LSTMCell(256) body with a Reshape before and
after and two back edges. The fixture `data/ti_example2.xml` is the specification's XML inside a
small outer network; the `.bin` (offsets 0, 16, 3145744, 3149840 as in the example) is generated
here. OpenVINO cannot read the example as written (its LSTMCell is the legacy five-input form
with W and R side by side), so the oracle is the same network built with OpenVINO's LSTMCell-4
and the same weights; OpenVINO also runs itergraph's re-export of the fixture.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops
from ov_helpers import run_ov

from itergraph.backends.numpy import run_graph
from itergraph.frontends.openvino import read, write
from itergraph.ir import Loop, verify

FIXTURE = Path(__file__).parent / "data" / "ti_example2.xml"
HS, N_IN, SEQ = 256, 512, 25


def _weights(seed: int = 7):
    rng = np.random.default_rng(seed)
    wr = (rng.standard_normal((4 * HS, N_IN + HS)) * 0.05).astype(np.float32)
    b = (rng.standard_normal(4 * HS) * 0.1).astype(np.float32)
    return wr, b


def _bin(wr: np.ndarray, b: np.ndarray) -> bytes:
    parts = [np.array([1, N_IN], np.int64).tobytes(), wr.tobytes(), b.tobytes(),
             np.array([1, 1, HS], np.int64).tobytes()]
    data = b"".join(parts)
    assert len(data) == 3149840 + 24  # the offsets and sizes the example declares
    return data


def _openvino_equivalent(wr: np.ndarray, b: np.ndarray) -> ov.Model:
    X = ops.parameter([1, SEQ, N_IN], np.float32, name="X")
    H0 = ops.parameter([1, HS], np.float32, name="H0")
    C0 = ops.parameter([1, HS], np.float32, name="C0")
    xi = ops.parameter([1, 1, N_IN], np.float32, name="xi")
    hi = ops.parameter([1, HS], np.float32, name="hi")
    ci = ops.parameter([1, HS], np.float32, name="ci")
    x2 = ops.reshape(xi, ops.constant(np.array([1, N_IN], np.int64)), False)
    cell = ops.lstm_cell(x2, hi, ci, ops.constant(wr[:, :N_IN]), ops.constant(wr[:, N_IN:]),
                         ops.constant(b), HS)
    rc, rh = ops.result(cell.output(1)), ops.result(cell.output(0))
    ry = ops.result(ops.reshape(cell.output(0), ops.constant(np.array([1, 1, HS], np.int64)),
                                False))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rc, rh, ry], [xi, hi, ci], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(hi, H0.output(0), rh.output(0))
    ti.set_merged_input(ci, C0.output(0), rc.output(0))
    return ov.Model([ti.get_concatenated_slices(ry.output(0), 0, 1, 1, -1, 1)], [X, H0, C0])


def test_example2_loads_runs_and_matches_openvino(tmp_path):
    wr, b = _weights()
    g = read(FIXTURE.read_text(), _bin(wr, b))
    verify(g)
    (loop,) = [n for n in g.nodes if isinstance(n, Loop)]
    assert loop.origin == "openvino.TensorIterator"
    (s,) = loop.sliced
    assert (s.axis, s.start, s.end, s.stride, s.part_size, s.keep_axis) == (1, 0, -1, 1, 1, True)
    assert len(loop.carried) == 2 and len(loop.output_ports) == 1

    rng = np.random.default_rng(3)
    feeds = {"X": rng.standard_normal((1, SEQ, N_IN)).astype(np.float32),
             "H0": rng.standard_normal((1, HS)).astype(np.float32) * 0.1,
             "C0": rng.standard_normal((1, HS)).astype(np.float32) * 0.1}
    (got,) = run_graph(g, feeds).values()
    (want,) = run_ov(_openvino_equivalent(wr, b), feeds)
    assert got.shape == (1, SEQ, HS)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    write(g, tmp_path / "example2.xml")  # OpenVINO reads and runs itergraph's export too
    (again,) = run_ov(tmp_path / "example2.xml", feeds)
    np.testing.assert_allclose(again, want, rtol=1e-4, atol=1e-5)


def test_example2_from_files_beside_each_other(tmp_path):
    wr, b = _weights(11)
    (tmp_path / "m.xml").write_text(FIXTURE.read_text())
    (tmp_path / "m.bin").write_bytes(_bin(wr, b))
    g = read(tmp_path / "m.xml")  # the .bin beside the .xml by default
    feeds = {"X": np.ones((1, SEQ, N_IN), np.float32), "H0": np.zeros((1, HS), np.float32),
             "C0": np.zeros((1, HS), np.float32)}
    (got,) = run_graph(g, feeds).values()
    (want,) = run_ov(_openvino_equivalent(wr, b), feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
