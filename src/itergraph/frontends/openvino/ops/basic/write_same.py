"""Translators of ONNX ops that are one OpenVINO op with their attributes moved: IsInf, Selu,
BitShift, ScatterElements, OneHot, LRN, DepthToSpace, SpaceToDepth, Unique.

ONNX semantics kept where OpenVINO's op differs:
- ``Selu``'s ``alpha``/``gamma`` attributes become OpenVINO's ``alpha``/``lambda`` inputs;
- ``BitShift`` is ``BitwiseLeftShift``/``BitwiseRightShift-15``; an amount that is negative
  or at least the type's width shifts everything out in ONNX (0, or the sign for an
  arithmetic right shift), where OpenVINO's CPU plugin takes it modulo the width: unless the
  amount is a constant in range, a ``Select`` gives ONNX's value there;
- ``ScatterElements`` with a reduction is ``ScatterElementsUpdate-12`` (``add`` is ``sum``,
  ``mul`` is ``prod``);
- ``OneHot`` counts a negative index from the end (OpenVINO turns it into a row of
  ``off_value``): the index is first moved into range;
- ``LRN`` is OpenVINO's ``LRN`` over axes ``[1]``, a fractional bias factored out of the
  power (OpenVINO's CPU plugin truncates it); ``DepthToSpace`` and ``SpaceToDepth``
  ``DCR``/``CRD`` are ``blocks_first``/``depth_first``;
- ``Pad`` mode ``wrap`` (OpenVINO's ``Pad`` has none) is a ``Gather`` per padded axis of the
  indices ``range(-begin, n + end) mod n``.
"""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...elements import to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter

I64, BOOL = DataType.INT64, DataType.BOOL
_NUMPY = {"auto_broadcast": "numpy"}


@exporter("IsInf", since=10)
def _is_inf(w: NetWriter, node: Node, ins):
    data = {"detect_negative": bool(attr_or_default(node, "detect_negative")),
            "detect_positive": bool(attr_or_default(node, "detect_positive"))}
    return w.one("IsInf", "opset10", ins[:1], data, dtype=BOOL, shape=ins[0].shape)


