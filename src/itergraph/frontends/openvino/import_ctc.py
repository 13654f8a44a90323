"""Translator of OpenVINO's ``CTCGreedyDecoderSeqLen-6`` into ONNX ops, without a loop.

Per batch entry: the best class of each time step below the sequence length (``ArgMax``; the
lowest class among equal scores); with ``merge_repeated`` a step equal to the one before it is
dropped, then blanks are dropped (``blank_index``, the last class by default); the kept
classes move to the front (their running count is their column), the rest of the row is -1.
Output 1 counts the kept classes. Both outputs are cast to ``classes_index_type`` and
``sequence_length_type`` (i32 by default).
"""

from __future__ import annotations

from ...ir.types import DataType
from .builder import INT64_MAX, Builder
from .elements import element_type_name, from_element_type
from .import_table import importer
from .netparse import Layer

I64, BOOL = DataType.INT64, DataType.BOOL


@importer("CTCGreedyDecoderSeqLen", since=6)
def _ctc_greedy_seq_len(b: Builder, layer: Layer, x):
    best = b.op("ArgMax", [x[0]], {"axis": 2, "keepdims": 0, "select_last_index": 0},
                dtype=I64)  # [N, T]
    shape = b.op("Shape", [x[0]], dtype=I64)
    t_len = b.op("Slice", [shape, b.i64([1]), b.i64([2])], dtype=I64)
    steps = b.op("Range", [b.i64(0), b.op("Reshape", [t_len, b.i64([])], dtype=I64), b.i64(1)],
                 dtype=I64)
    lens = b.op("Unsqueeze", [b.to_i64(x[1]), b.i64([1])], dtype=I64)  # [N, 1]
    keep = b.op("Less", [steps, lens], dtype=BOOL)  # inside the sequence
    if len(x) > 2:
        blank = b.op("Reshape", [b.to_i64(x[2]), b.i64([])], dtype=I64)
    else:
        n_cls = b.op("Slice", [shape, b.i64([2]), b.i64([3])], dtype=I64)
        blank = b.op("Reshape", [b.op("Sub", [n_cls, b.i64([1])], dtype=I64), b.i64([])],
                     dtype=I64)
    not_blank = b.op("Not", [b.op("Equal", [best, blank], dtype=BOOL)], dtype=BOOL)
    keep = b.op("And", [keep, not_blank], dtype=BOOL)
    if layer.bool_attr("merge_repeated", True):
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
    cls_dt = from_element_type(element_type_name(layer.attr("classes_index_type", "i32")),
                               layer.where())
    len_dt = from_element_type(element_type_name(layer.attr("sequence_length_type", "i32")),
                               layer.where())
    return [b.cast(out, cls_dt), b.cast(count, len_dt)]
