"""Translators of OpenVINO's YOLO layers into ONNX subgraphs (checked against OpenVINO in
tests/openvino/opset/test_detect_post.py).

- ``ReorgYolo-2`` (darknet's ``reorg``) with ``stride`` s on ``[N, C, H, W]`` gives
  ``[N, C*s*s, H/s, W/s]``: the input read as ``[N, C/(s*s), H*s, W*s]`` - darknet's flat
  reinterpretation - its ``(row, column)`` offsets inside each s x s block moved in front of the
  channels, the result read back flat.  A Reshape / Transpose / Reshape.
- ``RegionYolo-1`` on ``[N, C, H, W]`` reads the channels as R regions of ``coords + classes +
  1`` entries (R = ``num`` with ``do_softmax``, else the length of ``mask``): the x, y entries
  and the objectness entry pass through a sigmoid; the class entries through a softmax over
  the classes (``do_softmax``, YOLO v2) or a sigmoid each (YOLO v3); the other coordinates
  are kept.  Channels past R regions are dropped (OpenVINO's output holds R regions only);
  with ``do_softmax`` the axes ``axis`` .. ``end_axis`` of the result are flattened into one.
"""

from __future__ import annotations

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import Builder, dtype_of, require_rank, shape_of
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64


@importer("ReorgYolo", since=2)
def _reorg_yolo(b: Builder, layer: Layer, x):
    if len(x) != 1:
        raise ModelError(f"{layer.where()}: ReorgYolo takes 1 input, got {len(x)}")
    strides = layer.ints_attr("stride")
    if len(strides) not in (1, 2) or len(set(strides)) != 1 or strides[0] < 1:
        raise UnsupportedError(f"{layer.where()}: stride={strides} (one positive stride, "
                               "equal in both axes)")
    s = strides[0]
    if require_rank(layer, x[0], 0) != 4:
        raise ModelError(f"{layer.where()}: ReorgYolo takes a 4-D input")
    shape = shape_of(x[0])
    if shape is None or any(not isinstance(d, int) for d in shape[1:]):
        raise UnsupportedError(f"{layer.where()}: ReorgYolo needs static C, H and W")
    _, c, h, w = shape
    if c % (s * s) or h % s or w % s:
        raise ModelError(f"{layer.where()}: C={c}, H={h}, W={w} are not divisible by the "
                         f"stride {s} (C by its square)")
    dt = dtype_of(x[0])
    v = b.op("Reshape", [x[0], b.i64([0, c // (s * s), h, s, w, s])], dtype=dt)
    v = b.transpose(v, [0, 3, 5, 1, 2, 4])
    return b.op("Reshape", [v, b.i64([0, c * s * s, h // s, w // s])], dtype=out_dtype(layer, x))


def _floats(layer: Layer, key: str) -> list[float]:
    s = layer.attr(key)
    if not s:
        return []
    try:
        return [float(t) for t in s.replace(" ", "").split(",") if t]
    except ValueError:
        raise ModelError(f"{layer.where()}: attribute {key}='{s}' is not a list of numbers") \
            from None


def _part(b: Builder, v, lo: int, hi: int, dt):
    return b.op("Slice", [v, b.i64([lo]), b.i64([hi]), b.i64([2])], dtype=dt)


@importer("RegionYolo", since=1)
def _region_yolo(b: Builder, layer: Layer, x):
    if len(x) != 1:
        raise ModelError(f"{layer.where()}: RegionYolo takes 1 input, got {len(x)}")
    if require_rank(layer, x[0], 0) != 4:
        raise ModelError(f"{layer.where()}: RegionYolo takes a 4-D input")
    coords = layer.int_attr("coords", required=True)
    classes = layer.int_attr("classes", required=True)
    softmax = layer.bool_attr("do_softmax", True)
    regions = layer.int_attr("num", required=True) if softmax else len(layer.ints_attr("mask"))
    if coords < 2 or classes < 0 or regions < 1:
        raise ModelError(f"{layer.where()}: coords={coords}, classes={classes}, "
                         f"{regions} regions (need coords >= 2 and a region)")
    k = coords + classes + 1
    dt = dtype_of(x[0])
    v = b.op("Slice", [x[0], b.i64([0]), b.i64([regions * k]), b.i64([1])], dtype=dt)
    v = b.op("Reshape", [v, b.i64([0, regions, k, -1])], dtype=dt)
    parts = [b.op("Sigmoid", [_part(b, v, 0, 2, dt)], dtype=dt)]
    if coords > 2:
        parts.append(_part(b, v, 2, coords, dt))
    if softmax:
        parts.append(b.op("Sigmoid", [_part(b, v, coords, coords + 1, dt)], dtype=dt))
        if classes:
            parts.append(b.op("Softmax", [_part(b, v, coords + 1, k, dt)], {"axis": 2},
                              dtype=dt))
    else:
        parts.append(b.op("Sigmoid", [_part(b, v, coords, k, dt)], dtype=dt))
    v = b.op("Concat", parts, {"axis": 2}, dtype=dt)
    dims = [_dims(b, x[0], 0, 1), b.i64([regions * k]), _dims(b, x[0], 2, 4)]
    if softmax:
        axis, end = layer.int_attr("axis", 1) % 4, layer.int_attr("end_axis", 3) % 4
        if end < axis:
            raise ModelError(f"{layer.where()}: end_axis {end} is before axis {axis}")
        dims = [_dims(b, x[0], 0, 1), b.i64([regions * k]), _dims(b, x[0], 2, 3),
                _dims(b, x[0], 3, 4)]
        if end > axis:
            flat = b.op("ReduceProd", [b.op("Concat", dims[axis:end + 1], {"axis": 0},
                                            dtype=I64)], {"keepdims": 1}, dtype=I64)
            dims = dims[:axis] + [flat] + dims[end + 1:]
    shape = b.op("Concat", dims, {"axis": 0}, dtype=I64)
    return b.op("Reshape", [v, shape], dtype=out_dtype(layer, x))


def _dims(b: Builder, v, lo: int, hi: int):
    """Dims `lo` .. `hi` of `v` as a 1-D int64 tensor (a constant where they are static)."""
    shape = shape_of(v)
    if shape is not None and all(isinstance(d, int) for d in shape[lo:hi]):
        return b.i64(list(shape[lo:hi]))
    return b.op("Shape", [v], {"start": lo, "end": hi}, dtype=I64)
