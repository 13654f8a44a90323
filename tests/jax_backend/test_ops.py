"""Every lowering rule against the NumPy kernel of the same op, on single-node ONNX models.

Each case runs twice: with its data inputs fed at run time (traced by XLA) and with all of
them as initializers (folded at trace time on NumPy, or computed by XLA from constants), so
both paths of a rule are checked. Results must match in shape, dtype and value.
"""

from __future__ import annotations

import numpy as np
import pytest
from jaxutil import compare, onnx_graph, vi
from onnx import helper as h

rng = np.random.default_rng(0)
f32 = np.float32


def r(*shape, dtype=f32, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def ri(*shape, dtype=np.int64, lo=-5, hi=6):
    return rng.integers(lo, hi, shape).astype(dtype)


def onnx_type(a):
    return h.np_dtype_to_tensor_dtype(np.asarray(a).dtype)


# (id, op, inputs {name: array or None}, attrs, opset, names that must be constants, n_out)
CASES = []


def case(id_, op, inputs, attrs=None, opset=21, static=(), n_out=1):
    CASES.append(pytest.param(op, inputs, attrs or {}, opset, set(static), n_out, id=id_))


# --- element-wise arithmetic, broadcasting, dtypes
for name in ("Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "LessOrEqual",
             "Greater", "GreaterOrEqual"):
    case(f"{name}-f32-bcast", name, {"a": r(2, 3), "b": r(3)})
    case(f"{name}-i64", name, {"a": ri(2, 3), "b": ri(2, 3, lo=1)})
case("Div-int32-negative", "Div", {"a": np.array([7, -7, 7, -7, 0], np.int32),
                                   "b": np.array([2, 2, -2, -2, 3], np.int32)})
case("Div-f64", "Div", {"a": r(4, dtype=np.float64), "b": r(4, dtype=np.float64, lo=0.5)})
case("Add-legacy-broadcast", "Add", {"a": r(2, 3, 4), "b": r(3)}, {"broadcast": 1, "axis": 1},
     opset=6)
case("Pow-float", "Pow", {"a": r(3, lo=0.1), "b": r(3)})
case("Pow-float-int-exp", "Pow", {"a": r(3), "b": np.array([0, 1, 3], np.int64)})
case("Pow-int", "Pow", {"a": ri(4, lo=-3, hi=4), "b": np.array([0, 1, 2, 3], np.int64)})
case("Mod-int", "Mod", {"a": ri(6), "b": np.array([3, -3, 2, -2, 5, 4], np.int64)})
case("Mod-fmod", "Mod", {"a": r(5), "b": r(5, lo=0.5)}, {"fmod": 1})
case("Sum-3", "Sum", {"a": r(2, 3), "b": r(3), "c": r(1, 3)})
case("Mean-2", "Mean", {"a": r(2, 3), "b": r(2, 3)})
case("Max-1", "Max", {"a": r(4)})
case("BitShift-left", "BitShift", {"x": np.array([1, 2, 3], np.uint32),
                                   "y": np.array([1, 2, 3], np.uint32)}, {"direction": "LEFT"})
case("BitShift-right", "BitShift", {"x": np.array([16, 8, 64], np.uint8),
                                    "y": np.array([1, 2, 3], np.uint8)}, {"direction": "RIGHT"})
for name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
    case(name, name, {"a": ri(5, dtype=np.int32), "b": ri(5, dtype=np.int32)})
case("BitwiseNot", "BitwiseNot", {"a": ri(5, dtype=np.int32)})
bools = {"a": rng.random(6) > 0.5, "b": rng.random(6) > 0.5}
for name in ("And", "Or", "Xor"):
    case(name, name, bools)
case("Not", "Not", {"a": bools["a"]})
case("Where", "Where", {"c": bools["a"].reshape(2, 3), "x": r(2, 3), "y": r(3)})
case("Clip-11", "Clip", {"x": r(6), "lo": np.array(-0.5, f32), "hi": np.array(0.7, f32)})
case("Clip-11-min-only", "Clip", {"x": r(6), "lo": np.array(-0.5, f32)})
case("Clip-6", "Clip", {"x": r(6)}, {"min": -0.3, "max": 0.4}, opset=6)

# --- unary math
for name, lo, hi in [("Neg", -2, 2), ("Abs", -2, 2), ("Sqrt", 0.1, 3), ("Exp", -2, 2),
                     ("Log", 0.1, 3), ("Floor", -3, 3), ("Ceil", -3, 3), ("Tanh", -2, 2),
                     ("Reciprocal", 0.5, 2), ("Round", -3, 3), ("Sign", -2, 2), ("Sin", -2, 2),
                     ("Cos", -2, 2), ("Tan", -1, 1), ("Asin", -0.9, 0.9), ("Acos", -0.9, 0.9),
                     ("Atan", -2, 2), ("Sinh", -2, 2), ("Cosh", -2, 2), ("Asinh", -2, 2),
                     ("Acosh", 1.1, 3), ("Atanh", -0.9, 0.9), ("Erf", -2, 2)]:
    case(name, name, {"x": r(2, 5, lo=lo, hi=hi)})
case("Round-halves", "Round", {"x": np.array([0.5, 1.5, 2.5, -0.5, -1.5], f32)})
special = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], f32)
case("IsNaN", "IsNaN", {"x": special})
case("IsInf", "IsInf", {"x": special})
case("IsInf-pos", "IsInf", {"x": special}, {"detect_negative": 0})
case("IsInf-neg", "IsInf", {"x": special}, {"detect_positive": 0})

