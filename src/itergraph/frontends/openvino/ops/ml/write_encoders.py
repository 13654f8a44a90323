"""``ai.onnx.ml`` encoders -> standard OpenVINO layers: each input element is compared with
the node's key list at once (``Equal`` against a ``[k]`` constant on a new last axis).

- ``LabelEncoder`` (1, 2, 4; its table: `semantics.label_encoder`): the position of the
  matching key picks the value from a constant table with the default appended (``Gather``,
  which OpenVINO also runs on string tables); a NaN key matches a NaN input.
- ``OneHotEncoder``: ``[..., categories]`` float, 1 where the element equals the category; a
  float input is truncated to int64 first (ONNX Runtime). With ``zeros=0`` ONNX Runtime fails
  on a value outside the categories; the written network gives its all-zero row: on every
  input ONNX Runtime accepts, the two agree (OpenVINO has no op that raises).

String inputs are compared byte by byte: ``StringTensorUnpack`` gives each element's begin
and end in a ``u8`` buffer; an element matches a key when its length is the key's and the
bytes gathered at ``begin + 0 .. begin + len - 1`` are the key's (`string_matches`).
"""

from __future__ import annotations

import numpy as np

from .....errors import where
from .....ir.graph import Node
from .....ir.strings import to_bytes
from .....ir.types import DataType
from .....semantics.label_encoder import encoder_table, listed
from ...elements import to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from .write import _NB, ML, V1, V3, V8, binary, refuse

I32, I64, F32, BOOL, STRING = (DataType.INT32, DataType.INT64, DataType.FLOAT32,
                               DataType.BOOL, DataType.STRING)


def _last_axis(w: NetWriter, x: Out) -> Out:
    return w.one("Unsqueeze", V1, [x, w.i64([-1])], dtype=x.dtype)


def _all_last(w: NetWriter, x: Out) -> Out:
    return w.one("ReduceLogicalAnd", V1, [x, w.i64([-1])], {"keep_dims": False}, dtype=BOOL)


def _any_last(w: NetWriter, x: Out) -> Out:
    return w.one("ReduceLogicalOr", V1, [x, w.i64([-1])], {"keep_dims": False}, dtype=BOOL)


def string_matches(w: NetWriter, x: Out, keys: list[str]) -> Out:
    """``x[..., None] == keys``, ``[..., k]`` bool, for a string tensor `x`."""
    codes = [to_bytes(k) for k in keys]
    width = max([len(c) for c in codes] + [1])
    table = np.zeros((len(codes), width), np.uint8)
    inside = np.zeros((len(codes), width), bool)
    for i, c in enumerate(codes):
        table[i, :len(c)] = np.frombuffer(c, np.uint8)
        inside[i, :len(c)] = True
    begins, ends, chars = w.layer("StringTensorUnpack", "opset15", [x], None,
                                  [(I32, x.shape), (I32, x.shape), (DataType.UINT8, None)])
    # a zero byte after the buffer: gathers past an element's end stay in range
    chars = w.one("Concat", V1, [chars, w.const(np.zeros(1, np.uint8))], {"axis": 0},
                  dtype=DataType.UINT8)
    last = w.one("ShapeOf", V3, [chars], {"output_type": "i32"}, dtype=I32)
    last = binary(w, "Subtract", last, w.const(np.ones(1, np.int32)))
    at = binary(w, "Add", _last_axis(w, begins), w.const(np.arange(width, dtype=np.int32)))
    at = binary(w, "Minimum", at, last)
    got = w.one("Gather", V8, [chars, at, w.const(np.int32(0))], {"batch_dims": 0},
                dtype=DataType.UINT8)  # [..., width]
    got = w.one("Unsqueeze", V1, [got, w.i64([-2])], dtype=got.dtype)  # [..., 1, width]
    same = binary(w, "Equal", got, w.const(table), dtype=BOOL)
    same = binary(w, "LogicalOr", same, w.const(~inside), dtype=BOOL)
    length = binary(w, "Subtract", ends, begins)
    lengths = np.array([len(c) for c in codes], np.int32)
    fits = binary(w, "Equal", _last_axis(w, length), w.const(lengths), dtype=BOOL)
    return binary(w, "LogicalAnd", _all_last(w, same), fits, dtype=BOOL)


def matches(w: NetWriter, node: Node, x: Out, keys: np.ndarray) -> Out:
    """``x[..., None] == keys``, ``[..., k]`` bool; NaN matches NaN."""
    if x.dtype == STRING:
        if keys.dtype != object:
            raise refuse(node, "numeric keys for a string input")
        return string_matches(w, x, list(keys))
    if keys.dtype == object:
        raise refuse(node, f"string keys for a {x.dtype.name.lower()} input")
    k = w.const(keys.astype(to_numpy(x.dtype)))
    eq = binary(w, "Equal", _last_axis(w, x), k, dtype=BOOL)
    if keys.dtype.kind == "f" and np.isnan(keys).any():
        nan_x = _last_axis(w, w.one("IsNaN", "opset10", [x], dtype=BOOL))
        eq = binary(w, "LogicalOr", eq, binary(w, "LogicalAnd", nan_x,
                                               w.const(np.isnan(keys)), dtype=BOOL), dtype=BOOL)
    return eq


@exporter("LabelEncoder", since=1, domain=ML)
def _label_encoder(w: NetWriter, node: Node, ins):
    x = ins[0]
    keys, values, default = encoder_table(node.attrs, node.version, x.dtype == STRING,
                                          where(node))
    hit = matches(w, node, x, keys)
    positions = w.const(np.arange(len(keys), dtype=np.int64))
    none = w.const(np.int64(len(keys)))
    at = w.one("Select", V1, [hit, positions, none], dict(_NB), dtype=I64)
    at = w.one("ReduceMin", V1, [at, w.i64([-1])], {"keep_dims": False}, dtype=I64)
    out_dt = STRING if values.dtype == object else _value_type(node, values)
    table = np.concatenate([values, np.array([default], values.dtype)]) \
        if values.dtype == object else np.append(values, default).astype(to_numpy(out_dt))
    t = w.const(table, STRING if values.dtype == object else None)
    return w.one("Gather", V8, [t, at, w.i64(0)], {"batch_dims": 0}, dtype=out_dt,
                 shape=x.shape)


def _value_type(node: Node, values: np.ndarray) -> DataType:
    declared = node.outputs[0].type
    dt = getattr(declared, "dtype", None)
    if isinstance(dt, DataType) and dt not in (STRING,):
        return dt
    return I64 if values.dtype.kind in "iu" else F32


@exporter("OneHotEncoder", since=1, domain=ML)
def _one_hot_encoder(w: NetWriter, node: Node, ins):
    x = ins[0]
    cats = listed(node.attrs, "cats")
    if cats is None or len(cats) == 0:
        raise refuse(node, "a OneHotEncoder without categories")
    if x.dtype != STRING and cats.dtype != object and x.dtype != I64:
        x = w.one("Convert", V1, [x], {"destination_type": "i64"}, dtype=I64, shape=x.shape)
    hit = matches(w, node, x, cats)
    return w.one("Convert", V1, [hit], {"destination_type": "f32"}, dtype=F32)

