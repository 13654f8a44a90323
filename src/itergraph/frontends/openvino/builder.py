"""Helpers to emit ONNX-standard IR nodes while importing OpenVINO layers.

`Builder` appends nodes and constants to one IR graph (the top graph or a loop body) through
the IR's node builder (`ir.builder.Builder`, at opset `OPSET`, the ONNX opset the importer
targets; names ``prefix + what + "_" + n``, numbered across every graph of an import).
Constant-valued inputs are folded where a translation needs the value (axes, permutations,
gate reordering): see `Builder.value_of`.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ...errors import ModelError, UnsupportedError
from ...ir.builder import Builder as IRBuilder
from ...ir.graph import Graph, Value
from ...ir.types import DataType, TensorType
from .elements import from_numpy, to_numpy
from .netparse import Net

_WIDER_FLOATS = (DataType.FLOAT32, DataType.FLOAT64)

OPSET = 21  # ONNX opset of the nodes the importer emits

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def dtype_of(v: Value | None) -> DataType | None:
    t = v.type if v is not None else None
    return t.dtype if isinstance(t, TensorType) else None


def rank_of(v: Value | None) -> int | None:
    t = v.type if v is not None else None
    return t.rank if isinstance(t, TensorType) else None


def shape_of(v: Value | None):
    t = v.type if v is not None else None
    return t.shape if isinstance(t, TensorType) else None


def onnx_type(dt: DataType) -> int:
    """The ONNX ``TensorProto`` element type code (Cast's ``to``)."""
    try:
        return DataType(dt).onnx
    except KeyError:
        raise UnsupportedError(f"element type {dt} has no ONNX equivalent") from None


class Builder:
    """Emits nodes and constants into `graph`; `prefix` labels what it creates; `reader` (a
    `reader.Reader`) converts the networks nested in a layer (see `body`)."""

    _uid = itertools.count()

    def __init__(self, graph: Graph, prefix: str = "", reader: Any = None):
        self.graph = graph
        self.prefix = prefix
        self.reader = reader
        self.ir = IRBuilder(graph, prefix, sep="", opset=OPSET, nodes=graph.nodes,
                            counter=self._uid)

    def body(self, net: Net, name: str, where: str):
        """Convert `net`, a loop body or If branch of the layer at `where`, into a graph named
        `name`: a `reader.Built`, with the body's Parameter and Result values by layer id."""
        if self.reader is None:
            raise ModelError(f"{where}: internal: no reader for nested networks")
        return self.reader.body(net, name, where)

    # -- constants -------------------------------------------------------------------------
    def const(self, arr: Any, dtype: Any = None, name: str = "") -> Value:
        a = np.asarray(arr, dtype=dtype)
        return self.ir.const(a, "const", name=name, type=TensorType(from_numpy(a.dtype), a.shape))

    def i64(self, values) -> Value:
        return self.const(np.asarray(values, dtype=np.int64))

    @staticmethod
    def value_of(v: Value | None) -> np.ndarray | None:
        """The constant value of `v`, or ``None`` when it is computed at run time. A constant
        stored in a narrower float type and converted to a wider one (the float16 weights and
        parameters ``ov.save_model`` and OpenVINO's converters write by default, a
        ``Convert`` after each) counts as the converted constant: the widening is exact."""
        if v is None:
            return None
        if v.const is not None:
            return v.const
        p = v.producer
        if (p is None or p.op_type != "Cast" or p.domain or len(p.inputs) != 1
                or p.inputs[0] is None or p.inputs[0].const is None):
            return None
        src = np.asarray(p.inputs[0].const)
        to = v.type.dtype if isinstance(v.type, TensorType) else None
        if to is None or src.dtype.kind != "f" or to not in _WIDER_FLOATS:
            return None
        dst = np.dtype(to_numpy(to))
        return src.astype(dst) if dst.itemsize >= src.dtype.itemsize else None

    # -- nodes -----------------------------------------------------------------------------
    def op(self, op_type: str, inputs, attrs: dict | None = None, outputs: int = 1,
           dtype: DataType | None = None, name: str = "", domain: str = ""):
        """Append an ONNX node (of `domain`, version 1 there, else of the standard domain at
        `OPSET`); returns its output (or list of outputs when `outputs` != 1)."""
        node = self.ir.add(op_type, inputs, outputs, attrs, domain=domain,
                           version=1 if domain else self.ir.opset, name=name)
        for i, v in enumerate(node.outputs):
            v.name = f"{node.name}:{i}" if outputs != 1 else node.name
            if dtype is not None:
                v.type = TensorType(dtype, None)
        return node.outputs[0] if outputs == 1 else node.outputs

    def cast(self, v: Value, dt: DataType) -> Value:
        """`v` as element type `dt` (folded for constants, no node when already `dt`)."""
        if dtype_of(v) == dt:
            return v
        c = self.value_of(v)
        if c is not None:
            return self.const(c.astype(to_numpy(dt)))
        return self.op("Cast", [v], {"to": onnx_type(dt)}, dtype=dt)

    def to_i64(self, v: Value) -> Value:
        return self.cast(v, DataType.INT64)

    def i64_vector(self, v: Value) -> Value:
        """`v` as a 1-D int64 tensor: OpenVINO takes axes as scalars too, ONNX wants vectors."""
        v = self.to_i64(v)
        c = self.value_of(v)
        if c is not None:
            return v if c.ndim == 1 else self.const(c.reshape(-1))
        if rank_of(v) == 1:
            return v
        return self.op("Reshape", [v, self.i64([-1])], dtype=DataType.INT64)

    def need_const(self, v: Value, layer, what: str) -> np.ndarray:
        c = self.value_of(v)
        if c is None:
            raise UnsupportedError(f"{layer.where()}: {what} must be a constant")
        return c

    def unsqueeze(self, v: Value, axes) -> Value:
        c = self.value_of(v)
        if c is not None:
            return self.const(np.expand_dims(c, tuple(axes)))
        out = self.op("Unsqueeze", [v, self.i64(axes)], dtype=dtype_of(v))
        shape = shape_of(v)
        if shape is not None and all(a >= 0 for a in axes):
            dims = list(shape)
            for a in sorted(axes):
                dims.insert(a, 1)
            out.type = TensorType(dtype_of(v), tuple(dims))
        return out

    def squeeze(self, v: Value, axes) -> Value:
        out = self.op("Squeeze", [v, self.i64(axes)], dtype=dtype_of(v))
        shape = shape_of(v)
        if shape is not None and all(0 <= a < len(shape) for a in axes):
            out.type = TensorType(dtype_of(v), tuple(d for i, d in enumerate(shape)
                                                     if i not in axes))
        return out

    def transpose(self, v: Value, perm) -> Value:
        return self.op("Transpose", [v], {"perm": [int(p) for p in perm]}, dtype=dtype_of(v))


def require_rank(layer, v: Value, port: int) -> int:
    """Rank of input `port` of `layer` from the value's type or, where that has none (the
    producing layer's output port states no dims), the dims the input port states."""
    r = rank_of(v)
    if r is not None:
        return r
    stated = next((p.shape for p in layer.inputs if p.id == port), ())
    if stated:  # a port without dims states nothing (the scalar case needs no rank here)
        return len(stated)
    raise ModelError(f"{layer.where()}: the rank of input {port} is needed but unknown")
