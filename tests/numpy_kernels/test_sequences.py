"""Sequence and optional kernels: positions, copies, splitting, stacking, errors."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import call
from onnx import TensorProto
from onnx import helper as h

from itergraph import ExecutionError
from onnx_builders import I64, const, model, run_ig, run_ort, vi

F = TensorProto.FLOAT


def test_sequence_ops_match_onnxruntime():
    seq_t = h.make_sequence_type_proto(h.make_tensor_type_proto(F, [2, None]))
    nodes = [
        h.make_node("SplitToSequence", ["x", "three"], ["s"], axis=1),  # 3, 3, 1
        h.make_node("SequenceInsert", ["s", "y", "neg1"], ["s2"]),       # before the last
        h.make_node("SequenceErase", ["s2", "zero"], ["s3"]),
        h.make_node("SequenceAt", ["s3", "neg1"], ["last"]),
        h.make_node("SequenceLength", ["s3"], ["n"]),
        h.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        h.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1),
        h.make_node("ConcatFromSequence", ["s"], ["joined"], axis=1),
    ]
    m = model(nodes, [vi("x", F, [2, 7]), vi("y", F, [2, 2])],
              [h.make_value_info("s3", seq_t), vi("last", F, [2, None]), vi("n", I64, []),
               vi("stacked", F, [7, 2]), vi("joined", F, [2, 7])],
              inits=[const("three", 3, np.int64), const("neg1", -1, np.int64),
                     const("zero", 0, np.int64)], opset=18)
    feeds = {"x": np.arange(14, dtype=np.float32).reshape(2, 7),
             "y": -np.ones((2, 2), np.float32)}
    want = run_ort(m, feeds)
    got = run_ig(m, feeds)
    assert [a.shape for a in got["s3"]] == [a.shape for a in want["s3"]]
    for a, b in zip(got["s3"], want["s3"]):
        np.testing.assert_array_equal(a, b)
    for k in ("last", "n", "stacked", "joined"):
        np.testing.assert_array_equal(got[k], want[k])
        assert got[k].dtype == want[k].dtype


def test_insert_and_erase_do_not_change_their_input():
    a, b = np.zeros(2, np.float32), np.ones(2, np.float32)
    seq = [a]
    out = call("SequenceInsert", seq, b)
    assert len(seq) == 1 and len(out) == 2 and out[1] is b
    out2 = call("SequenceErase", out)
    assert len(out) == 2 and len(out2) == 1


@pytest.mark.parametrize("op,args", [
    ("SequenceAt", ([np.zeros(1)], np.array(1, np.int64))),
    ("SequenceAt", ([np.zeros(1)], np.array(-2, np.int64))),
    ("SequenceErase", ([], None)),
    ("SequenceInsert", ([np.zeros(1)], np.zeros(1), np.array(3, np.int64))),
    ("OptionalGetElement", (None,)),
])
def test_bad_positions_and_empty_optionals_raise_execution_errors(op, args):
    with pytest.raises(ExecutionError):
        call(op, *args)


def test_optionals():
    x = np.arange(3, dtype=np.float32)
    assert call("Optional", x) is x
    assert call("Optional", None) is None
    assert call("OptionalHasElement", x).item() is True
    assert call("OptionalHasElement", None).item() is False
    assert call("OptionalGetElement", [x]) == [x]
