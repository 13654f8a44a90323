"""ONNX convolutions and pooling -> OpenVINO layers: ``Conv`` (``Convolution-1`` or
``GroupConvolution-1``, bias added by ``Add``), ``ConvTranspose``
(``(Group)ConvolutionBackpropData-1``), ``MaxPool`` (``MaxPool-14``), ``AveragePool``
(``AvgPool-14``; ``AvgPool-16`` when dilated), ``GlobalAveragePool``/``GlobalMaxPool``
(``ReduceMean``/``ReduceMax``).

ONNX semantics kept:
- ``auto_pad`` ``SAME_UPPER``/``SAME_LOWER``/``VALID`` are OpenVINO's ``same_upper``/
  ``same_lower``/``valid``; ``NOTSET`` is ``explicit`` with ``pads``;
- ``ceil_mode=1`` drops windows that would start in the end padding: ``ceil_torch``;
- ``MaxPool``'s indices are flat over the whole input (``axis=0``); ``storage_order=1``
  (the spatial axes counted column-major) is computed from them where the spatial sizes are
  static;
- ``ConvTranspose`` with ``output_shape`` (or a ``SAME_*`` ``auto_pad``) resolves its padding
  from the input shape, which must be static: ONNX puts the odd padding element at the
  beginning unless ``SAME_UPPER``; an ``output_shape`` beyond what the convolution makes is
  its output padded with zeros (then the bias added), as ONNX's negative padding gives.
"""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from ..basic.write import V1, first_dtype

V14 = "opset14"
V16 = "opset16"
_AUTO = {"NOTSET": "explicit", "VALID": "valid", "SAME_UPPER": "same_upper",
         "SAME_LOWER": "same_lower"}


def _spatial(node: Node, ins, kernel_from_weights: bool) -> int:
    k = node.attrs.get("kernel_shape")
    if k is not None:
        return len(k)
    src = ins[1] if kernel_from_weights else ins[0]
    if src is not None and src.shape is not None:
        return len(src.shape) - 2
    raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs the rank of the window")


def _auto(node: Node) -> str:
    a = node.attrs.get("auto_pad", "NOTSET")
    a = a.decode() if isinstance(a, bytes) else a
    if a not in _AUTO:
        raise UnsupportedError(f"{where(node)}: auto_pad '{a}'")
    return _AUTO[a]


def _window(node: Node, n: int, dilations: bool = True) -> dict:
    pads = list(node.attrs.get("pads") or [0] * (2 * n))
    data = {"strides": list(node.attrs.get("strides") or [1] * n),
            "pads_begin": pads[:n], "pads_end": pads[n:], "auto_pad": _auto(node)}
    if dilations:
        data["dilations"] = list(node.attrs.get("dilations") or [1] * n)
    return data


def _static(o: Out | None, node: Node, what: str) -> list[int]:
    if o is None or o.shape is None or any(not isinstance(d, int) for d in o.shape):
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs a static {what} "
                               "shape")
    return list(o.shape)


