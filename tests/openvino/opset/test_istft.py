"""ISTFT-16 against OpenVINO: read (an ONNX subgraph with a constant frame_size, else
``org.openvinotoolkit`` ISTFT), run on NumPy and JAX, written back, and the ONNX copy run by ONNX
Runtime (subgraph only: OpenVINO's ONNX frontend reads no ISTFT). A NumPy loop (inverse real
DFT per frame, window, overlap-add, division by the summed squared window) pins the semantics;
the round trip STFT -> ISTFT gives the signal back."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset16 as ops16
import pytest
from opcheck import check_op
from ov_helpers import run_ov, save

import itergraph as ig
from itergraph.backends.jax import explain
from itergraph.errors import Error, ModelError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(97)


def _loop(data, window, fs, step, length, center, normalized):
    spec = data[..., 0].astype(np.float64) + 1j * data[..., 1]
    frames = spec.shape[-1]
    left = (fs - len(window)) // 2
    win = np.zeros(fs)
    win[left:left + len(window)] = window
    total = (frames - 1) * step + fs
    y = np.zeros(spec.shape[:-2] + (total,))
    env = np.zeros(total)
    for t in range(frames):
        y[..., t * step:t * step + fs] += np.fft.irfft(spec[..., t], n=fs) * win
        env[t * step:t * step + fs] += win * win
    if normalized:
        y *= np.sqrt(fs)
    y = np.where(env != 0, y / np.where(env != 0, env, 1), 0)
    start = fs // 2 if center else 0
    n = length if length is not None else (total - fs if center else total)
    out = np.zeros(spec.shape[:-2] + (n,))
    keep = min(n, total - start)
    out[..., :keep] = y[..., start:start + keep]
    return out


CASES = [
    # batch, frame_size, frame_step, window length, frames, center, normalized, signal_length
    (None, 8, 2, 8, 5, False, False, None),
    (None, 8, 2, 8, 5, True, False, None),
    (2, 8, 3, 6, 5, True, True, None),
    (2, 7, 3, 7, 4, False, True, 30),
    (2, 7, 3, 7, 4, True, False, 9),
    (3, 9, 4, 5, 6, False, False, 12),
    (1, 16, 4, 16, 7, True, False, 24),
    (2, 6, 6, 6, 3, False, False, None),  # no overlap: a zero window end leaves a gap
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_istft(case, tmp_path):
    batch, fs, step, wlen, frames, center, normalized, length = case
    shape = (fs // 2 + 1, frames, 2) if batch is None else (batch, fs // 2 + 1, frames, 2)
    data = rng.standard_normal(shape).astype(np.float32)
    window = rng.uniform(0.2, 1.0, wlen).astype(np.float32)
    if case[-2:] == (False, None) and step == fs:
        window[-1] = 0.0
    d = ops16.parameter(list(shape), np.float32, name="d")
    w = ops16.parameter([wlen], np.float32, name="w")
    extra = {} if length is None else {"signal_length": ops16.constant(np.int64(length))}
    y = ops16.istft(d, w, ops16.constant(np.int64(fs)), ops16.constant(np.int32(step)), center,
                    normalized, **extra)
    feeds = {"d": data, "w": window}
    _, want = check_op([y], [d, w], feeds, tmp_path, rtol=1e-4, atol=1e-4)
    loop = _loop(data, window, fs, step, length, center, normalized)
    np.testing.assert_allclose(want[0], loop, rtol=1e-4, atol=1e-4)


def _hann(n):
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)


@pytest.mark.parametrize("center", [False, True])
def test_istft_inverts_stft(center, tmp_path):
    """OpenVINO's STFT-15 then ISTFT-16: the signal comes back (where windows overlap)."""
    fs, step, n = 16, 4, 64
    signal = rng.standard_normal((2, n)).astype(np.float32)
    s = ops16.parameter([2, n], np.float32, name="s")
    win = ops16.constant(_hann(fs))
    spec = ops16.stft(s, win, ops16.constant(np.int64(fs)), ops16.constant(np.int64(step)),
                      transpose_frames=True) if not center else None
    if center:  # STFT-15 has no centring: reflect-pad by frame_size // 2 first
        padded = ops16.pad(s, [0, fs // 2], [0, fs // 2], "reflect")
        spec = ops16.stft(padded, win, ops16.constant(np.int64(fs)),
                          ops16.constant(np.int64(step)), transpose_frames=True)
    y = ops16.istft(spec, win, ops16.constant(np.int64(fs)), ops16.constant(np.int64(step)),
                    center, False, signal_length=ops16.constant(np.int64(n)))
    _, want = check_op([y], [s], {"s": signal}, tmp_path, rtol=1e-4, atol=1e-4)
    lo, hi = (0, n) if center else (1, n - fs + step)
    np.testing.assert_allclose(want[0][:, lo:hi], signal[:, lo:hi], rtol=1e-4, atol=1e-4)


def test_istft_dynamic_shapes_and_inputs(tmp_path):
    """Dynamic batch and frames; frame_step and signal_length as parameters."""
    d = ops16.parameter([-1, 5, -1, 2], np.float32, name="d")
    w = ops16.parameter([8], np.float32, name="w")
    step = ops16.parameter([], np.int64, name="step")
    length = ops16.parameter([], np.int64, name="len")
    y = ops16.istft(d, w, ops16.constant(np.int64(8)), step, False, True, signal_length=length)
    feeds = {"d": rng.standard_normal((3, 5, 6, 2)).astype(np.float32),
             "w": rng.uniform(0.2, 1, 8).astype(np.float32),
             "step": np.array(3, np.int64), "len": np.array(20, np.int64)}
    check_op([y], [d, w, step, length], feeds, tmp_path, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("length", [None, 17, 30])
def test_istft_runtime_frame_size(length, tmp_path):
    """A run-time frame_size: ``org.openvinotoolkit`` ISTFT (no ONNX leg)."""
    d = ops16.parameter([2, 5, 6, 2], np.float32, name="d")
    w = ops16.parameter([6], np.float32, name="w")
    fs = ops16.parameter([], np.int32, name="fs")
    extra = {} if length is None else {"signal_length": ops16.constant(np.int64(length))}
    y = ops16.istft(d, w, fs, ops16.constant(np.int64(3)), True, False, **extra)
    feeds = {"d": rng.standard_normal((2, 5, 6, 2)).astype(np.float32),
             "w": rng.uniform(0.2, 1, 6).astype(np.float32), "fs": np.array(8, np.int32)}
    g, want = check_op([y], [d, w, fs], feeds, tmp_path, rtol=1e-4, atol=1e-4, to_onnx=False)
    assert ("org.openvinotoolkit", "ISTFT") in {(n.domain, n.op_type) for n in g.nodes}
    loop = _loop(feeds["d"], feeds["w"], 8, 3, length, True, False)
    np.testing.assert_allclose(want[0], loop, rtol=1e-4, atol=1e-4)


def _run_both(path, feeds):
    """itergraph's outputs on NumPy and on JAX for the OpenVINO IR at `path`."""
    model = ig.load(read(path))
    return [list(model.run(feeds, backend=be).values())[0] for be in ("numpy", "jax")]


@pytest.mark.parametrize("runtime_size", [False, True])
def test_istft_signal_length_spec_vs_plugin(runtime_size, tmp_path):
    """signal_length 0 gives an empty signal (the spec: the output has signal_length values;
    the CPU plugin crashes on it, so it is not run here) and a negative one the default length
    (OpenVINO's reference implementation; the CPU plugin refuses it: asserted)."""
    d = ops16.parameter([5, 4, 2], np.float32, name="d")
    w = ops16.parameter([8], np.float32, name="w")
    length = ops16.parameter([], np.int32, name="len")
    fs = ops16.parameter([], np.int64, name="fs") if runtime_size else \
        ops16.constant(np.int64(8))
    y = ops16.istft(d, w, fs, ops16.constant(np.int64(2)), False, False, signal_length=length)
    params = [d, w, length] + ([fs] if runtime_size else [])
    path = save(ov.Model([y], params), tmp_path)
    feeds = {"d": rng.standard_normal((5, 4, 2)).astype(np.float32),
             "w": rng.uniform(0.2, 1, 8).astype(np.float32)}
    if runtime_size:
        feeds["fs"] = np.array(8, np.int64)
    for n in (-1, 0):
        feeds["len"] = np.array(n, np.int32)
        want = _loop(feeds["d"], feeds["w"], 8, 2, None if n < 0 else n, False, False)
        for got in _run_both(path, feeds):
            assert got.shape == ((3 * 2 + 8,) if n < 0 else (0,))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    feeds["len"] = np.array(-1, np.int32)
    with pytest.raises(RuntimeError, match="not in range"):
        run_ov(path, feeds)
    feeds["len"] = np.array(11, np.int32)
    check_op([y], params, feeds, tmp_path / "ok", rtol=1e-4, atol=1e-4, to_onnx=not runtime_size)


def test_istft_f16(tmp_path):
    d = ops16.parameter([2, 5, 4, 2], np.float16, name="d")
    w = ops16.parameter([8], np.float16, name="w")
    y = ops16.istft(d, w, ops16.constant(np.int64(8)), ops16.constant(np.int64(2)), True, False)
    feeds = {"d": rng.standard_normal((2, 5, 4, 2)).astype(np.float16),
             "w": rng.uniform(0.5, 1, 8).astype(np.float16)}
    check_op([y], [d, w], feeds, tmp_path, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("runtime_size", [False, True])
def test_istft_compiles_on_jax(runtime_size, tmp_path):
    d = ops16.parameter([2, 5, 4, 2], np.float32, name="d")
    w = ops16.parameter([8], np.float32, name="w")
    fs = ops16.parameter([], np.int64, name="fs") if runtime_size else \
        ops16.constant(np.int64(8))
    y = ops16.istft(d, w, fs, ops16.constant(np.int64(2)), True, True)
    params = [d, w, fs] if runtime_size else [d, w]
    g = read(save(ov.Model([y], params), tmp_path))
    ops = {(n.domain, n.op_type) for n in g.nodes}
    assert (("org.openvinotoolkit", "ISTFT") in ops) == runtime_size
    feeds = {"d": rng.standard_normal((2, 5, 4, 2)).astype(np.float32),
             "w": rng.uniform(0.5, 1, 8).astype(np.float32)}
    if runtime_size:
        feeds["fs"] = np.array(8, np.int64)
    assert all(rec.compiles for rec in explain(g, feeds))


def test_istft_bin_count_mismatch_is_refused(tmp_path):
    """frame_size 8 needs 5 bins; frame_size and the bins are run-time values, so the run
    finds it out."""
    d = ops16.parameter([-1, -1, 2], np.float32, name="d")
    w = ops16.parameter([8], np.float32, name="w")
    fs = ops16.parameter([], np.int64, name="fs")
    y = ops16.istft(d, w, fs, ops16.constant(np.int64(2)), False, False)
    model = ig.load(read(save(ov.Model([y], [d, w, fs]), tmp_path)))
    with pytest.raises(Error, match="frequency bins"):
        model.run({"d": np.zeros((4, 3, 2), np.float32), "w": np.ones(8, np.float32),
                   "fs": np.array(8, np.int64)})


def test_istft_static_bin_count_mismatch_is_refused(tmp_path):
    """OpenVINO builds no such model (3 bins for frame_size 4 is right): its weights file is
    edited to frame_size 8, which needs 5 bins."""
    d = ops16.parameter([3, 4, 2], np.float32, name="d")
    w = ops16.parameter([4], np.float32, name="w")
    y = ops16.istft(d, w, ops16.constant(np.int64(4)), ops16.constant(np.int64(2)), False,
                    False)
    path = save(ov.Model([y], [d, w]), tmp_path)
    weights = path.with_suffix(".bin")
    four, eight = np.int64(4).tobytes(), np.int64(8).tobytes()
    assert weights.read_bytes().count(four) == 1
    weights.write_bytes(weights.read_bytes().replace(four, eight))
    with pytest.raises(ModelError, match="frequency bins"):
        read(path)
