"""Translators of OpenVINO's ``CTCGreedyDecoderSeqLen-6`` and ``CTCGreedyDecoder-1`` into ONNX
ops, without a loop.

Per batch entry: the best class of each time step below the sequence length (``ArgMax``; the
lowest class among equal scores); with ``merge_repeated`` a step equal to the one before it is
dropped, then blanks are dropped (``blank_index``, the last class by default); the kept
classes move to the front (their running count is their column), the rest of the row is -1.
Output 1 counts the kept classes. Both outputs are cast to ``classes_index_type`` and
``sequence_length_type`` (i32 by default).
"""

from __future__ import annotations

from .....ir.types import DataType
from ...builder import INT64_MAX, Builder
from ...elements import element_type_name, from_element_type
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64, BOOL = DataType.INT64, DataType.BOOL


def greedy_decode(b: Builder, scores, lens, blank, merge: bool):
    """(classes ``[N, T]`` with -1 after the kept ones, kept counts ``[N]``), both int64, of
    `scores` ``[N, T, C]`` with sequence lengths `lens` ``[N]``; `blank` is an int64 scalar
    or ``None`` for the last class."""
    best = b.op("ArgMax", [scores], {"axis": 2, "keepdims": 0, "select_last_index": 0},
                dtype=I64)  # [N, T]
    shape = b.op("Shape", [scores], dtype=I64)
    t_len = b.op("Slice", [shape, b.i64([1]), b.i64([2])], dtype=I64)
    steps = b.op("Range", [b.i64(0), b.op("Reshape", [t_len, b.i64([])], dtype=I64), b.i64(1)],
                 dtype=I64)
    lens = b.op("Unsqueeze", [b.to_i64(lens), b.i64([1])], dtype=I64)  # [N, 1]
    keep = b.op("Less", [steps, lens], dtype=BOOL)  # inside the sequence
    if blank is None:
        n_cls = b.op("Slice", [shape, b.i64([2]), b.i64([3])], dtype=I64)
        blank = b.op("Reshape", [b.op("Sub", [n_cls, b.i64([1])], dtype=I64), b.i64([])],
                     dtype=I64)
    not_blank = b.op("Not", [b.op("Equal", [best, blank], dtype=BOOL)], dtype=BOOL)
    keep = b.op("And", [keep, not_blank], dtype=BOOL)
    if merge:
        prev = b.op("Slice", [best, b.i64([0]), b.i64([-1]), b.i64([1])], dtype=I64)
        cur = b.op("Slice", [best, b.i64([1]), b.i64([INT64_MAX]), b.i64([1])], dtype=I64)
        changed = b.op("Not", [b.op("Equal", [cur, prev], dtype=BOOL)], dtype=BOOL)
        first = b.op("Slice", [keep, b.i64([0]), b.i64([1]), b.i64([1])], dtype=BOOL)
        rest = b.op("Slice", [keep, b.i64([1]), b.i64([INT64_MAX]), b.i64([1])], dtype=BOOL)
        rest = b.op("And", [rest, changed], dtype=BOOL)
        keep = b.op("Concat", [first, rest], {"axis": 1}, dtype=BOOL)
    kept = b.op("Cast", [keep], {"to": DataType.INT64.onnx}, dtype=I64)
    column = b.op("Sub", [b.op("CumSum", [kept, b.i64(1)], dtype=I64), b.i64(1)], dtype=I64)
    # dropped steps write to an extra last column, cut off afterwards
    t_scalar = b.op("Reshape", [t_len, b.i64([])], dtype=I64)
    column = b.op("Where", [keep, column, t_scalar], dtype=I64)
    blank_row = b.op("Sub", [b.op("Mul", [best, b.i64(0)], dtype=I64), b.i64(1)], dtype=I64)
    pad = b.op("Slice", [blank_row, b.i64([0]), b.i64([1]), b.i64([1])], dtype=I64)
    canvas = b.op("Concat", [blank_row, pad], {"axis": 1}, dtype=I64)
    values = b.op("Where", [keep, best, b.i64(-1)], dtype=I64)
    out = b.op("ScatterElements", [canvas, column, values], {"axis": 1}, dtype=I64)
    out = b.op("Slice", [out, b.i64([0]), b.i64([-1]), b.i64([1])], dtype=I64)
    count = b.op("ReduceSum", [kept, b.i64([1])], {"keepdims": 0}, dtype=I64)
    return out, count


@importer("CTCGreedyDecoderSeqLen", since=6)
def _ctc_greedy_seq_len(b: Builder, layer: Layer, x):
    blank = b.op("Reshape", [b.to_i64(x[2]), b.i64([])], dtype=I64) if len(x) > 2 else None
    out, count = greedy_decode(b, x[0], x[1], blank, layer.bool_attr("merge_repeated", True))
    cls_dt = from_element_type(element_type_name(layer.attr("classes_index_type", "i32")),
                               layer.where())
    len_dt = from_element_type(element_type_name(layer.attr("sequence_length_type", "i32")),
                               layer.where())
    return [b.cast(out, cls_dt), b.cast(count, len_dt)]


@importer("CTCGreedyDecoder", since=1)
def _ctc_greedy(b: Builder, layer: Layer, x):
    """Time-major scores ``[T, N, C]`` and a ``[T, N]`` mask of the steps inside each sequence
    (a prefix: its sum is the length); blank is the last class; output ``[N, T, 1, 1]`` in the
    scores' type."""
    scores = b.transpose(x[0], [1, 0, 2])
    mask = b.op("Cast", [x[1]], {"to": DataType.INT64.onnx}, dtype=I64)
    lens = b.op("ReduceSum", [mask, b.i64([0])], {"keepdims": 0}, dtype=I64)
    out, _ = greedy_decode(b, scores, lens, None, layer.bool_attr("ctc_merge_repeated", True))
    dt = out_dtype(layer, x)
    return b.unsqueeze(b.cast(out, dt), [2, 3])
