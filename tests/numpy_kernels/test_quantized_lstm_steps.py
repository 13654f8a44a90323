"""``DynamicQuantizeLSTM``'s in-place steps (`contrib_lstm_steps`): bitwise equal to the
shared generic step, and within ONNX Runtime's tolerance (its sigmoid and tanh are MLAS
polynomials), over directions, batches, clip, ``sequence_lens`` equal to the sequence, zero
points at the ends of uint8, and an R too large for an exact float32 product (then the
generic step runs)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.backends.numpy.kernels import contrib_lstm_steps
from onnx_builders import run_ort

rng = np.random.default_rng(5)


def _model(direction, H, inp, batch, seq, *, rz=120, r_codes=None, clip=None, lens=False):
    dirs = 2 if direction == "bidirectional" else 1
    w = rng.integers(0, 256, (dirs, inp, 4 * H)).astype(np.uint8)
    r = rng.integers(0, 256, (dirs, H, 4 * H)).astype(np.uint8) if r_codes is None \
        else r_codes(dirs, H)
    consts = {"W": w, "R": r, "B": (0.2 * rng.standard_normal((dirs, 8 * H))).astype(np.float32),
              "ws": np.full(dirs, 0.01, np.float32), "wz": np.full(dirs, 128, np.uint8),
              "rs": rng.uniform(0.002, 0.01, (dirs, 4 * H)).astype(np.float32),
              "rz": np.full((dirs, 4 * H), rz, np.uint8)}
    feeds = {"x": rng.standard_normal((seq, batch, inp)).astype(np.float32),
             "h0": (0.5 * rng.standard_normal((dirs, batch, H))).astype(np.float32),
             "c0": (0.5 * rng.standard_normal((dirs, batch, H))).astype(np.float32)}
    if lens:
        consts["lens"] = np.full(batch, seq, np.int32)
    names = ["x", "W", "R", "B", "lens" if lens else "", "h0", "c0", "", "ws", "wz", "rs", "rz"]
    attrs = {"hidden_size": H, "direction": direction}
    if clip is not None:
        attrs["clip"] = clip
    node = h.make_node("DynamicQuantizeLSTM", names, ["Y", "Y_h", "Y_c"], domain="com.microsoft",
                       **attrs)
    ins = [h.make_tensor_value_info(k, T.FLOAT, list(v.shape)) for k, v in feeds.items()]
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("Y", "Y_h", "Y_c")]
    g = h.make_graph([node], "g", ins, outs,
                     [numpy_helper.from_array(v, k) for k, v in consts.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                     ir_version=8)
    return m, feeds


def _generic(monkeypatch, m, feeds):
    with monkeypatch.context() as mp:
        mp.setattr(contrib_lstm_steps, "standard_cell", lambda *a: False)
        return ig.load(m).run(feeds, backend="numpy")


@pytest.mark.parametrize("direction,batch,clip,lens,rz", [
    ("forward", 1, None, False, 120),
    ("reverse", 3, None, True, 0),
    ("bidirectional", 2, 0.4, True, 255),
    ("bidirectional", 1, None, False, 128),
])
def test_in_place_steps_match_generic_and_onnx_runtime(monkeypatch, direction, batch, clip,
                                                       lens, rz):
    m, feeds = _model(direction, 8, 5, batch, 7, rz=rz, clip=clip, lens=lens)
    called = []
    run = contrib_lstm_steps.run

    def spy(*a):
        called.append(1)
        return run(*a)

    monkeypatch.setattr(contrib_lstm_steps, "run", spy)
    got = ig.load(m).run(feeds, backend="numpy")
    assert called  # the in-place steps ran
    for k, v in _generic(monkeypatch, m, feeds).items():
        np.testing.assert_array_equal(got[k], v, err_msg=k)
    for k, v in run_ort(m, feeds).items():
        np.testing.assert_allclose(got[k], v, rtol=1e-5, atol=1e-5, err_msg=k)


def test_large_r_runs_the_generic_step(monkeypatch):
    """Codes 0 and 255 against a zero point of 128 and H = 520: 255 * L1(R) >= 2**24, so
    the recurrent product is not exact in float32 and the generic step (exact products)
    runs."""
    def r_codes(dirs, H):
        return rng.choice(np.array([0, 255], np.uint8), size=(dirs, H, 4 * H))

    m, feeds = _model("forward", 520, 3, 1, 3, rz=128, r_codes=r_codes)
    monkeypatch.setattr(contrib_lstm_steps, "run", None)  # would fail if called
    got = ig.load(m).run(feeds, backend="numpy")
    for k, v in run_ort(m, feeds).items():
        np.testing.assert_allclose(got[k], v, rtol=1e-5, atol=1e-5, err_msg=k)


def test_input_products_on_narrow_weight_blocks(monkeypatch):
    """Constant W of several blocks' columns: each direction's input product runs on W's
    int8 column blocks (size thresholds lowered to keep the model small), bitwise the
    result of the one float32 product, and within ONNX Runtime's tolerance."""
    from itergraph.semantics import int_blocks

    m, feeds = _model("bidirectional", 40, int_blocks.MIN_K, 1, 7)  # W [2, 128, 160]
    plain = ig.load(m).run(feeds, backend="numpy")  # W under the size threshold
    monkeypatch.setattr(int_blocks, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(int_blocks, "BLOCK_ELEMENTS", 64 * int_blocks.MIN_K)
    used = []
    blocked = int_blocks.IntBlocks.matmul

    def spy(self, a):
        used.append(self.blocks[0][1].dtype)
        return blocked(self, a)

    monkeypatch.setattr(int_blocks.IntBlocks, "matmul", spy)
    got = ig.load(m).run(feeds, backend="numpy")
    assert used == [np.dtype(np.int8)] * 2  # one input product per direction
    for k, v in plain.items():
        np.testing.assert_array_equal(got[k], v, err_msg=k)
    for k, v in run_ort(m, feeds).items():
        np.testing.assert_allclose(got[k], v, rtol=1e-5, atol=1e-5, err_msg=k)
