"""ONNX normalisations -> OpenVINO layers: ``GroupNormalization`` (opset 21, per-channel scale
and bias) is ``GroupNormalization-12``; opset 18's per-group scale and bias are refused.

``BatchNormalization`` in inference mode is ``BatchNormInference-5``. In training mode
(``training_mode=1``, opset 14 on) it normalizes by the batch's own statistics, as ONNX
defines it: the mean and the population variance over every axis but the channel axis feed
``BatchNormInference``, and the optional outputs are the running statistics
``input * momentum + batch * (1 - momentum)``. The older training form (opset < 14, outputs
that include the saved statistics) is refused.

``LayerNormalization`` is written with the deviations first, as ONNX Runtime computes it:
``d = x - mean``, ``inv = 1 / sqrt(mean(d * d) + epsilon)``, ``y = d * inv * scale + bias``
over the axes from ``axis`` on, in the stash type. ONNX's own function body computes the
variance as ``E[x^2] - E[x]^2``, which past float32's range is ``inf - inf``: NaN where
ONNX Runtime gives the bias."""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...elements import to_element_type, to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out

_NUMPY = {"auto_broadcast": "numpy"}


@exporter("GroupNormalization", since=18)
def _group_norm18(w: NetWriter, node: Node, ins):
    raise UnsupportedError(f"{where(node)}: GroupNormalization-18 (per-group scale and bias) "
                           "has no OpenVINO counterpart")


@exporter("GroupNormalization", since=21)
def _group_norm(w: NetWriter, node: Node, ins):
    data = {"num_groups": int(node.attrs["num_groups"]),
            "epsilon": float(attr_or_default(node, "epsilon"))}
    return w.one("GroupNormalization", "opset12", ins[:3], data, dtype=ins[0].dtype,
                 shape=ins[0].shape)


@exporter("BatchNormalization", since=1)
def _batch_norm(w: NetWriter, node: Node, ins):
    eps = {"epsilon": float(attr_or_default(node, "epsilon"))}
    x = ins[0]
    if not int(attr_or_default(node, "training_mode")):
        if len(node.outputs) > 1:
            raise UnsupportedError(f"{where(node)}: BatchNormalization with the training "
                                   "outputs of opset < 14 (saved mean and variance) is not "
                                   "written")
        return w.one("BatchNormInference", "opset5", ins[:5], eps, dtype=x.dtype,
                     shape=x.shape)
    if x.shape is None:
        raise UnsupportedError(f"{where(node)}: BatchNormalization in training mode needs "
                               "the input's rank")
    axes = w.i64([a for a in range(len(x.shape)) if a != 1])
    mean = w.one("ReduceMean", "opset1", [x, axes], {"keep_dims": False}, dtype=x.dtype)
    shaped = w.one("Unsqueeze", "opset1", [mean, axes], dtype=x.dtype)
    dev = w.one("Subtract", "opset1", [x, shaped], _NUMPY, dtype=x.dtype)
    sq = w.one("Multiply", "opset1", [dev, dev], _NUMPY, dtype=x.dtype)
    var = w.one("ReduceMean", "opset1", [sq, axes], {"keep_dims": False}, dtype=x.dtype)
    y = w.one("BatchNormInference", "opset5", [x, ins[1], ins[2], mean, var], eps,
              dtype=x.dtype, shape=x.shape)
    momentum = float(attr_or_default(node, "momentum"))
    return [y] + [_running(w, ins[3 + i], batch, momentum)
                  for i, batch in enumerate((mean, var))][:len(node.outputs) - 1]


def _running(w: NetWriter, old: Out, batch: Out, momentum: float) -> Out:
    """``old * momentum + batch * (1 - momentum)`` in `old`'s type."""
    dt = old.dtype.numpy

    def scaled(v: Out, k: float) -> Out:
        if v.dtype != old.dtype:
            v = w.one("ConvertLike", "opset1", [v, old], dtype=old.dtype)
        return w.one("Multiply", "opset1", [v, w.const(np.array(k, dt))], _NUMPY,
                     dtype=old.dtype)

    return w.one("Add", "opset1", [scaled(old, momentum), scaled(batch, 1 - momentum)], _NUMPY,
                 dtype=old.dtype, shape=old.shape)


def _convert(w: NetWriter, node: Node, x: Out, dt: DataType) -> Out:
    if x.dtype == dt:
        return x
    return w.one("Convert", "opset1", [x], {"destination_type": to_element_type(dt, where(node))},
                 dtype=dt, shape=x.shape)


def _axes_from(w: NetWriter, x: Out, axis: int) -> Out:
    """The axes from `axis` (negative: from the end) to the last, as an i64 vector; where
    only OpenVINO knows the rank, ``Range(start, rank)``, which it folds."""
    if x.shape is not None:
        rank = len(x.shape)
        return w.i64(list(range(axis + rank if axis < 0 else axis, rank)))
    i64 = {"output_type": "i64"}
    rank = w.scalar(w.one("ShapeOf", "opset3", [w.one("ShapeOf", "opset3", [x], i64,
                                                      dtype=DataType.INT64)],
                          i64, dtype=DataType.INT64, shape=(1,)))
    start = w.const(np.array(axis, np.int64))
    if axis < 0:
        start = w.one("Add", "opset1", [rank, start], _NUMPY, dtype=DataType.INT64, shape=())
    return w.one("Range", "opset4", [start, rank, w.const(np.array(1, np.int64))], i64,
                 dtype=DataType.INT64, shape=(None,))


@exporter("LayerNormalization", since=17)
def _layer_norm(w: NetWriter, node: Node, ins):
    x = ins[0]
    axis = int(attr_or_default(node, "axis"))
    stash = DataType.from_onnx(int(attr_or_default(node, "stash_type")))
    np_stash = to_numpy(stash)
    axes = _axes_from(w, x, axis)
    xs = _convert(w, node, x, stash)
    mean = w.one("ReduceMean", "opset1", [xs, axes], {"keep_dims": True}, dtype=stash)
    d = w.one("Subtract", "opset1", [xs, mean], _NUMPY, dtype=stash, shape=x.shape)
    sq = w.one("Multiply", "opset1", [d, d], _NUMPY, dtype=stash, shape=x.shape)
    var = w.one("ReduceMean", "opset1", [sq, axes], {"keep_dims": True}, dtype=stash)
    eps = w.const(np.array(float(attr_or_default(node, "epsilon")), np_stash))
    std = w.one("Sqrt", "opset1", [w.one("Add", "opset1", [var, eps], _NUMPY, dtype=stash)],
                dtype=stash)
    inv = w.one("Divide", "opset1", [w.const(np.array(1, np_stash)), std], _NUMPY, dtype=stash)
    y = _convert(w, node, w.one("Multiply", "opset1", [d, inv], _NUMPY, dtype=stash,
                                shape=x.shape), x.dtype)
    y = w.one("Multiply", "opset1", [y, ins[1]], _NUMPY, dtype=x.dtype, shape=x.shape)
    if len(ins) > 2 and ins[2] is not None:
        y = w.one("Add", "opset1", [y, ins[2]], _NUMPY, dtype=x.dtype, shape=x.shape)
    return [y, mean, inv][:len(node.outputs)]
