"""Scripted PyTorch LSTMCell loops (exported by torch.onnx; `data/torch_loops/gen.py`) written
as OpenVINO IR by itergraph and run by OpenVINO's CPU plugin: the outputs equal torch's own,
shapes included, for 6 steps and for 0 steps where torch computes them. A history grown by
``torch.cat`` is a carried value that changes shape every step: OpenVINO's TensorIterator
returned only its last piece, so such a loop is written as ``Loop-5``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ov_helpers import run_ov

import itergraph as ig

DATA = Path(__file__).parent / "data" / "torch_loops"
MODELS = sorted(p.stem for p in DATA.glob("*.onnx") if not p.stem.startswith("packed"))
PACKED = sorted(p.stem for p in DATA.glob("packed_*.onnx"))


def _runs(name: str):
    data = np.load(DATA / f"{name}.npz")
    for steps in (6, 0):
        if f"steps{steps}_out0" not in data:
            continue
        feeds = {k: data[f"steps{steps}_{k}"] for k in ("x", "h", "c")}
        want = [data[f"steps{steps}_out{i}"] for i in range(3)]
        yield steps, feeds, want


@pytest.mark.parametrize("name", MODELS)
def test_torch_lstm_cell_loop_written_as_ir(name, tmp_path):
    model = ig.load(DATA / f"{name}.onnx")
    model.save(tmp_path / "m.xml")
    checked = 0
    for steps, feeds, want in _runs(name):
        got = run_ov(tmp_path / "m.xml", feeds)
        for g, w, out in zip(got, want, ("hs", "hn", "cn")):
            assert g.shape == w.shape, f"{steps} steps, {out}: {g.shape} != {w.shape}"
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{steps} steps")
        checked += 1
    assert checked >= 1


def test_the_data_holds_both_forms():
    assert {"stack_list_op17", "grow_by_cat_op17", "index_write_op17"} <= set(MODELS)


@pytest.mark.parametrize("name", PACKED)
def test_packed_sequences_with_dynamic_shapes(name, tmp_path):
    """``nn.LSTM``/``nn.GRU`` over packed sequences (ONNX ``sequence_lens``) with dynamic
    shapes: OpenVINO's CPU plugin ignores the lengths of its sequence ops unless the shapes
    are static, so the layer is written as a Scan of standard nodes; that IR, and the one
    written with the input shapes fixed (OpenVINO's sequence op), give torch's outputs."""
    data = np.load(DATA / f"{name}.npz")
    feeds = {"x": data["x"], "lens": data["lens"]}
    want = (data["out0"], data["out1"])
    model = ig.load(DATA / f"{name}.onnx")
    model.save(tmp_path / "dynamic.xml")
    for got, w in zip(run_ov(tmp_path / "dynamic.xml", feeds), want):
        assert got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)
    fixed = model.with_input_shapes({k: v.shape for k, v in feeds.items()})
    fixed.save(tmp_path / "m.xml")
    for got, w in zip(run_ov(tmp_path / "m.xml", feeds), want):
        assert got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)