# --- activations
for name, attrs in [("Relu", {}), ("Sigmoid", {}), ("Softsign", {}), ("Softplus", {}),
                    ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Selu", {}),
                    ("Celu", {"alpha": 1.3}), ("ThresholdedRelu", {"alpha": 0.5}),
                    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}),
                    ("Mish", {}), ("Gelu", {}), ("Gelu", {"approximate": "tanh"})]:
    case(f"{name}{attrs}", name, {"x": r(3, 4, lo=-4, hi=4)}, attrs)
case("Sigmoid-f64", "Sigmoid", {"x": r(5, dtype=np.float64)})
case("PRelu", "PRelu", {"x": r(2, 3, 4), "s": r(3, 1)})

# --- linear algebra, softmax
case("MatMul-2d", "MatMul", {"a": r(3, 4), "b": r(4, 5)})
case("MatMul-batched", "MatMul", {"a": r(2, 3, 4), "b": r(4, 5)})
case("MatMul-vec", "MatMul", {"a": r(4), "b": r(2, 4, 3)})
case("MatMul-int", "MatMul", {"a": ri(2, 3), "b": ri(3, 2)})
case("Gemm", "Gemm", {"a": r(4, 3), "b": r(5, 4), "c": r(5)},
     {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0})
case("Gemm-noC", "Gemm", {"a": r(3, 4), "b": r(4, 5)})
case("Einsum", "Einsum", {"a": r(2, 3, 4), "b": r(2, 4, 5)}, {"equation": "bij,bjk->bik"})
for name in ("Softmax", "LogSoftmax", "Hardmax"):
    case(f"{name}-13", name, {"x": r(2, 3, 4)}, {"axis": 1})
    if name != "Hardmax":  # the NumPy backend's Hardmax-11 (onnx.reference) ignores coercion
        case(f"{name}-11", name, {"x": r(2, 3, 4)}, {"axis": 1}, opset=11)
case("LayerNormalization", "LayerNormalization", {"x": r(2, 3, 4), "s": r(3, 4), "b": r(3, 4)},
     {"axis": -2}, opset=17, n_out=3)

# --- shapes and indexing
case("Reshape", "Reshape", {"x": r(2, 3, 4), "s": np.array([0, -1, 2], np.int64)},
     static={"s"})
case("Reshape-allowzero", "Reshape", {"x": r(0, 3), "s": np.array([3, 0], np.int64)},
     {"allowzero": 1}, static={"s"})
case("Transpose", "Transpose", {"x": r(2, 3, 4)}, {"perm": [2, 0, 1]})
case("Transpose-default", "Transpose", {"x": r(2, 3, 4)})
case("Squeeze-13", "Squeeze", {"x": r(1, 3, 1), "a": np.array([-1], np.int64)}, static={"a"})
case("Squeeze-all", "Squeeze", {"x": r(1, 3, 1)})
case("Squeeze-11", "Squeeze", {"x": r(1, 3, 1)}, {"axes": [0]}, opset=11)
case("Unsqueeze-13", "Unsqueeze", {"x": r(3, 4), "a": np.array([0, -1], np.int64)},
     static={"a"})
