"""DFT-7, IDFT-7, RDFT-9 and IRDFT-9 against OpenVINO: one and several axes, negative axes,
signal sizes that pad and trim; read, written back to IR and to ONNX."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset9 as ops
import pytest
from opcheck import check_op, rand
from ov_helpers import run_itergraph, run_ov, save

rng = np.random.default_rng(29)
TOL = {"rtol": 1e-4, "atol": 1e-4}
CASES = [([2], None), ([1, 2], None), ([-1], None), ([0, 2], [4, -1]), ([2], [8]),
         ([1, 2], [3, 5])]


def _i64(v):
    return ops.constant(np.array(v, np.int64))


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("axes,sizes", CASES)
def test_dft_idft(inverse, axes, sizes, tmp_path):
    x = ops.parameter([3, 4, 6, 2], np.float32, name="x")
    f = ops.idft if inverse else ops.dft
    y = f(x, _i64(axes), None if sizes is None else _i64(sizes))
    check_op([y], [x], {"x": rand(rng, 3, 4, 6, 2)}, tmp_path, **TOL)


# the CPU plugin refuses an RDFT signal longer than the input ("not supported yet")
@pytest.mark.parametrize("axes,sizes", [c for c in CASES if (c[0] != [2] or c[1] is None)
                                        and -1 not in (c[1] or [])])
def test_rdft(axes, sizes, tmp_path):
    x = ops.parameter([3, 4, 6], np.float32, name="x")
    y = ops.rdft(x, _i64(axes), None if sizes is None else _i64(sizes))
    check_op([y], [x], {"x": rand(rng, 3, 4, 6)}, tmp_path, **TOL)


# a -1 signal size among others kills the CPU plugin's RDFT/IRDFT (std::vector max_size)
REAL_CASES = [c for c in CASES if -1 not in (c[1] or [])]


@pytest.mark.parametrize("axes,sizes", [c for c in REAL_CASES if c[0] != [2] or c[1] is None])
def test_irdft(axes, sizes, tmp_path):
    x = ops.parameter([3, 4, 4, 2], np.float32, name="x")
    y = ops.irdft(x, _i64(axes), None if sizes is None else _i64(sizes))
    check_op([y], [x], {"x": rand(rng, 3, 4, 4, 2)}, tmp_path, **TOL)


def test_irdft_padded_half_follows_the_specification(tmp_path):
    """A signal_size asking for more one-sided inputs than there are: the specification pads
    them with zeros (NumPy's ``irfft(n=...)``); the CPU plugin computes something else."""
    x = ops.parameter([2, 4, 2], np.float32, name="x")
    y = ops.irdft(x, _i64([1]), _i64([8]))
    a = rand(rng, 2, 4, 2)
    want = np.fft.irfft(a[..., 0] + 1j * a[..., 1], n=8, axis=1)
    xml = save(ov.Model([y], [x]), tmp_path)
    got = run_itergraph(xml, {"x": a})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(run_ov(xml, {"x": a})[0], want, atol=1e-3)


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("frame,step", [(8, 4), (6, 3)])
def test_stft(batched, transpose, frame, step, tmp_path):
    import openvino.opset15 as ops15

    shape = [2, 30] if batched else [30]
    x = ops15.parameter(shape, np.float32, name="x")
    win = ops15.constant(np.hanning(frame).astype(np.float32))
    y = ops15.stft(x, win, ops15.constant(np.int64(frame)), ops15.constant(np.int64(step)),
                   transpose)
    check_op([y], [x], {"x": rand(rng, *shape)}, tmp_path, **TOL)