@exporter("Selu", since=1)
def _selu(w: NetWriter, node: Node, ins):
    npdt = to_numpy(ins[0].dtype) if ins[0].dtype else np.float32
    alpha = w.const(np.array(float(attr_or_default(node, "alpha")), npdt))
    lam = w.const(np.array(float(attr_or_default(node, "gamma")), npdt))
    return w.one("Selu", "opset1", [ins[0], alpha, lam], dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("BitShift", since=11)
def _bit_shift(w: NetWriter, node: Node, ins):
    direction = str(node.attrs.get("direction", "")).upper()
    ov = {"LEFT": "BitwiseLeftShift", "RIGHT": "BitwiseRightShift"}.get(direction)
    if ov is None:
        raise UnsupportedError(f"{where(node)}: BitShift direction '{direction}' is not LEFT or "
                               "RIGHT")
    x, amount = ins[:2]
    shifted = w.one(ov, "opset15", [x, amount], _NUMPY, dtype=x.dtype)
    dt = x.dtype
    if dt is None or not dt.is_integer:
        return shifted
    npdt = to_numpy(dt)
    width = np.dtype(npdt).itemsize * 8
    const = node.inputs[1].const
    if const is not None and ((np.asarray(const) >= 0) & (np.asarray(const) < width)).all():
        return shifted
    # OpenVINO's CPU plugin takes the amount modulo the width (as x86 does); ONNX shifts
    # everything out: 0, or the sign for an arithmetic right shift
    low = w.one("Less", "opset1", [amount, w.const(np.array(0, to_numpy(amount.dtype)))],
                _NUMPY, dtype=BOOL)
    high = w.one("GreaterEqual", "opset1",
                 [amount, w.const(np.array(width, to_numpy(amount.dtype)))], _NUMPY, dtype=BOOL)
    out = w.one("LogicalOr", "opset1", [low, high], _NUMPY, dtype=BOOL)
    zero = w.const(np.array(0, npdt))
    fill = zero
    if ov == "BitwiseRightShift" and np.issubdtype(npdt, np.signedinteger):
        neg = w.one("Less", "opset1", [x, zero], _NUMPY, dtype=BOOL)
        fill = w.one("Select", "opset1", [neg, w.const(np.array(-1, npdt)), zero], _NUMPY,
                     dtype=dt)
    return w.one("Select", "opset1", [out, fill, shifted], _NUMPY, dtype=dt)


_REDUCTION = {"none": "none", "add": "sum", "mul": "prod", "min": "min", "max": "max"}


@exporter("ScatterElements", since=11)
def _scatter_elements(w: NetWriter, node: Node, ins):
    red = str(node.attrs.get("reduction", "none"))  # Scatter (9, 10) has none
    if red not in _REDUCTION:
        raise UnsupportedError(f"{where(node)}: ScatterElements reduction '{red}' is not "
                               "supported")
    data = {"reduction": _REDUCTION[red], "use_init_val": True}
    return w.one("ScatterElementsUpdate", "opset12",
                 [ins[0], ins[1], ins[2], w.i64(int(attr_or_default(node, "axis")))], data,
                 dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("OneHot", since=9)
def _one_hot(w: NetWriter, node: Node, ins):
    idx = w.one("Convert", "opset1", ins[:1], {"destination_type": "i64"}, dtype=I64,
                shape=ins[0].shape)
    depth = w.one("Convert", "opset1", [ins[1]], {"destination_type": "i64"}, dtype=I64)
    depth = w.one("Reshape", "opset1", [depth, w.i64([])], {"special_zero": False}, dtype=I64,
                  shape=())
    neg = w.one("Less", "opset1", [idx, w.i64(0)], _NUMPY, dtype=BOOL)
    moved = w.one("Add", "opset1", [idx, depth], _NUMPY, dtype=I64)
    idx = w.one("Select", "opset1", [neg, moved, idx], _NUMPY, dtype=I64)
    dt = ins[2].dtype
    off = w.one("Gather", "opset8", [ins[2], w.i64(0), w.i64(0)], {"batch_dims": 0}, dtype=dt,
                shape=())
    on = w.one("Gather", "opset8", [ins[2], w.i64(1), w.i64(0)], {"batch_dims": 0}, dtype=dt,
               shape=())
    return w.one("OneHot", "opset1", [idx, depth, on, off],
                 {"axis": int(attr_or_default(node, "axis"))}, dtype=dt)


@exporter("LRN", since=1)
def _lrn(w: NetWriter, node: Node, ins):
    alpha = float(attr_or_default(node, "alpha"))
    beta = float(attr_or_default(node, "beta"))
    bias = float(attr_or_default(node, "bias"))
    scale = None
    if bias != int(bias) and bias > 0:
        # OpenVINO 2026.4's CPU plugin drops the fraction of the bias: write
        # (bias + a*S)^beta as bias^beta * (1 + (a/bias)*S)^beta
        alpha, scale, bias = alpha / bias, bias ** -beta, 1.0
    data = {"alpha": alpha, "beta": beta, "bias": bias, "size": int(node.attrs["size"])}
    y = w.one("LRN", "opset1", [ins[0], w.i64([1])], data, dtype=ins[0].dtype,
              shape=ins[0].shape)
    if scale is None:
        return y
    npdt = to_numpy(ins[0].dtype) if ins[0].dtype else np.float32
    return w.one("Multiply", "opset1", [y, w.const(np.array(scale, npdt))], _NUMPY,
                 dtype=ins[0].dtype, shape=ins[0].shape)


def _block_shape(shape, bs: int, to_space: bool):
    """Output dims of DepthToSpace (`to_space`) or SpaceToDepth; unknown dims stay unknown."""
    if shape is None or len(shape) != 4:
        return shape
    n, c, hh, ww = shape

    def f(d, mul):
        if not isinstance(d, int) or d < 0:
            return d
        return d * bs if mul else d // bs

    if to_space:
        c2 = c // (bs * bs) if isinstance(c, int) and c >= 0 else c
        return (n, c2, f(hh, True), f(ww, True))
    c2 = c * bs * bs if isinstance(c, int) and c >= 0 else c
    return (n, c2, f(hh, False), f(ww, False))


@exporter("DepthToSpace", since=1)
def _depth_to_space(w: NetWriter, node: Node, ins):
    mode = "depth_first" if str(attr_or_default(node, "mode")) == "CRD" else "blocks_first"
    bs = int(node.attrs["blocksize"])
    return w.one("DepthToSpace", "opset1", ins[:1], {"mode": mode, "block_size": bs},
                 dtype=ins[0].dtype, shape=_block_shape(ins[0].shape, bs, True))


@exporter("SpaceToDepth", since=1)
def _space_to_depth(w: NetWriter, node: Node, ins):
    mode = "depth_first" if str(attr_or_default(node, "mode")) == "CRD" else "blocks_first"
    bs = int(node.attrs["blocksize"])
    return w.one("SpaceToDepth", "opset1", ins[:1], {"mode": mode, "block_size": bs},
                 dtype=ins[0].dtype, shape=_block_shape(ins[0].shape, bs, False))


@exporter("Unique", since=11)
def _unique(w: NetWriter, node: Node, ins):
    args = list(ins[:1])
    if "axis" in node.attrs:
        args.append(w.i64(int(node.attrs["axis"])))
    data = {"sorted": bool(attr_or_default(node, "sorted")), "index_element_type": "i64",
            "count_element_type": "i64"}
    outs = w.layer("Unique", "opset10", args, data,
                   [(ins[0].dtype, None), (I64, None), (I64, None), (I64, None)])
    return outs[:len(node.outputs)]


_PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect"}


@exporter("Pad", since=11)
def _pad(w: NetWriter, node: Node, ins):
    """``Pad-12`` (negative pads crop, as in ONNX); pads given for some ``axes`` are spread
    over every axis, 0 elsewhere."""
    mode = str(attr_or_default(node, "mode"))
    if mode == "wrap":
        return _wrap(w, node, ins)
    if mode not in _PAD_MODES:
        raise UnsupportedError(f"{where(node)}: Pad mode '{mode}' has no OpenVINO counterpart")
    c = node.inputs[1].const
    axes = ins[3] if len(ins) > 3 else None
    if c is not None:
        p = np.asarray(c, np.int64).reshape(-1)
        begin, end = p[:p.size // 2], p[p.size // 2:]
    else:
        pads = ins[1] if ins[1].dtype == I64 else w.one(
            "Convert", "opset1", [ins[1]], {"destination_type": "i64"}, dtype=I64)
        halves = w.layer("Split", "opset1", [pads, w.i64(0)], {"num_splits": 2},
                         [(I64, (None,)), (I64, (None,))])
        begin, end = halves[0], halves[1]
    if axes is not None:
        begin, end = _spread(w, node, ins[0], axes, begin, end)
    if isinstance(begin, np.ndarray):
        begin, end = w.i64(begin), w.i64(end)
    args = [ins[0], begin, end]
    if mode == "constant" and len(ins) > 2 and ins[2] is not None:
        args.append(w.scalar(ins[2]))
    return w.one("Pad", "opset12", args, {"pad_mode": _PAD_MODES[mode]}, dtype=ins[0].dtype)


def _wrap(w: NetWriter, node: Node, ins):
    """``Pad`` mode ``wrap`` (OpenVINO's Pad has no such mode): along each padded axis of
    length ``n``, ``Gather`` of the indices ``range(-begin, n + end) mod n``; a negative pad
    crops, as in ONNX. Pads (and ``axes``) must be constants and the input's rank known."""
    x = ins[0]
    c = node.inputs[1].const
    axes_c = node.inputs[3].const if len(node.inputs) > 3 and node.inputs[3] is not None \
        else None
    if c is None or x.shape is None or (len(node.inputs) > 3 and node.inputs[3] is not None
                                         and axes_c is None):
        raise UnsupportedError(f"{where(node)}: Pad mode 'wrap' is written only with constant "
                               "pads and axes on an input of known rank")
    r = len(x.shape)
    p = np.asarray(c, np.int64).reshape(-1)
    axes = np.arange(r) if axes_c is None else np.asarray(axes_c, np.int64).reshape(-1) % r
    for axis, b, e in zip(axes, p[:p.size // 2], p[p.size // 2:]):
        if b == 0 and e == 0:
            continue
        shape = w.one("ShapeOf", "opset3", [x], {"output_type": "i64"}, dtype=I64, shape=(r,))
        n = w.one("Gather", "opset8", [shape, w.i64(int(axis)), w.i64(0)], dtype=I64, shape=())
        stop = w.one("Add", "opset1", [n, w.i64(int(e))], _NUMPY, dtype=I64, shape=())
        idx = w.one("Range", "opset4", [w.i64(int(-b)), stop, w.i64(1)],
                    {"output_type": "i64"}, dtype=I64, shape=(None,))
        idx = w.one("FloorMod", "opset1", [idx, n], _NUMPY, dtype=I64, shape=(None,))
        dims = tuple(None if i == axis else d for i, d in enumerate(x.shape))
        x = w.one("Gather", "opset8", [x, idx, w.i64(int(axis))], dtype=x.dtype, shape=dims)
    return x


def _spread(w: NetWriter, node: Node, x, axes, begin, end):
    """Pads `begin`/`end` for `axes` as pads for every axis of `x` (0 on the others); the
    rank of `x` is read at run time where the writer does not know it."""
    r = len(x.shape) if x.shape is not None else None
    ax = node.inputs[3].const
    if ax is not None and r is not None:
        ax = np.asarray(ax, np.int64).reshape(-1)
        ax = np.where(ax < 0, ax + r, ax)
        if isinstance(begin, np.ndarray):
            full_b, full_e = np.zeros(r, np.int64), np.zeros(r, np.int64)
            full_b[ax], full_e[ax] = begin, end
            return full_b, full_e
        idx, zeros = w.i64(ax), w.i64(np.zeros(r, np.int64))
    else:
        if r is not None:
            rank, zeros = w.i64([r]), w.i64(np.zeros(r, np.int64))
        else:
            shape = w.one("ShapeOf", "opset3", [x], {"output_type": "i64"}, dtype=I64)
            rank = w.one("ShapeOf", "opset3", [shape], {"output_type": "i64"}, dtype=I64,
                         shape=(1,))
            zeros = w.one("Broadcast", "opset3", [w.i64(0), rank], {"mode": "numpy"},
                          dtype=I64, shape=(None,))
        a64 = axes if axes.dtype == I64 else w.one(
            "Convert", "opset1", [axes], {"destination_type": "i64"}, dtype=I64)
        neg = w.one("Less", "opset1", [a64, w.i64(0)], _NUMPY, dtype=BOOL)
        idx = w.one("Select", "opset1", [neg, w.one("Add", "opset1", [a64, rank], _NUMPY,
                                                    dtype=I64), a64], _NUMPY, dtype=I64)
    return tuple(w.one("ScatterUpdate", "opset3",
                       [zeros, idx, w.i64(v) if isinstance(v, np.ndarray) else v, w.i64(0)],
                       dtype=I64, shape=zeros.shape) for v in (begin, end))
