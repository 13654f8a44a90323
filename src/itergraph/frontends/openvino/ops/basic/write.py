"""Translators of ONNX ops into OpenVINO layers (opset1 ... opset13 op versions).

ONNX semantics kept where OpenVINO's op differs:
- integer ``Div`` truncates: ``Divide`` with ``m_pythondiv=false``;
- ``Mod`` with ``fmod=0`` is ``FloorMod``, with ``fmod=1`` ``Mod``;
- ``Pow`` may mix types: the exponent is converted to the base's type;
- ``Max``/``Min``/``Sum``/``Mean`` take any number of inputs: chains of binary layers;
- ``PRelu`` and ``LeakyRelu`` broadcast the slope NumPy-style: ``Select``/``Multiply``;
- reductions without axes (or with empty axes and ``noop_with_empty_axes=0``) reduce every
  axis; ``keepdims`` defaults to 1; run-time axes that may be empty are never passed empty
  (OpenVINO reduces nothing there, and its CPU plugin fails on an empty axes tensor):
  `_axes_or_all`, `_lead_axis`;
- ``Softmax``/``LogSoftmax`` before opset 13 normalise over all axes from ``axis`` on;
- ``Reshape`` ``allowzero=0`` is ``special_zero=true``;
- ``TopK`` puts the lower index first among equal values: ``stable=true``; ``ArgMax``/
  ``ArgMin`` are such a TopK with ``k=1``, with ``select_last_index=1`` on the input
  reversed along the axis (``Slice`` with step -1), index ``i`` then ``n - 1 - i``;
- ``ScatterND`` with a reduction is ``ScatterNDUpdate-15``; ``Compress`` is ``NonZero`` then
  ``Gather``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from .....errors import ModelError, UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...elements import to_element_type, to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from ...reduce_form import reduce_layer
from ...same_ops import SAME_OPS

V1, V3, V4, V5, V7, V8 = "opset1", "opset3", "opset4", "opset5", "opset7", "opset8"
I64 = DataType.INT64
BOOL = DataType.BOOL


def first_dtype(ins) -> DataType | None:
    return next((o.dtype for o in ins if o is not None and o.dtype is not None), None)


def rank(o: Out | None) -> int | None:
    return None if o is None or o.shape is None else len(o.shape)


def const_value(node: Node, i: int):
    v = node.inputs[i] if i < len(node.inputs) else None
    return None if v is None else v.const


def need_const(node: Node, i: int, what: str) -> np.ndarray:
    c = const_value(node, i)
    if c is None:
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs {what} (input {i}) "
                               "to be a constant")
    return np.asarray(c)


def _binary(ov_type: str, out_bool: bool = False, version: str = V1):
    def tr(w: NetWriter, node: Node, ins):
        a, b = ins[:2]
        if out_bool and a.dtype is not None and b.dtype is not None and a.dtype != b.dtype:
            # a comparison of a float with an integer tensor (torch.onnx writes ``row > 0``
            # so, a file ONNX Runtime refuses): itergraph compares the values as NumPy
            # does; OpenVINO needs one element type, the float one
            if a.dtype.is_floating and b.dtype.is_integer:
                b = w.one("ConvertLike", V1, [b, a], dtype=a.dtype, shape=b.shape)
            elif b.dtype.is_floating and a.dtype.is_integer:
                a = w.one("ConvertLike", V1, [a, b], dtype=b.dtype, shape=a.shape)
        return w.one(ov_type, version, [a, b], {"auto_broadcast": "numpy"},
                     dtype=BOOL if out_bool else first_dtype(ins))

    return tr


def _unary(ov_type: str, version: str = V1, data: dict | None = None,
           out: DataType | None = None):
    def tr(w: NetWriter, node: Node, ins):
        return w.one(ov_type, version, ins[:1], dict(data or {}), dtype=out or ins[0].dtype,
                     shape=ins[0].shape)

    return tr


for _row in SAME_OPS:  # first, so that the special translators below replace theirs
    _version = f"opset{_row.opset}"
    if _row.arity == 1:
        _out = BOOL if _row.boolean else None
        exporter(_row.onnx, since=1)(_unary(_row.openvino, _version, out=_out))
    else:
        exporter(_row.onnx, since=1)(_binary(_row.openvino, _row.boolean, _version))


@exporter("Div", since=1)
def _div(w: NetWriter, node: Node, ins):
    dt = first_dtype(ins)
    data = {"auto_broadcast": "numpy"}
    if dt is not None and dt.is_integer:
        data["m_pythondiv"] = False
    return w.one("Divide", V1, ins[:2], data, dtype=dt)


@exporter("Pow", since=1)
def _pow(w: NetWriter, node: Node, ins):
    base, exp = ins[0], ins[1]
    if base.dtype is not None and exp.dtype != base.dtype:
        exp = w.one("ConvertLike", V1, [exp, base], dtype=base.dtype, shape=exp.shape)
    return w.one("Power", V1, [base, exp], {"auto_broadcast": "numpy"}, dtype=base.dtype)


@exporter("Mod", since=10)
def _mod(w: NetWriter, node: Node, ins):
    ov = "Mod" if attr_or_default(node, "fmod") else "FloorMod"
    dt = first_dtype(ins)
    r = w.one(ov, V1, ins[:2], {"auto_broadcast": "numpy"}, dtype=dt)
    if ov == "Mod" or dt is None or not dt.is_floating:
        return r
    # a float modulo by an infinite divisor is the dividend where the signs agree (or it is
    # 0), else the divisor, as Python's %; OpenVINO's FloorMod gives NaN there
    x, y = ins[0], ins[1]
    nb = {"auto_broadcast": "numpy"}

    def b(kind: str, a, c, out=DataType.BOOL):
        return w.one(kind, V1, [a, c], nb, dtype=out)

    zero = w.const(np.zeros((), to_numpy(dt)))
    finite = w.one("IsFinite", "opset10", [x], dtype=DataType.BOOL)
    at_inf = b("LogicalAnd", w.one("IsInf", "opset10", [y], dtype=DataType.BOOL), finite)
    keep = b("LogicalOr", b("Equal", x, zero), b("Equal", b("Less", x, zero), b("Less", y, zero)))
    return w.one("Select", V1, [at_inf, w.one("Select", V1, [keep, x, y], nb, dtype=dt), r], nb,
                 dtype=dt)


def _variadic(ov_type: str, mean: bool = False):
    def tr(w: NetWriter, node: Node, ins):
        vals = [o for o in ins if o is not None]
        if not vals:
            raise ModelError(f"{where(node)}: no inputs")
        dt = first_dtype(vals)
        acc = vals[0]
        for o in vals[1:]:
            acc = w.one(ov_type, V1, [acc, o], {"auto_broadcast": "numpy"}, dtype=dt)
        if mean and len(vals) > 1:
            n = w.const(np.array(len(vals), to_numpy(dt) if dt else np.float32))
            acc = w.one("Divide", V1, [acc, n], {"auto_broadcast": "numpy"}, dtype=dt)
        if acc is vals[0] and len(vals) == 1:
            return acc
        return acc

    return tr


exporter("Max", since=1)(_variadic("Maximum"))
exporter("Min", since=1)(_variadic("Minimum"))
exporter("Sum", since=1)(_variadic("Add"))
exporter("Mean", since=1)(_variadic("Add", mean=True))


exporter("Round", since=1)(_unary("Round", V5, {"mode": "half_to_even"}))
exporter("IsNaN", since=1)(_unary("IsNaN", "opset10", out=BOOL))


@exporter("Identity", since=1)
def _identity(w: NetWriter, node: Node, ins):
    return ins[0]


@exporter("NonEmpty", since=1, domain="itergraph")
def _non_empty(w: NetWriter, node: Node, ins):
    """The guard `passes.split_sequence_reads` puts before the join of a split: the IR cannot
    hold its error (a join of no piece), so it is its input, and the IR gives an empty tensor
    where ONNX Runtime and the backends refuse."""
    return ins[0]


@exporter("Elu", since=1)
def _elu(w: NetWriter, node: Node, ins):
    return w.one("Elu", V1, ins[:1], {"alpha": float(attr_or_default(node, "alpha"))},
                 dtype=ins[0].dtype, shape=ins[0].shape)


def _scalar(w: NetWriter, value, like: Out) -> Out:
    return w.const(np.array(value, to_numpy(like.dtype) if like.dtype else np.float32))


@exporter("Reciprocal", since=1)
def _reciprocal(w: NetWriter, node: Node, ins):
    return w.one("Divide", V1, [_scalar(w, 1, ins[0]), ins[0]], {"auto_broadcast": "numpy"},
                 dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("LeakyRelu", since=1)
def _leaky_relu(w: NetWriter, node: Node, ins):
    return _select_neg(w, ins[0], _scalar(w, float(attr_or_default(node, "alpha")), ins[0]))


@exporter("PRelu", since=1)
def _prelu(w: NetWriter, node: Node, ins):
    return _select_neg(w, ins[0], ins[1])


def _select_neg(w: NetWriter, x: Out, slope: Out) -> Out:
    neg = w.one("Less", V1, [x, _scalar(w, 0, x)], {"auto_broadcast": "numpy"}, dtype=BOOL)
    scaled = w.one("Multiply", V1, [x, slope], {"auto_broadcast": "numpy"}, dtype=x.dtype)
    return w.one("Select", V1, [neg, scaled, x], {"auto_broadcast": "numpy"}, dtype=x.dtype)


@exporter("HardSigmoid", since=1)
def _hard_sigmoid(w: NetWriter, node: Node, ins):
    a = _scalar(w, float(attr_or_default(node, "alpha")), ins[0])
    b = _scalar(w, float(attr_or_default(node, "beta")), ins[0])
    return w.one("HardSigmoid", V1, [ins[0], a, b], dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("Gelu", since=20)
def _gelu(w: NetWriter, node: Node, ins):
    mode = "TANH" if attr_or_default(node, "approximate") == "tanh" else "ERF"
    return w.one("Gelu", V7, ins[:1], {"approximation_mode": mode}, dtype=ins[0].dtype,
                 shape=ins[0].shape)


@exporter("Clip", since=1)
def _clip(w: NetWriter, node: Node, ins):
    x = ins[0]
    lo_o = ins[1] if len(ins) > 1 else None
    hi_o = ins[2] if len(ins) > 2 else None
    v = x
    if lo_o is not None:
        v = w.one("Maximum", V1, [v, lo_o], {"auto_broadcast": "numpy"}, dtype=x.dtype,
                  shape=x.shape)
    if hi_o is not None:
        v = w.one("Minimum", V1, [v, hi_o], {"auto_broadcast": "numpy"}, dtype=x.dtype,
                  shape=x.shape)
    return v


def _dtype_from_onnx(node: Node, code) -> DataType:
    """The element type of an ONNX type code, or of its name (``Cast-1``'s ``to`` is a
    string: ``"INT64"``)."""
    if isinstance(code, bytes | str):
        name = code.decode() if isinstance(code, bytes) else code
        code = TensorProto.DataType.Value(name.upper()) \
            if name.upper() in TensorProto.DataType.keys() else code
    try:
        dt = DataType.from_onnx(int(code))
        if dt is not None:
            return dt
    except (KeyError, TypeError, ValueError):
        pass
    raise ModelError(f"{where(node)}: unknown element type code {code}")


#: narrow float types OpenVINO 2026.4's Convert rounds to other values than ONNX's Cast (it
#: rounds twice, -50.0008 -> -48 in e4m3 where round-to-nearest-even gives -52; it makes NaN
#: or inf of what ONNX saturates; float8_e8m0 comes out as uint8)
_NARROW_FLOATS = {DataType.FLOAT8E4M3FN, DataType.FLOAT8E5M2, DataType.FLOAT4E2M1,
                  DataType.FLOAT8E8M0}
_SATURABLE_F8 = {DataType.FLOAT8E4M3FN: ml_dtypes.finfo(ml_dtypes.float8_e4m3fn),
                 DataType.FLOAT8E5M2: ml_dtypes.finfo(ml_dtypes.float8_e5m2)}


def _narrowing(node: Node, src: DataType | None, dst: DataType | None) -> None:
    if dst in _NARROW_FLOATS and src != dst:
        raise UnsupportedError(f"{where(node)}: a cast from {src} to {dst} is not written: "
                               "OpenVINO's Convert to it neither rounds to nearest even nor "
                               "saturates as ONNX does")


def _saturated_from_half(w: NetWriter, node: Node, x: Out, dst: DataType) -> Out | None:
    """A saturating Cast from float16 to float8 E4M3FN or E5M2 as Clamp to the finite range,
    then Convert: from float16 OpenVINO's Convert rounds once, to nearest even (the double
    rounding is float32's, through float16), and the Clamp saturates as ONNX does (an
    OpenVINO FakeConvert read in is such a cast). None where this form does not hold."""
    if x.dtype != DataType.FLOAT16 or dst not in _SATURABLE_F8 or \
            not int(attr_or_default(node, "saturate")):
        return None
    top = float(_SATURABLE_F8[dst].max)
    x = w.one("Clamp", V1, [x], {"min": -top, "max": top}, dtype=x.dtype, shape=x.shape)
    return w.one("Convert", V1, [x], {"destination_type": to_element_type(dst, where(node))},
                 dtype=dst, shape=x.shape)


@exporter("Cast", since=1)
def _cast(w: NetWriter, node: Node, ins):
    dt = _dtype_from_onnx(node, node.attrs.get("to"))
    done = _saturated_from_half(w, node, ins[0], dt)
    if done is not None:
        return done
    _narrowing(node, ins[0].dtype, dt)
    return w.one("Convert", V1, ins[:1], {"destination_type": to_element_type(dt, where(node))},
                 dtype=dt, shape=ins[0].shape)


@exporter("CastLike", since=15)
def _cast_like(w: NetWriter, node: Node, ins):
    _narrowing(node, ins[0].dtype, ins[1].dtype)
    return w.one("ConvertLike", V1, ins[:2], dtype=ins[1].dtype, shape=ins[0].shape)


@exporter("MatMul", since=1)
def _matmul(w: NetWriter, node: Node, ins):
    return w.one("MatMul", V1, ins[:2], {"transpose_a": False, "transpose_b": False},
                 dtype=first_dtype(ins))


@exporter("Gemm", since=1)
def _gemm(w: NetWriter, node: Node, ins):
    a = node.attrs
    dt = first_dtype(ins)
    y = w.one("MatMul", V1, ins[:2], {"transpose_a": bool(a.get("transA", 0)),
                                      "transpose_b": bool(a.get("transB", 0))}, dtype=dt)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    if alpha != 1.0:
        y = w.one("Multiply", V1, [y, _scalar(w, alpha, ins[0])], {"auto_broadcast": "numpy"},
                  dtype=dt)
    if len(ins) > 2 and ins[2] is not None:
        c = ins[2]
        if beta != 1.0:
            c = w.one("Multiply", V1, [c, _scalar(w, beta, ins[0])], {"auto_broadcast": "numpy"},
                      dtype=dt)
        y = w.one("Add", V1, [y, c], {"auto_broadcast": "numpy"}, dtype=dt)
    return y


def i64_port(w: NetWriter, o: Out) -> Out:
    if o.dtype == I64:
        return o
    return w.one("Convert", V1, [o], {"destination_type": "i64"}, dtype=I64, shape=o.shape)


@exporter("Reshape", since=5)
def _reshape(w: NetWriter, node: Node, ins):
    special_zero = not attr_or_default(node, "allowzero")
    return w.one("Reshape", V1, [ins[0], i64_port(w, ins[1])], {"special_zero": special_zero},
                 dtype=ins[0].dtype)


@exporter("Flatten", since=1)
def _flatten(w: NetWriter, node: Node, ins):
    axis = int(attr_or_default(node, "axis"))
    x = ins[0]
    r = rank(x)
    if axis < 0 and r is not None:
        axis += r
    # a negative axis on an input of unknown rank: the leading dims are ``shape[:axis]``,
    # a Slice with a negative end, computed at run time (an empty product is 1)
    if axis == 0:
        pattern = w.i64([1, -1])
    else:
        shape = w.one("ShapeOf", V3, [x], {"output_type": "i64"}, dtype=I64)
        head = w.one("Slice", V8, [shape, w.i64([0]), w.i64([axis]), w.i64([1])], dtype=I64)
        prod = w.one("ReduceProd", V1, [head, w.i64([0])], {"keep_dims": True}, dtype=I64)
        pattern = w.one("Concat", V1, [prod, w.i64([-1])], {"axis": 0}, dtype=I64)
    return w.one("Reshape", V1, [x, pattern], {"special_zero": False}, dtype=x.dtype)


@exporter("Transpose", since=1)
def _transpose(w: NetWriter, node: Node, ins):
    perm = node.attrs.get("perm")
    if perm is None and rank(ins[0]) is not None:
        perm = list(range(rank(ins[0])))[::-1]
    # an empty order means "reversed" (OpenVINO's specification); its CPU plugin refuses it
    # where the shape is static, so the axes are written out whenever the rank is known
    order = w.i64(list(perm)) if perm is not None else w.const(np.zeros(0, np.int64))
    shape = None
    if perm is not None and ins[0].shape is not None and len(perm) == len(ins[0].shape):
        shape = tuple(ins[0].shape[p] for p in perm)
    return w.one("Transpose", V1, [ins[0], order], dtype=ins[0].dtype, shape=shape)


def _axes_input(w: NetWriter, node: Node, ins, pos: int) -> Out | None:
    """Axes from input `pos`, as an i64 port (older opsets' attribute is that input in the IR:
    `ir.canonical`)."""
    if len(ins) > pos and ins[pos] is not None:
        return i64_port(w, ins[pos])
    return None


@exporter("Squeeze", since=1)
def _squeeze(w: NetWriter, node: Node, ins):
    axes = _axes_input(w, node, ins, 1)
    return w.one("Squeeze", V1, [ins[0]] + ([axes] if axes is not None else []),
                 dtype=ins[0].dtype)


@exporter("Unsqueeze", since=1)
def _unsqueeze(w: NetWriter, node: Node, ins):
    axes = _axes_input(w, node, ins, 1)
    if axes is None:
        raise ModelError(f"{where(node)}: Unsqueeze without axes")
    return w.one("Unsqueeze", V1, [ins[0], axes], dtype=ins[0].dtype)


@exporter("Concat", since=1)
def _concat(w: NetWriter, node: Node, ins):
    return w.one("Concat", V1, [o for o in ins if o is not None],
                 {"axis": int(node.attrs.get("axis", 0))}, dtype=first_dtype(ins))


@exporter("Split", since=1)
def _split(w: NetWriter, node: Node, ins):
    n = len(node.outputs)
    axis = int(node.attrs.get("axis", 0))
    dt = ins[0].dtype
    split = None
    if len(ins) > 1 and ins[1] is not None:
        split = i64_port(w, ins[1])
    outs = [(dt, None)] * n
    if split is None:
        num = int(node.attrs.get("num_outputs", n))
        if num != n:
            raise ModelError(f"{where(node)}: num_outputs={num} but {n} outputs")
        c = None
        r = rank(ins[0])
        if ins[0].shape is not None and r and isinstance(ins[0].shape[axis], int):
            c = ins[0].shape[axis]
        if c is not None and c % n:  # ONNX 18: the last chunk is smaller
            size = -(-c // n)
            split = w.i64([size] * (n - 1) + [c - size * (n - 1)])
        else:
            return w.layer("Split", V1, [ins[0], w.i64(axis)], {"num_splits": n}, outs)
    return w.layer("VariadicSplit", V1, [ins[0], w.i64(axis), split], None, outs)


def _ones_like_vector(w: NetWriter, node: Node, i: int, like: Out) -> Out:
    c = const_value(node, i)
    if c is not None:
        return w.i64(np.ones(np.asarray(c).size, np.int64))
    if like.shape is not None and len(like.shape) == 1 and isinstance(like.shape[0], int):
        # a constant: ONNX Runtime's shape inference reads a computed one (the IR written
        # back to ONNX) as empty, and refuses a Resize whose sizes come from the Slice
        return w.i64(np.ones(like.shape[0], np.int64))
    shape = w.one("ShapeOf", V3, [like], {"output_type": "i64"}, dtype=I64)
    return w.one("Broadcast", V3, [w.i64(1), shape], {"mode": "numpy"}, dtype=I64)


@exporter("Slice", since=1)
def _slice10(w: NetWriter, node: Node, ins):
    starts, ends = i64_port(w, ins[1]), i64_port(w, ins[2])
    axes = ins[3] if len(ins) > 3 else None
    steps = ins[4] if len(ins) > 4 else None
    steps = i64_port(w, steps) if steps is not None else _ones_like_vector(w, node, 1, starts)
    args = [ins[0], starts, ends, steps] + ([i64_port(w, axes)] if axes is not None else [])
    return w.one("Slice", V8, args, dtype=ins[0].dtype)


@exporter("Gather", since=1)
def _gather(w: NetWriter, node: Node, ins):
    return w.one("Gather", V8, [ins[0], ins[1], w.i64(int(attr_or_default(node, "axis")))],
                 {"batch_dims": 0}, dtype=ins[0].dtype)


@exporter("GatherElements", since=11)
def _gather_elements(w: NetWriter, node: Node, ins):
    return w.one("GatherElements", "opset6", ins[:2], {"axis": int(attr_or_default(node, "axis"))},
                 dtype=ins[0].dtype)


@exporter("GatherND", since=11)
def _gather_nd(w: NetWriter, node: Node, ins):
    return w.one("GatherND", V8, ins[:2], {"batch_dims": int(attr_or_default(node, "batch_dims"))},
                 dtype=ins[0].dtype)


@exporter("Shape", since=1)
def _shape(w: NetWriter, node: Node, ins):
    s = w.one("ShapeOf", V3, ins[:1], {"output_type": "i64"}, dtype=I64,
              shape=(rank(ins[0]),) if rank(ins[0]) is not None else None)
    start, end = node.attrs.get("start"), node.attrs.get("end")
    if start is None and end is None:
        return s
    stop = int(end) if end is not None else np.iinfo(np.int64).max
    return w.one("Slice", V8, [s, w.i64([int(start or 0)]), w.i64([stop]), w.i64([1])], dtype=I64)


@exporter("Size", since=1)
def _size(w: NetWriter, node: Node, ins):
    s = w.one("ShapeOf", V3, ins[:1], {"output_type": "i64"}, dtype=I64)
    return w.one("ReduceProd", V1, [s, w.i64([0])], {"keep_dims": False}, dtype=I64, shape=())


@exporter("Constant", since=1)
def _constant(w: NetWriter, node: Node, ins):
    a = node.attrs
    if "value" in a:
        arr = np.asarray(a["value"])
    elif "value_float" in a:
        arr = np.array(a["value_float"], np.float32)
    elif "value_floats" in a:
        arr = np.array(a["value_floats"], np.float32)
    elif "value_int" in a:
        arr = np.array(a["value_int"], np.int64)
    elif "value_ints" in a:
        arr = np.array(a["value_ints"], np.int64)
    else:
        raise UnsupportedError(f"{where(node)}: Constant kind {sorted(a)} cannot be written")
    return w.const(arr, name=node.outputs[0].name)


@exporter("ConstantOfShape", since=1)  # ONNX adds it at 9; torch.onnx writes it at opset 8 too
def _constant_of_shape(w: NetWriter, node: Node, ins):
    val = node.attrs.get("value")
    arr = np.asarray(val).reshape(()) if val is not None else np.array(0, np.float32)
    return w.one("Broadcast", V3, [w.const(arr), i64_port(w, ins[0])], {"mode": "numpy"},
                 dtype=w.const(arr).dtype)


@exporter("Range", since=11)
def _range(w: NetWriter, node: Node, ins):
    dt = first_dtype(ins) or DataType.FLOAT32
    return w.one("Range", V4, [w.scalar(x) for x in ins[:3]],
                 {"output_type": to_element_type(dt, where(node))}, dtype=dt, shape=(None,))


@exporter("Expand", since=8)
def _expand(w: NetWriter, node: Node, ins):
    return w.one("Broadcast", V3, [ins[0], i64_port(w, ins[1])], {"mode": "bidirectional"},
                 dtype=ins[0].dtype)


@exporter("Where", since=1)  # ONNX adds it at 9; torch.onnx writes it at opset 8 too
def _where(w: NetWriter, node: Node, ins):
    return w.one("Select", V1, ins[:3], {"auto_broadcast": "numpy"}, dtype=first_dtype(ins[1:]))


@exporter("Tile", since=6)
def _tile(w: NetWriter, node: Node, ins):
    reps = i64_port(w, ins[1])
    n = ins[1].shape[0] if ins[1].shape else None
    if const_value(node, 1) is not None or not isinstance(n, int) or n < 4:
        return w.one("Tile", V1, [ins[0], reps], dtype=ins[0].dtype)
    # OpenVINO 2026.4's CPU plugin tiles wrongly by run-time repeats of four or more axes
    # ([2, 3, 4, 5] by [2, 2, 2, 2] leaves zeros): one Tile per axis, the others repeated once
    y = ins[0]
    for a in range(n):
        e = np.eye(n, dtype=np.int64)[a]
        r = w.one("Add", V1, [w.one("Multiply", V1, [reps, w.const(e)], dtype=I64),
                              w.const(1 - e)], dtype=I64, shape=(n,))
        y = w.one("Tile", V1, [y, r], dtype=ins[0].dtype)
    return y


def _all_axes(w: NetWriter, x: Out) -> Out:
    r = rank(x)
    if r is not None:
        return w.i64(list(range(r)))
    shape = w.one("ShapeOf", V3, [x], {"output_type": "i64"}, dtype=I64)
    n = w.one("ShapeOf", V3, [shape], {"output_type": "i64"}, dtype=I64, shape=(1,))
    n0 = w.one("Squeeze", V1, [n, w.i64([0])], dtype=I64, shape=())
    return w.one("Range", V4, [w.i64(0), n0, w.i64(1)], {"output_type": "i64"}, dtype=I64,
                 shape=(None,))


def _axes_or_all(w: NetWriter, axes: Out, x: Out) -> Out:
    """Run-time `axes`, or every axis of `x` where they are empty (ONNX reduces all there,
    OpenVINO none): the first ``n + rank * (n == 0)`` of ``axes ++ range(rank)``."""
    every = _all_axes(w, x)
    both = w.one("Concat", V1, [axes, every], {"axis": 0}, dtype=I64, shape=(None,))
    n = w.one("ShapeOf", V3, [axes], {"output_type": "i64"}, dtype=I64, shape=(1,))
    r = w.one("ShapeOf", V3, [every], {"output_type": "i64"}, dtype=I64, shape=(1,))
    empty = w.one("Equal", V1, [n, w.i64([0])], {"auto_broadcast": "numpy"}, dtype=BOOL)
    fill = w.one("Select", V1, [empty, r, w.i64([0])], {"auto_broadcast": "numpy"}, dtype=I64)
    stop = w.one("Add", V1, [n, fill], {"auto_broadcast": "numpy"}, dtype=I64, shape=(1,))
    return w.one("Slice", V8, [both, w.i64([0]), stop, w.i64([1])], dtype=I64, shape=(None,))


def _infinite_extreme(w: NetWriter, ov_type: str, x: Out, axes: Out, keep: bool, y: Out) -> Out:
    """`y`, OpenVINO's ReduceMax (ReduceMin) of `x`, with -inf (+inf) where every reduced
    element is -inf (+inf): OpenVINO's CPU plugin starts from the lowest (highest) finite
    value and returns it there."""
    npdt = to_numpy(x.dtype)
    inf = w.const(np.array(-np.inf if ov_type == "ReduceMax" else np.inf, npdt))
    hit = w.one("Equal", V1, [x, inf], {"auto_broadcast": "numpy"}, dtype=DataType.BOOL)
    u8 = w.one("Convert", V1, [hit], {"destination_type": "u8"}, dtype=DataType.UINT8)
    every = reduce_layer(w, "ReduceMin", V1, u8, axes, keep, DataType.UINT8)
    every = w.one("Convert", V1, [every], {"destination_type": "boolean"}, dtype=DataType.BOOL)
    return w.one("Select", V1, [every, inf, y], {"auto_broadcast": "numpy"}, dtype=x.dtype)


def _reduce(ov_type: str, pre: str | None = None, post: str | None = None, version=V1):
    def tr(w: NetWriter, node: Node, ins):
        x = ins[0]
        keep = bool(node.attrs.get("keepdims", 1))
        noop = bool(node.attrs.get("noop_with_empty_axes", 0))
        axes = _axes_input(w, node, ins, 1)
        c = const_value(node, 1)
        if axes is None or (c is not None and np.asarray(c).size == 0) or axes.shape == (0,):
            if noop:
                return x
            axes = _all_axes(w, x)
        elif c is None:
            if not noop:
                axes = _axes_or_all(w, axes, x)
            else:
                x, axes = _lead_axis(w, x, axes)
                y = _reduce_core(w, ov_type, pre, post, version, x, axes, keep)
                return w.one("Squeeze", V1, [y, w.i64([0])], dtype=y.dtype) if keep else y
        return _reduce_core(w, ov_type, pre, post, version, x, axes, keep)

    return tr


def _reduce_core(w: NetWriter, ov_type: str, pre, post, version, x: Out, axes: Out,
                 keep: bool) -> Out:
    if x.dtype == DataType.BOOL and ov_type in ("ReduceMax", "ReduceMin"):
        # OpenVINO's CPU plugin reduces no booleans by max/min, and its ReduceLogicalOr/And
        # only over constant axes: reduced as u8
        u8 = w.one("Convert", V1, [x], {"destination_type": "u8"}, dtype=DataType.UINT8)
        y = reduce_layer(w, ov_type, V1, u8, axes, keep, DataType.UINT8)
        return w.one("Convert", V1, [y], {"destination_type": "boolean"}, dtype=x.dtype)
    if pre == "square":
        x = w.one("Multiply", V1, [x, x], {"auto_broadcast": "numpy"}, dtype=x.dtype)
    elif pre == "exp":
        x = w.one("Exp", V1, [x], dtype=x.dtype)
    y = reduce_layer(w, ov_type, version, x, axes, keep, x.dtype)
    if ov_type in ("ReduceMax", "ReduceMin") and x.dtype is not None and x.dtype.is_floating:
        y = _infinite_extreme(w, ov_type, x, axes, keep, y)
    if post == "log":
        y = w.one("Log", V1, [y], dtype=x.dtype)
    return y


def _lead_axis(w: NetWriter, x: Out, axes: Out) -> tuple[Out, Out]:
    """`x` with a leading axis of length 1 and `axes` (run-time, maybe empty, with
    ``noop_with_empty_axes=1``) moved past it, that axis added: never empty, as OpenVINO's
    CPU plugin needs (it fails on an empty axes tensor), and reducing over the added axis
    alone is ONNX's no-op (the elementwise part, ``abs``, ``square``, kept as ONNX's
    reference keeps it)."""
    r = w.one("ShapeOf", V3, [_all_axes(w, x)], {"output_type": "i64"}, dtype=I64, shape=(1,))
    pos = w.one("FloorMod", V1, [axes, r], {"auto_broadcast": "numpy"}, dtype=I64)
    pos = w.one("Add", V1, [pos, w.i64([1])], {"auto_broadcast": "numpy"}, dtype=I64)
    axes = w.one("Concat", V1, [w.i64([0]), pos], {"axis": 0}, dtype=I64, shape=(None,))
    shape = None if x.shape is None else (1, *x.shape)
    return w.one("Unsqueeze", V1, [x, w.i64([0])], dtype=x.dtype, shape=shape), axes


for _onnx, _ov in {"ReduceSum": "ReduceSum", "ReduceMean": "ReduceMean",
                   "ReduceMax": "ReduceMax", "ReduceMin": "ReduceMin",
                   "ReduceProd": "ReduceProd"}.items():
    exporter(_onnx, since=1)(_reduce(_ov))
exporter("ReduceL1", since=1)(_reduce("ReduceL1", version=V4))
exporter("ReduceL2", since=1)(_reduce("ReduceL2", version=V4))
exporter("ReduceSumSquare", since=1)(_reduce("ReduceSum", pre="square"))
exporter("ReduceLogSumExp", since=1)(_reduce("ReduceSum", pre="exp", post="log"))


def nan_free(w: NetWriter, x: Out, mode: str) -> tuple[Out, Out | None]:
    """`x` with NaN made -inf (max) or +inf (min), which never wins over a number, and where
    `x` is NaN; ``(x, None)`` for an input that is not float. OpenVINO's TopK leaves NaN
    unspecified (its CPU plugin's order depends on k and the mode), and itergraph reads a TopK
    as ONNX's, where NaN is largest."""
    if x.dtype is None or not x.dtype.is_floating:
        return x, None
    nan = w.one("IsNaN", "opset10", [x], dtype=BOOL, shape=x.shape)
    fill = w.const(np.array(-np.inf if mode == "max" else np.inf, to_numpy(x.dtype)))
    clean = w.one("Select", V1, [nan, fill, x], {"auto_broadcast": "numpy"}, dtype=x.dtype,
                  shape=x.shape)
    return clean, nan


def first_nan_gives_zero(w: NetWriter, nan: Out, axis: int, idx: Out) -> Out:
    """`idx` (of a TopK of k=1 along `axis`), 0 where the axis's first entry is NaN."""
    first = w.one("Gather", V8, [nan, w.i64([0]), w.i64(axis)], {"batch_dims": 0}, dtype=BOOL)
    return w.one("Select", V1, [first, w.i64(0), idx], {"auto_broadcast": "numpy"}, dtype=I64)


def _top1(w: NetWriter, x: Out, axis: int, mode: str) -> list[Out]:
    # one element: sorting costs nothing, and OpenVINO takes stable=true only with a sort
    return w.layer("TopK", "opset11", [x, w.i64(1)],
                   {"axis": axis, "mode": mode, "sort": "value", "index_element_type": "i64",
                    "stable": True},
                   [(x.dtype, None), (I64, None)])


def _arg(mode: str):
    """ArgMax/ArgMin as a TopK of k=1, with ONNX Runtime's rule for NaN on floats
    (`backends.common.nan_arg`: an axis whose first entry is NaN gives 0, else NaN never
    wins): NaN made the worst value; with ``select_last_index``, the last entry equal to the
    best (NaN equals nothing), found in the input reversed along the axis."""
    def tr(w: NetWriter, node: Node, ins):
        axis = int(node.attrs.get("axis", 0))
        last = bool(node.attrs.get("select_last_index", 0))
        x, nan = nan_free(w, ins[0], mode)
        top = mode
        if last and nan is not None:
            best = _top1(w, x, axis, mode)[0]
            hit = w.one("Equal", V1, [ins[0], best], {"auto_broadcast": "numpy"}, dtype=BOOL)
            x = w.one("Convert", V1, [hit], {"destination_type": "i32"},
                      dtype=DataType.INT32, shape=ins[0].shape)
            top = "max"
        if last:  # the first index i of the input reversed along the axis is n - 1 - i
            x = w.one("Slice", V8, [x, w.i64([-1]), w.i64([np.iinfo(np.int64).min]),
                                    w.i64([-1]), w.i64([axis])], dtype=x.dtype, shape=x.shape)
        idx = _top1(w, x, axis, top)[1]
        if last:
            idx = _from_the_end(w, x, axis, idx)
        if nan is not None:
            idx = first_nan_gives_zero(w, nan, axis, idx)
        if not node.attrs.get("keepdims", 1):
            idx = w.one("Squeeze", V1, [idx, w.i64([axis])], dtype=I64)
        return idx

    return tr


def _from_the_end(w: NetWriter, x: Out, axis: int, idx: Out) -> Out:
    """n - 1 - `idx`, n the length of `x` along `axis`."""
    shape = w.one("ShapeOf", V3, [x], {"output_type": "i64"}, dtype=I64)
    n = w.one("Gather", V8, [shape, w.i64(axis), w.i64(0)], {"batch_dims": 0}, dtype=I64,
              shape=())
    top = w.one("Subtract", V1, [n, w.i64(1)], {"auto_broadcast": "numpy"}, dtype=I64, shape=())
    return w.one("Subtract", V1, [top, idx], {"auto_broadcast": "numpy"}, dtype=I64)


exporter("ArgMax", since=1)(_arg("max"))
exporter("ArgMin", since=1)(_arg("min"))


def _softmax(ov_type: str, version: str):
    """The opset 13 form (the reader rewrites older nodes into it: `ir.legacy_forms`)."""

    def tr(w: NetWriter, node: Node, ins):
        x = ins[0]
        return w.one(ov_type, version, [x], {"axis": int(node.attrs.get("axis", -1))},
                     dtype=x.dtype, shape=x.shape)

    return tr


exporter("Softmax", since=13)(_softmax("SoftMax", V8))
exporter("LogSoftmax", since=13)(_softmax("LogSoftmax", V5))


@exporter("Einsum", since=12)
def _einsum(w: NetWriter, node: Node, ins):
    return w.one("Einsum", V7, [o for o in ins if o is not None],
                 {"equation": node.attrs["equation"].replace(" ", "")}, dtype=first_dtype(ins))


@exporter("CumSum", since=11)
def _cumsum(w: NetWriter, node: Node, ins):
    return w.one("CumSum", V3, ins[:2], {"exclusive": bool(attr_or_default(node, "exclusive")),
                                         "reverse": bool(attr_or_default(node, "reverse"))},
                 dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("NonZero", since=9)
def _non_zero(w: NetWriter, node: Node, ins):
    return w.one("NonZero", V3, ins[:1], {"output_type": "i64"}, dtype=I64)


@exporter("Dropout", since=1)
def _dropout(w: NetWriter, node: Node, ins):
    def given(i: int) -> bool:
        return len(node.inputs) > i and node.inputs[i] is not None

    training = const_value(node, 2) if given(2) else False
    ratio = const_value(node, 1) if given(1) else 0.5
    if (training is None or bool(np.asarray(training))) and \
            (ratio is None or float(np.asarray(ratio)) != 0.0):
        raise UnsupportedError(f"{where(node)}: Dropout in training mode (training_mode "
                               f"{'given at run time' if training is None else 'true'}) draws "
                               "a random mask; the OpenVINO writer writes inference only")
    if len(node.outputs) > 1 and node.outputs[1] is not None:
        mask = w.one("Broadcast", V3, [w.const(np.array(True)),
                                       w.one("ShapeOf", V3, [ins[0]], {"output_type": "i64"},
                                             dtype=I64)], {"mode": "numpy"}, dtype=BOOL)
        return [ins[0], mask]
    return ins[0]


def _scalar_i64(w: NetWriter, node: Node, i: int, ins) -> Out:
    """Input `i` (a 1-element tensor such as TopK's ``K``) as the i64 scalar OpenVINO wants."""
    c = const_value(node, i)
    if c is not None:
        return w.const(np.asarray(c, np.int64).reshape(()))
    return w.one("Reshape", V1, [i64_port(w, ins[i]), w.i64([])], {"special_zero": False},
                 dtype=I64, shape=())


def _topk(w: NetWriter, node: Node, ins, k: Out):
    axis = int(node.attrs.get("axis", -1))
    mode = "max" if node.attrs.get("largest", 1) else "min"
    # ONNX puts the lower index first among equal values: OpenVINO's stable sort by value
    # (an unsorted ONNX TopK may return any order, the sorted one among them)
    return w.layer("TopK", "opset11", [ins[0], k],
                   {"axis": axis, "mode": mode, "sort": "value", "index_element_type": "i64",
                    "stable": True}, [(ins[0].dtype, None), (I64, None)])


@exporter("TopK", since=1)
def _topk10(w: NetWriter, node: Node, ins):
    return _topk(w, node, ins, _scalar_i64(w, node, 1, ins))


@exporter("ReverseSequence", since=10)
def _reverse_sequence(w: NetWriter, node: Node, ins):
    return w.one("ReverseSequence", V1, [ins[0], i64_port(w, ins[1])],
                 {"batch_axis": int(attr_or_default(node, "batch_axis")),
                  "seq_axis": int(attr_or_default(node, "time_axis"))},
                 dtype=ins[0].dtype, shape=ins[0].shape)


# ONNX ScatterND reduction -> OpenVINO ScatterNDUpdate-15's
_SCATTER_REDUCTION = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}


@exporter("ScatterND", since=11)
def _scatter_nd(w: NetWriter, node: Node, ins):
    reduction = attr_or_default(node, "reduction")
    if isinstance(reduction, bytes):
        reduction = reduction.decode()
    args = [ins[0], i64_port(w, ins[1]), ins[2]]
    if reduction == "none":
        return w.one("ScatterNDUpdate", V4, args, dtype=ins[0].dtype, shape=ins[0].shape)
    if reduction not in _SCATTER_REDUCTION:
        raise UnsupportedError(f"{where(node)}: ScatterND reduction '{reduction}' cannot be "
                               "written to OpenVINO")
    return w.one("ScatterNDUpdate", "opset15", args, {"reduction": _SCATTER_REDUCTION[reduction]},
                 dtype=ins[0].dtype, shape=ins[0].shape)


@exporter("Compress", since=9)
def _compress(w: NetWriter, node: Node, ins):
    """The positions where the condition holds (``NonZero``), gathered along the axis (the
    flattened input without one); a condition shorter than the axis drops the rest."""
    x = ins[0]
    axis = node.attrs.get("axis")
    if axis is None:
        x = w.one("Reshape", V1, [x, w.i64([-1])], {"special_zero": False}, dtype=x.dtype)
        axis = 0
    nz = w.one("NonZero", V3, [ins[1]], {"output_type": "i64"}, dtype=I64)
    idx = w.one("Squeeze", V1, [nz, w.i64([0])], dtype=I64)
    return w.one("Gather", V8, [x, idx, w.i64(int(axis))], {"batch_dims": 0}, dtype=x.dtype)