case("Unsqueeze-11", "Unsqueeze", {"x": r(3, 4)}, {"axes": [1]}, opset=11)
case("Flatten", "Flatten", {"x": r(2, 3, 4)}, {"axis": -1})
case("Flatten-0", "Flatten", {"x": r(2, 3, 4)}, {"axis": 0})
case("Expand", "Expand", {"x": r(3, 1), "s": np.array([2, 1, 4], np.int64)}, static={"s"})
case("Tile", "Tile", {"x": r(2, 3), "t": np.array([2, 1], np.int64)}, static={"t"})
case("Concat", "Concat", {"a": r(2, 3), "b": r(2, 1), "c": r(2, 0)}, {"axis": -1})
case("Split-sizes", "Split", {"x": r(6, 2), "s": np.array([1, 2, 3], np.int64)},
     static={"s"}, n_out=3)
case("Split-equal", "Split", {"x": r(2, 6)}, {"axis": 1}, n_out=3)
case("Split-num-outputs", "Split", {"x": r(7)}, {"num_outputs": 3}, opset=18, n_out=3)
case("Split-11", "Split", {"x": r(5)}, {"split": [2, 3]}, opset=11, n_out=2)
case("Slice", "Slice", {"x": r(5, 6), "s": np.array([1, -1], np.int64),
                        "e": np.array([100, -7], np.int64), "a": np.array([0, 1], np.int64),
                        "st": np.array([2, -2], np.int64)}, static={"s", "e", "a", "st"})
case("Slice-1", "Slice", {"x": r(5, 6)}, {"starts": [1], "ends": [-1], "axes": [1]}, opset=1)
case("Gather", "Gather", {"x": r(4, 3), "i": np.array([[0, -1], [2, 3]], np.int64)})
case("Gather-axis1-scalar", "Gather", {"x": r(4, 3), "i": np.array(-2, np.int64)}, {"axis": 1})
case("GatherElements", "GatherElements", {"x": r(3, 3), "i": np.array([[0, -1], [2, 1],
                                                                       [1, 0]], np.int64)},
     {"axis": 1})
case("ScatterElements", "ScatterElements", {"x": r(3, 3), "i": np.array([[1, -1], [0, 2]],
                                                                         np.int64),
                                             "u": r(2, 2)}, {"axis": 1})
case("ScatterElements-add", "ScatterElements", {"x": r(3, 3), "i": np.array([[1, 1], [0, 0]],
                                                                             np.int64),
                                                 "u": r(2, 2)}, {"axis": 0, "reduction": "add"})
case("Scatter-9", "Scatter", {"x": r(3, 3), "i": np.array([[2, 0]], np.int64), "u": r(1, 2)},
     opset=9)
case("Cast-f2i", "Cast", {"x": r(5, lo=-4, hi=4)}, {"to": 7})
_SPECIAL = np.array([np.nan, np.inf, -np.inf, -3.7, 300.5, 3e9, -3e9, 1e19, 1e30])
for to in (3, 6, 7, 12, 13):  # INT8, INT32, INT64, UINT32, UINT64: NumPy's rule, not saturation
    case(f"Cast-f2i-special-{to}", "Cast", {"x": _SPECIAL.astype(f32)}, {"to": to})
    case(f"Cast-d2i-special-{to}", "Cast", {"x": _SPECIAL}, {"to": to})
case("Cast-i2f", "Cast", {"x": ri(5)}, {"to": 1})
case("Cast-f2bool", "Cast", {"x": np.array([0.0, 1.5, -2.0], f32)}, {"to": 9})
case("Cast-f2f16", "Cast", {"x": r(5)}, {"to": 10})
case("CastLike", "CastLike", {"x": ri(3), "like": r(1, dtype=np.float64)})
case("Shape", "Shape", {"x": r(2, 3, 4)})
case("Shape-start-end", "Shape", {"x": r(2, 3, 4)}, {"start": 1, "end": -1})
case("Size", "Size", {"x": r(2, 3, 4)})
case("Identity", "Identity", {"x": r(2, 3)})
case("ConstantOfShape", "ConstantOfShape", {"s": np.array([2, 3], np.int64)},
     {"value": h.make_tensor("v", 6, [1], [7])}, static={"s"})
case("ConstantOfShape-default", "ConstantOfShape", {"s": np.array([4], np.int64)}, static={"s"})
case("Range-int", "Range", {"a": np.array(10, np.int64), "b": np.array(-3, np.int64),
                            "c": np.array(-3, np.int64)}, static={"a", "b", "c"})
