"""SparseFillEmptyRows-16 against OpenVINO: read (as ``org.openvinotoolkit``
SparseFillEmptyRows, NumPy kernel; the JAX backend falls back, the output size depending on
the data), written back. No ONNX op fills sparse rows: no ONNX leg."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset16 as ops16
import pytest
from opcheck import check_op
from ov_helpers import run_ov, save

import itergraph as ig

CASES = {
    "some empty": ([[0, 1], [0, 3], [2, 0], [4, 2]], 6, 5),
    "none empty": ([[0, 0], [1, 2], [2, 1]], 3, 4),
    "unsorted": ([[3, 1], [0, 2], [3, 0], [1, 1]], 5, 3),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("idx_type", [np.int64, np.int32])
@pytest.mark.parametrize("val_type", [np.float32, np.int32])
def test_sparse_fill_empty_rows(case, idx_type, val_type, tmp_path):
    idx, rows, cols = CASES[case]
    idx = np.asarray(idx, idx_type).reshape(-1, 2)
    m = idx.shape[0]
    values = ops16.parameter([-1], val_type, name="values")
    indices = ops16.parameter([-1, 2], idx_type, name="indices")
    shape = ops16.constant(np.array([rows, cols], idx_type))
    default = ops16.constant(np.array(-7, val_type))
    node = ops16.sparse_fill_empty_rows(values, shape, indices, default)
    feeds = {"values": (np.arange(m) * 3 + 1).astype(val_type), "indices": idx}
    check_op(list(node.outputs()), [values, indices], feeds, tmp_path, to_onnx=False)


def test_sparse_fill_no_entries(tmp_path):
    """Zero entries: every row gets the default at column 0. The CPU plugin fails on an empty
    ``values`` input ("ptr is Null"), so itergraph is checked against the spec's result."""
    values = ops16.parameter([-1], np.float32, name="values")
    indices = ops16.parameter([-1, 2], np.int64, name="indices")
    node = ops16.sparse_fill_empty_rows(values, ops16.constant(np.int64([3, 2])), indices,
                                        ops16.constant(np.float32(-7)))
    path = save(ov.Model(list(node.outputs()), [values, indices]), tmp_path)
    feeds = {"values": np.zeros(0, np.float32), "indices": np.zeros((0, 2), np.int64)}
    with pytest.raises(RuntimeError, match="ptr is Null"):
        run_ov(path, feeds)
    got = list(ig.load(path).run(feeds).values())
    np.testing.assert_array_equal(got[0], [[0, 0], [1, 0], [2, 0]])
    np.testing.assert_array_equal(got[1], [-7, -7, -7])
    np.testing.assert_array_equal(got[2], [True, True, True])
