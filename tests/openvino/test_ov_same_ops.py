"""Every row of `frontends/openvino/same_ops.py`, checked against OpenVINO in both directions.

A model of the row's OpenVINO op, built with OpenVINO's own Python API, is read by itergraph
(it must become the row's ONNX op), run on both backends against OpenVINO, written back by
itergraph and run by OpenVINO again (see `ov_helpers.check_model`).
"""

from __future__ import annotations

import re

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from ov_helpers import check_model

from itergraph.frontends.openvino.same_ops import SAME_OPS

LOGICAL = {"And", "Or", "Xor", "Not"}
_SPECIAL_NAMES = {"HSwish": "hswish", "SoftPlus": "softplus", "IsNaN": "is_nan",
                  "SoftSign": "softsign"}


def _factory(ov_name: str):
    name = _SPECIAL_NAMES.get(ov_name) or re.sub(r"(?<!^)(?=[A-Z])", "_", ov_name).lower()
    return getattr(ops, name)


def _data(onnx_op: str, shape, rng) -> np.ndarray:
    if onnx_op in LOGICAL:
        return rng.random(shape) < 0.5
    if onnx_op.startswith("Bitwise"):
        return rng.integers(-100, 100, shape).astype(np.int32)
    x = rng.uniform(0.1, 0.9, shape).astype(np.float32)
    if onnx_op == "Acosh":
        return x + 1.0
    if onnx_op == "IsNaN":
        x.flat[0] = np.nan
    return x


@pytest.mark.parametrize("row", SAME_OPS, ids=lambda r: f"{r.onnx}-{r.openvino}")
def test_same_op_row_against_openvino(row, tmp_path):
    rng = np.random.default_rng(0)
    shapes = [(2, 1)] if row.arity == 1 else [(2, 1), (3,)]
    feeds = {f"x{i}": _data(row.onnx, s, rng) for i, s in enumerate(shapes)}
    params = [ops.parameter(list(x.shape), x.dtype, name=n) for n, x in feeds.items()]
    node = _factory(row.openvino)(*params)
    assert node.get_type_name() == row.openvino
    assert node.get_type_info().version_id == f"opset{row.opset}"
    g, want = check_model(ov.Model([node], params, "m"), feeds, tmp_path)
    assert [n.op_type for n in g.nodes] == [row.onnx]
    if row.boolean:
        assert want[0].dtype == np.bool_
    written = (tmp_path / "written.xml").read_text()
    assert f'type="{row.openvino}"' in written