case("Range-float", "Range", {"a": np.array(0.5, f32), "b": np.array(3.0, f32),
                              "c": np.array(0.7, f32)}, static={"a", "b", "c"})
case("Dropout-inference", "Dropout", {"x": r(3)}, n_out=2)

# --- reductions
for name in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
             "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"):
    x = r(2, 3, 4, lo=0.1, hi=1.5)
    case(f"{name}-18-axes", name, {"x": x, "a": np.array([0, -1], np.int64)}, {"keepdims": 0},
         static={"a"})
    case(f"{name}-18-all", name, {"x": x})
    case(f"{name}-11-attr", name, {"x": x}, {"axes": [1]}, opset=11)
case("ReduceSum-int", "ReduceSum", {"x": ri(3, 4, dtype=np.int32), "a": np.array([1], np.int64)},
     static={"a"})
case("ReduceSum-noop", "ReduceSum", {"x": r(3, 4), "a": np.zeros(0, np.int64)},
     {"noop_with_empty_axes": 1}, static={"a"})
case("ReduceMax-empty", "ReduceMax", {"x": r(0, 3), "a": np.array([0], np.int64)},
     static={"a"})
for name in ("ArgMax", "ArgMin"):
    x = np.array([[1, 3, 3], [2, 2, 0]], f32)
    case(f"{name}", name, {"x": x}, {"axis": 1})
    case(f"{name}-last", name, {"x": x}, {"axis": 1, "select_last_index": 1, "keepdims": 0})
case("CumSum", "CumSum", {"x": r(3, 4), "a": np.array(1, np.int64)}, static={"a"})
case("CumSum-excl-rev", "CumSum", {"x": ri(3, 4), "a": np.array(0, np.int64)},
     {"exclusive": 1, "reverse": 1}, static={"a"})

# --- more tensor ops, convolution, pooling, normalization
case("Pad-constant", "Pad", {"x": r(2, 3), "p": np.array([0, 1, 1, 2], np.int64),
                             "v": np.array(9.0, f32)}, static={"p"})
for mode in ("reflect", "edge", "wrap"):
    case(f"Pad-{mode}", "Pad", {"x": r(3, 4), "p": np.array([1, 2, 1, 1], np.int64)},
         {"mode": mode}, static={"p"})
case("Pad-axes", "Pad", {"x": r(3, 4), "p": np.array([1, 2], np.int64),
                                  "v": np.array(1.0, f32), "a": np.array([1], np.int64)},
     static={"p", "a"})
case("Pad-2", "Pad", {"x": r(2, 2)}, {"pads": [1, 0, 0, 1], "value": 3.0}, opset=2)
case("Trilu-upper", "Trilu", {"x": r(3, 4), "k": np.array(1, np.int64)}, static={"k"})
case("Trilu-lower", "Trilu", {"x": r(4, 3)}, {"upper": 0})
case("OneHot", "OneHot", {"i": np.array([[0, 2], [-1, 1]], np.int64),
                          "d": np.array(3, np.int64), "v": np.array([0, 5], f32)}, {"axis": 1},
     static={"d"})
case("TopK-largest", "TopK", {"x": np.array([[3, 1, 3, 2], [0, 5, 5, 1]], f32),
                              "k": np.array([2], np.int64)}, {"axis": 1}, static={"k"}, n_out=2)
case("TopK-smallest", "TopK", {"x": r(3, 5), "k": np.array([3], np.int64)},
     {"axis": 0, "largest": 0}, static={"k"}, n_out=2)
case("GatherND", "GatherND", {"x": r(2, 3, 4), "i": np.array([[0, 1], [1, -1]], np.int64)})
case("GatherND-batch", "GatherND", {"x": r(2, 3, 4), "i": np.array([[[1]], [[2]]], np.int64)},
     {"batch_dims": 1})
