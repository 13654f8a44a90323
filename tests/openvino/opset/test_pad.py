"""Pad-1/12 ``symmetric`` (a mirror that repeats the edge; ONNX Pad has none) against
OpenVINO: constant pads up to the axis length, negative pads (Pad-12 crops), pads computed at
run time, dynamic dims, an integer input; read, run on NumPy and JAX, written back to IR and
to ONNX for ONNX Runtime."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset12 as ops12
import pytest
from opcheck import check_op, rand
from ov_helpers import save

from itergraph.errors import UnsupportedError
from itergraph.frontends.openvino import read

rng = np.random.default_rng(59)


PADS = [([0, 1, 2], [1, 3, 0]), ([2, 3, 4], [2, 3, 4]), ([0, -1, 1], [1, 2, -2]),
        ([0, 0, 0], [0, 0, 0])]


# Pad-1 takes no negative pads: those run on Pad-12 only
@pytest.mark.parametrize("begin,end,version", [(b, e, v) for b, e in PADS for v in (1, 12)
                                               if v == 12 or min(b + e) >= 0])
def test_pad_symmetric(begin, end, version, tmp_path):
    ops = ops1 if version == 1 else ops12
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    y = ops.pad(x, ops.constant(np.array(begin, np.int64)),
                ops.constant(np.array(end, np.int64)), "symmetric")
    check_op([y], [x], {"x": rand(rng, 2, 3, 4)}, tmp_path)


def test_pad_symmetric_runtime_pads_dynamic_dims(tmp_path):
    x = ops12.parameter([-1, -1], np.int32, name="x")
    lo = ops12.parameter([2], np.int64, name="lo")
    hi = ops12.parameter([2], np.int32, name="hi")
    y = ops12.pad(x, lo, hi, "symmetric")
    feeds = {"x": rng.integers(-9, 9, (3, 5)).astype(np.int32),
             "lo": np.array([3, 1], np.int64), "hi": np.array([0, 5], np.int32)}
    check_op([y], [x, lo, hi], feeds, tmp_path)


def test_pad_symmetric_unknown_rank_refused(tmp_path):
    x = ops12.parameter(ov.PartialShape.dynamic(), np.float32, name="x")
    lo = ops12.parameter([-1], np.int64, name="lo")
    y = ops12.pad(x, lo, lo, "symmetric")
    path = save(ov.Model([y], [x, lo]), tmp_path)
    with pytest.raises(UnsupportedError, match="symmetric"):
        read(path)
