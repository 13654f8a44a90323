"""ConvertPromoteTypes-14 and SegmentMax-16 against OpenVINO; read, written back, to ONNX."""

from __future__ import annotations

import numpy as np
import openvino.opset14 as ops14
import openvino.opset16 as ops16
import pytest
from opcheck import check_op

rng = np.random.default_rng(47)


@pytest.mark.parametrize("a,b,unsafe", [(np.float32, np.float16, False),
                                        (np.int32, np.int64, False),
                                        (np.int16, np.float64, False),
                                        (np.int64, np.float32, True), (np.uint8, np.int8, True),
                                        (np.bool_, np.int32, False)])
def test_convert_promote_types(a, b, unsafe, tmp_path):
    x = ops14.parameter([2, 3], a, name="x")
    y = ops14.parameter([3], b, name="y")
    c = ops14.convert_promote_types(x, y, promote_unsafe=unsafe)
    feeds = {"x": (rng.random((2, 3)) * 5).astype(a), "y": (rng.random(3) * 5).astype(b)}
    check_op([c.output(0), c.output(1)], [x, y], feeds, tmp_path, to_onnx=np.float16 not in (a, b))


@pytest.mark.parametrize("fill", ["ZERO", "LOWEST"])
@pytest.mark.parametrize("num", [None, 6])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_segment_max(fill, num, dtype, tmp_path):
    x = ops16.parameter([5, 3], dtype, name="x")
    ids = ops16.constant(np.array([0, 0, 2, 2, 3], np.int64))
    n = None if num is None else ops16.constant(np.int64(num))
    s = ops16.segment_max(x, ids, n, fill)
    check_op([s], [x], {"x": (rng.standard_normal((5, 3)) * 4).astype(dtype)}, tmp_path)


@pytest.mark.parametrize("flag", [True, False])
def test_if_at_the_top_level(flag, tmp_path):
    """If-8 built with openvino.opset8: the branches read the outer inputs, compute different
    shapes of arithmetic, and the taken branch's outputs come out."""
    import openvino as ov
    import openvino.opset8 as ops8

    x = ops8.parameter([2, 3], np.float32, name="x")
    c = ops8.parameter([], np.bool_, name="c")
    tx = ops8.parameter([2, 3], np.float32, name="tx")
    then = ov.Model([ops8.result(ops8.multiply(tx, ops8.constant(np.float32(2))))], [tx])
    ex = ops8.parameter([2, 3], np.float32, name="ex")
    other = ov.Model([ops8.result(ops8.subtract(ops8.exp(ex), ex))], [ex])
    node = ops8.if_op(c)
    node.set_then_body(then)
    node.set_else_body(other)
    node.set_input(x.output(0), tx, ex)
    out = node.set_output(then.get_results()[0], other.get_results()[0])
    feeds = {"x": rng.standard_normal((2, 3)).astype(np.float32), "c": np.array(flag)}
    check_op([out], [x, c], feeds, tmp_path)