case("DepthToSpace-DCR", "DepthToSpace", {"x": r(1, 8, 2, 3)}, {"blocksize": 2})
case("DepthToSpace-CRD", "DepthToSpace", {"x": r(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"})
case("SpaceToDepth", "SpaceToDepth", {"x": r(1, 2, 4, 6)}, {"blocksize": 2})
case("EyeLike", "EyeLike", {"x": r(3, 4)}, {"k": 1, "dtype": 7})
case("Shrink", "Shrink", {"x": r(6, lo=-2, hi=2)}, {"bias": 0.5, "lambd": 0.7})
case("Conv", "Conv", {"x": r(1, 4, 6, 7), "w": r(6, 2, 3, 2), "b": r(6)},
     {"group": 2, "strides": [2, 1], "pads": [1, 0, 0, 1], "dilations": [1, 2]})
case("Conv-same-1d", "Conv", {"x": r(2, 3, 9), "w": r(4, 3, 4)},
     {"auto_pad": "SAME_UPPER", "strides": [2]})
case("MaxPool", "MaxPool", {"x": r(1, 2, 5, 6)}, {"kernel_shape": [3, 2], "strides": [2, 2],
                                                   "pads": [1, 0, 1, 1]})
case("AveragePool-exclude-pad", "AveragePool", {"x": r(1, 2, 5, 5)},
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
case("AveragePool-include-pad", "AveragePool", {"x": r(1, 2, 5, 5)},
     {"kernel_shape": [2, 3], "pads": [1, 1, 0, 1], "count_include_pad": 1})
case("GlobalAveragePool", "GlobalAveragePool", {"x": r(2, 3, 4, 5)})
case("GlobalMaxPool", "GlobalMaxPool", {"x": r(2, 3, 4, 5)})
case("BatchNormalization", "BatchNormalization", {"x": r(2, 3, 4), "s": r(3), "b": r(3),
                                                  "m": r(3), "v": r(3, lo=0.5, hi=2)})
case("InstanceNormalization", "InstanceNormalization", {"x": r(2, 3, 4), "s": r(3), "b": r(3)})
case("RMSNormalization", "RMSNormalization", {"x": r(2, 3, 4), "s": r(4)}, opset=23)
case("Swish", "Swish", {"x": r(5)}, {"alpha": 0.7}, opset=24)


def _graph(op_type, inputs, attrs, opset, as_consts, n_out):
    names = list(inputs)
    outs = [f"y{i}" for i in range(n_out)]
    node = h.make_node(op_type, names, outs, **attrs)
    feeds = {k: v for k, v in inputs.items() if k not in as_consts}
    consts = {k: v for k, v in inputs.items() if k in as_consts}
    g = onnx_graph([node], [vi(k, onnx_type(v), v.shape) for k, v in feeds.items()],
                   [h.make_empty_tensor_value_info(o) for o in outs], consts, opset)
    return g, feeds


@pytest.mark.parametrize("op_type, inputs, attrs, opset, static, n_out", CASES)
@pytest.mark.parametrize("mode", ["fed", "constant"])
def test_op_matches_numpy(op_type, inputs, attrs, opset, static, n_out, mode):
    as_consts = set(inputs) if mode == "constant" else static
    g, feeds = _graph(op_type, inputs, attrs, opset, as_consts, n_out)
    compare(g, feeds, rtol=2e-5, atol=1e-6)


def test_no_op_of_the_numpy_backend_lacks_a_rule():
    """Every op with a native NumPy kernel has a lowering, except the sequence/optional ops
    (XLA has no lists) and Loop/If (lowered by the loop and branch code)."""
    from itergraph.backends.jax.table import LOWERINGS, load_all
    from itergraph.backends.numpy.kernels import KERNELS
    from itergraph.backends.numpy.kernels import load_all as load_numpy

    load_all()
    load_numpy()
    lowered = {op for _, op in LOWERINGS.ops()}
    missing = sorted(op for dom, op in KERNELS.ops() if dom == "" and op not in lowered
                     and not op.startswith(("Sequence", "Optional")) and op not in (
                         "If", "SplitToSequence", "ConcatFromSequence"))
    assert missing == [], missing


def test_hardmax_before_13_coerces_to_2d_like_onnxruntime():
    import onnxruntime as ort

    from itergraph.backends import jax as jb

    x = r(2, 3, 4)
    node = h.make_node("Hardmax", ["x"], ["y"], axis=1)
    m = h.make_model(h.make_graph([node], "g", [vi("x", 1, [2, 3, 4])], [vi("y", 1, None)]),
                     opset_imports=[h.make_opsetid("", 11)], ir_version=7)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    from itergraph.frontends.onnx import read

    got = jb.compile_graph(read(m)).run({"x": x})["y"]
    np.testing.assert_array_equal(got, want)