def _grouped_weights(w: NetWriter, node: Node, weights: Out, group: int):
    """ONNX ``[O, I/G, k...]`` (``[I, O/G, k...]`` transposed) as ``[G, O/G, I/G, k...]``
    (``[G, I/G, O/G, k...]``)."""
    shape = _static(weights, node, "weight")
    new = [group, shape[0] // group, *shape[1:]]
    return w.one("Reshape", V1, [weights, w.i64(new)], {"special_zero": False},
                 dtype=weights.dtype, shape=tuple(new))


def _bias(w: NetWriter, y: Out, bias: Out | None, n: int) -> Out:
    if bias is None:
        return y
    b = w.one("Reshape", V1, [bias, w.i64([1, -1] + [1] * n)], {"special_zero": False},
              dtype=bias.dtype)
    return w.one("Add", V1, [y, b], {"auto_broadcast": "numpy"}, dtype=y.dtype)


@exporter("Conv", since=1)
def _conv(w: NetWriter, node: Node, ins):
    n = _spatial(node, ins, True)
    group = int(attr_or_default(node, "group"))
    data = _window(node, n)
    dt = first_dtype(ins)
    if group == 1:
        y = w.one("Convolution", V1, ins[:2], data, dtype=dt)
    else:
        wg = _grouped_weights(w, node, ins[1], group)
        y = w.one("GroupConvolution", V1, [ins[0], wg], data, dtype=dt)
    return _bias(w, y, ins[2] if len(ins) > 2 else None, n)


@exporter("ConvTranspose", since=1)
def _conv_transpose(w: NetWriter, node: Node, ins):
    n = _spatial(node, ins, True)
    group = int(attr_or_default(node, "group"))
    data = _window(node, n)
    op = list(node.attrs.get("output_padding") or [0] * n)
    target = node.attrs.get("output_shape")
    auto = data["auto_pad"]
    grow: list[int] = []
    if target is not None or auto in ("same_upper", "same_lower"):
        size = _static(ins[0], node, "input")[2:]
        kernel = _static(ins[1], node, "weight")[2:]
        if target is None:
            target = [i * s for i, s in zip(size, data["strides"])]
        target = list(target)[-n:]
        begin, end = [], []
        for i, k, s, d, o, p in zip(size, kernel, data["strides"], data["dilations"], target,
                                    op):
            total = s * (i - 1) + p + (k - 1) * d + 1 - o
            half = total // 2
            begin.append(half if auto == "same_upper" else total - half)
            end.append(total - begin[-1])
        # a negative padding (an output_shape beyond what the convolution makes) is room
        # that no tap reaches: zeros padded on after the convolution, before the bias
        grow = [max(-b, 0) for b in begin] + [max(-e, 0) for e in end]
        data.update(pads_begin=[max(b, 0) for b in begin], pads_end=[max(e, 0) for e in end],
                    auto_pad="explicit")
    data["output_padding"] = op
    dt = first_dtype(ins)
    if group == 1:
        y = w.one("ConvolutionBackpropData", V1, ins[:2], data, dtype=dt)
    else:
        wg = _grouped_weights(w, node, ins[1], group)
        y = w.one("GroupConvolutionBackpropData", V1, [ins[0], wg], data, dtype=dt)
    if any(grow):
        y = w.one("Pad", "opset12", [y, w.i64([0, 0, *grow[:n]]), w.i64([0, 0, *grow[n:]]),
                                     w.const(np.zeros((), dt.numpy))],
                  {"pad_mode": "constant"}, dtype=dt)
    return _bias(w, y, ins[2] if len(ins) > 2 else None, n)


def _pool_data(node: Node, n: int, dilations: bool) -> dict:
    data = _window(node, n, dilations)
    data["kernel"] = list(node.attrs["kernel_shape"])
    data["rounding_type"] = "ceil_torch" if node.attrs.get("ceil_mode", 0) else "floor"
    return data


@exporter("MaxPool", since=1)
def _max_pool(w: NetWriter, node: Node, ins):
    n = len(node.attrs["kernel_shape"])
    column_major = len(node.outputs) > 1 and attr_or_default(node, "storage_order")
    sizes = None if ins[0].shape is None else list(ins[0].shape[2:])
    if column_major and (sizes is None or not all(isinstance(d, int) for d in sizes)):
        raise UnsupportedError(f"{where(node)}: MaxPool storage_order=1 (column-major "
                               "indices) is written for static spatial sizes only (OpenVINO's "
                               f"indices are row-major); here {sizes}")
    data = _pool_data(node, n, True)
    data.update(index_element_type="i64", axis=0)
    outs = w.layer("MaxPool", V14, ins[:1], data,
                   [(ins[0].dtype, None), (DataType.INT64, None)])
    if column_major:
        outs = [outs[0], _column_major(w, outs[1], sizes)]
    return outs[:len(node.outputs)]


def _column_major(w: NetWriter, idx: Out, sizes: list[int]) -> Out:
    """Row-major flat indices `idx` over ``[N, C, *sizes]`` counted with the spatial axes in
    column-major order (the first spatial axis varying fastest), batch and channel kept."""
    def op(kind: str, a: Out, b: int) -> Out:
        return w.one(kind, V1, [a, w.i64(b)], dtype=DataType.INT64)

    plane = int(np.prod(sizes))
    rest = op("FloorMod", idx, plane)
    out = op("Multiply", op("Divide", idx, plane), plane)
    strides = np.cumprod([1] + sizes[:-1])
    for a in reversed(range(len(sizes))):
        coord = op("FloorMod", rest, sizes[a])
        rest = op("Divide", rest, sizes[a])
        out = w.one("Add", V1, [out, op("Multiply", coord, int(strides[a]))],
                    dtype=DataType.INT64)
    return out


@exporter("AveragePool", since=1)
def _avg_pool(w: NetWriter, node: Node, ins):
    n = len(node.attrs["kernel_shape"])
    dilated = any(d != 1 for d in node.attrs.get("dilations") or [])
    data = _pool_data(node, n, dilated)  # AvgPool-16 has dilations
    data["exclude-pad"] = not attr_or_default(node, "count_include_pad")
    return w.one("AvgPool", V16 if dilated else V14, ins[:1], data, dtype=ins[0].dtype)


def _global(ov_type: str):
    def tr(w: NetWriter, node: Node, ins):
        x = ins[0]
        if x.shape is not None:
            axes = w.const(np.arange(2, len(x.shape), dtype=np.int64))
        else:  # the rank is known to OpenVINO only: Range(2, rank), which it folds
            i64 = {"output_type": "i64"}
            rank = w.one("ShapeOf", "opset3", [w.one("ShapeOf", "opset3", [x], i64,
                                                     dtype=DataType.INT64)],
                         i64, dtype=DataType.INT64, shape=(1,))
            axes = w.one("Range", "opset4", [w.i64(2), w.scalar(rank), w.i64(1)], i64,
                         dtype=DataType.INT64, shape=(None,))
        return w.one(ov_type, V1, [x, axes], {"keep_dims": True}, dtype=x.dtype)

    return tr


exporter("GlobalAveragePool", since=1)(_global("ReduceMean"))
exporter("GlobalMaxPool", since=1)(_global("ReduceMax"))
