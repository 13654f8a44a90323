"""OpenVINO ``SparseFillEmptyRows`` (domain ``org.openvinotoolkit``, from
``SparseFillEmptyRows-16``): a 2-D sparse tensor (``values [M]``, ``indices [M, 2]``,
``dense_shape [2]``) with ``default_value`` placed at column 0 of every row that holds no
entry. Outputs: the indices ``[M', 2]`` and values ``[M']`` sorted by (row, column), and a
boolean per row telling whether it was empty. NumPy only (the output size depends on the data).
"""

from __future__ import annotations

import numpy as np

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def sparse_fill_empty_rows(values, dense_shape, indices, default_value):
    values = np.asarray(values)
    indices = np.asarray(indices).reshape(-1, 2)
    rows = int(np.asarray(dense_shape).reshape(-1)[0])
    empty = np.ones(rows, bool)
    empty[indices[:, 0]] = False
    new_rows = np.flatnonzero(empty).astype(indices.dtype)
    all_idx = np.concatenate([indices, np.stack([new_rows, np.zeros_like(new_rows)], axis=1)])
    fill = np.full(new_rows.size, np.asarray(default_value).reshape(()), values.dtype)
    all_vals = np.concatenate([values, fill])
    order = np.lexsort((all_idx[:, 1], all_idx[:, 0]))  # stable: equal pairs keep their order
    return all_idx[order], all_vals[order], empty
