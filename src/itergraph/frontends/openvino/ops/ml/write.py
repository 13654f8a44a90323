"""``ai.onnx.ml`` ops -> standard OpenVINO layers (OpenVINO has no ML-domain ops; what
scikit-learn models converted by skl2onnx hold decomposes exactly). ONNX Runtime is the oracle
where the ONNX-ML specification leaves a case open; what it computes inconsistently is refused.

- ``Scaler``: ``(x - offset) * scale`` (float output); ``Binarizer``: ``x > threshold`` as 1/0;
  ``Imputer``: ``Select`` of the imputed values where ``x`` is the replaced value (NaN: IsNaN);
- ``Normalizer``: each row divided by its ``MAX`` (the largest value, not magnitude), ``L1``
  or ``L2`` norm, a row whose divisor is 0 kept as it is (ONNX Runtime);
- ``ArrayFeatureExtractor``: ``Gather`` on the last axis with the indices flattened; a 1-D
  input gives ``[1, n]``;
- ``LinearRegressor``/``LinearClassifier``: ``MatMul`` with the coefficients plus the
  intercepts. A binary classifier with one coefficient row scores ``[1 - s, s]`` (LOGISTIC:
  ``[1 - sigmoid(s), sigmoid(s)]``) and labels ``s > 0``; otherwise the scores are
  post-transformed (`post_transform`) and the label is the first highest raw score;
- ``TreeEnsembleRegressor``/``TreeEnsembleClassifier``: every tree walked at once, by
  ``Gather`` over node tables, as many steps as the deepest tree (a leaf points to itself),
  then the leaves' weights summed over the trees (`write_trees`);
- ``SVMRegressor``: the kernel of the features and the support vectors (`kernel`) times the
  coefficients, plus ``rho``; ``one_class``: its sign as +1/-1. ``SVMClassifier``:
  `write_svm`; ``LabelEncoder``, ``OneHotEncoder``: `write_encoders`.

String class labels are written as a string constant and gathered (OpenVINO's string
tensors).
"""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.graph import Node
from .....ir.types import DataType
from ...elements import to_element_type, to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from ...reduce_form import reduce_layer
from ..basic.write import first_nan_gives_zero, nan_free

ML = "ai.onnx.ml"
V1, V3, V8 = "opset1", "opset3", "opset8"
F32, I64, BOOL = DataType.FLOAT32, DataType.INT64, DataType.BOOL
_NB = {"auto_broadcast": "numpy"}


def text(node: Node, name: str, default: str = "") -> str:
    v = node.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def floats(node: Node, name: str) -> np.ndarray | None:
    """A float attribute, from ``name`` or ``name_as_tensor``; None where neither is given."""
    v = node.attrs.get(name + "_as_tensor", node.attrs.get(name))
    return None if v is None else np.asarray(v, np.float64).reshape(-1)


def binary(w: NetWriter, op: str, a: Out, b: Out, dtype: DataType | None = None) -> Out:
    return w.one(op, V1, [a, b], dict(_NB), dtype=dtype or a.dtype)


def as_float(w: NetWriter, x: Out, dt: DataType = F32) -> Out:
    """`x` as `dt` (ML ops take integer features and compute in float)."""
    if x.dtype == dt:
        return x
    return w.one("Convert", V1, [x], {"destination_type": to_element_type(dt)}, dtype=dt,
                 shape=x.shape)


def fconst(w: NetWriter, values, dt: DataType | None = F32) -> Out:
    """A constant of `values` as `dt` (float32 where the type is unknown)."""
    return w.const(np.asarray(values, np.float64).astype(to_numpy(dt or F32)))


def rows(w: NetWriter, x: Out) -> Out:
    """`x` as ``[N, C]``: a 1-D input is one row (ONNX Runtime)."""
    if x.shape is None or len(x.shape) != 1:
        return x
    return w.one("Reshape", V1, [x, w.i64([1, -1])], {"special_zero": False}, dtype=x.dtype,
                 shape=(1, x.shape[0]))


def refuse(node: Node, why: str) -> UnsupportedError:
    return UnsupportedError(f"{where(node)}: the OpenVINO writer cannot express {why}")


def float_type(x: Out) -> DataType:
    return x.dtype if x.dtype in (F32, DataType.FLOAT64) else F32


# -- element-wise preprocessing ------------------------------------------------------------
@exporter("Scaler", since=1, domain=ML)
def _scaler(w: NetWriter, node: Node, ins):
    dt = float_type(ins[0])
    x = as_float(w, ins[0], dt)
    offset, scale = floats(node, "offset"), floats(node, "scale")
    y = binary(w, "Subtract", x, fconst(w, offset if offset is not None else [0.0], dt))
    y = binary(w, "Multiply", y, fconst(w, scale if scale is not None else [1.0], dt))
    return as_float(w, y, F32)


@exporter("Binarizer", since=1, domain=ML)
def _binarizer(w: NetWriter, node: Node, ins):
    x = ins[0]
    above = binary(w, "Greater", x, fconst(w, node.attrs.get("threshold", 0.0), x.dtype),
                   dtype=BOOL)
    return w.one("Select", V1, [above, fconst(w, 1, x.dtype), fconst(w, 0, x.dtype)],
                 dict(_NB), dtype=x.dtype, shape=x.shape)


@exporter("Imputer", since=1, domain=ML)
def _imputer(w: NetWriter, node: Node, ins):
    x = ins[0]
    values = floats(node, "imputed_value_floats")
    replaced = float(node.attrs.get("replaced_value_float", 0.0))
    if values is None or values.size == 0:
        values = node.attrs.get("imputed_value_int64s")
        replaced = int(node.attrs.get("replaced_value_int64", 0))
    if values is None or len(values) == 0:
        raise refuse(node, "an Imputer without imputed values")
    if np.isnan(replaced):
        hit = w.one("IsNaN", "opset10", [x], dtype=BOOL, shape=x.shape)
    else:
        hit = binary(w, "Equal", x, fconst(w, replaced, x.dtype), dtype=BOOL)
    return w.one("Select", V1, [hit, fconst(w, values, x.dtype), x], dict(_NB), dtype=x.dtype,
                 shape=x.shape)


@exporter("Normalizer", since=1, domain=ML)
def _normalizer(w: NetWriter, node: Node, ins):
    x = as_float(w, rows(w, ins[0]))
    norm = text(node, "norm", "MAX")
    axis = w.i64([1])
    if norm == "MAX":
        d = w.one("ReduceMax", V1, [x, axis], {"keep_dims": True}, dtype=F32)
    elif norm == "L1":
        d = w.one("ReduceL1", "opset4", [x, axis], {"keep_dims": True}, dtype=F32)
    elif norm == "L2":
        d = w.one("ReduceL2", "opset4", [x, axis], {"keep_dims": True}, dtype=F32)
    else:
        raise refuse(node, f"norm '{norm}'")
    zero = binary(w, "Equal", d, fconst(w, 0.0), dtype=BOOL)
    d = w.one("Select", V1, [zero, fconst(w, 1.0), d], dict(_NB), dtype=F32)
    return binary(w, "Divide", x, d)


@exporter("ArrayFeatureExtractor", since=1, domain=ML)
def _array_feature_extractor(w: NetWriter, node: Node, ins):
    x, idx = ins[0], ins[1]
    flat = w.one("Reshape", V1, [idx, w.i64([-1])], {"special_zero": False}, dtype=idx.dtype)
    y = w.one("Gather", V8, [x, flat, w.i64(-1)], {"batch_dims": 0}, dtype=x.dtype)
    if x.shape is not None and len(x.shape) == 1:
        y = w.one("Unsqueeze", V1, [y, w.i64([0])], dtype=x.dtype)
    return y


# -- linear models --------------------------------------------------------------------------
def linear_scores(w: NetWriter, node: Node, x: Out, targets: int) -> Out:
    """``x @ coefficients.T + intercepts``, coefficients ``[targets, F]``, as float."""
    dt = float_type(x)
    x = as_float(w, rows(w, x), dt)
    coef = floats(node, "coefficients")
    if coef is None or targets <= 0 or coef.size % targets:
        raise refuse(node, f"{0 if coef is None else coef.size} coefficients for "
                     f"{targets} targets")
    y = w.one("MatMul", V1, [x, fconst(w, coef.reshape(targets, -1).T, dt)],
              {"transpose_a": False, "transpose_b": False}, dtype=dt)
    intercepts = floats(node, "intercepts")
    if intercepts is not None and intercepts.size:
        y = binary(w, "Add", y, fconst(w, intercepts, dt))
    return as_float(w, y, F32)


@exporter("LinearRegressor", since=1, domain=ML)
def _linear_regressor(w: NetWriter, node: Node, ins):
    if text(node, "post_transform", "NONE") != "NONE":
        raise refuse(node, f"post_transform {text(node, 'post_transform')}")
    return linear_scores(w, node, ins[0], int(node.attrs.get("targets", 1)))


def class_labels(node: Node, ints: str, strings: str) -> np.ndarray:
    """The class labels: int64, or strings (OpenVINO holds string tensors: a ``Gather``
    of a string constant)."""
    if node.attrs.get(ints) is not None:
        return np.asarray(node.attrs[ints], np.int64)
    names = node.attrs.get(strings)
    if names is None:
        raise refuse(node, f"a classifier with neither {ints} nor {strings}")
    return np.array([n.decode() if isinstance(n, bytes) else str(n) for n in names], object)


def sigmoid(w: NetWriter, s: Out) -> Out:
    return w.one("Sigmoid", V1, [s], dtype=s.dtype, shape=s.shape)


def post_transform(w: NetWriter, node: Node, s: Out) -> Out:
    """Scores ``[N, C]`` after ONNX-ML's ``post_transform`` (PROBIT refused)."""
    kind = text(node, "post_transform", "NONE")
    if kind == "NONE":
        return s
    if kind == "LOGISTIC":
        return sigmoid(w, s)
    if kind == "SOFTMAX":
        return w.one("SoftMax", V8, [s], {"axis": -1}, dtype=s.dtype)
    if kind == "SOFTMAX_ZERO":
        return softmax_zero(w, s)
    raise refuse(node, f"post_transform {kind}")


def softmax_zero(w: NetWriter, s: Out) -> Out:
    """Softmax over the row's nonzero scores (``|v| > 1e-7``); a zero stays ``0 * e^-max``
    and counts nothing in the sum (ONNX Runtime's ComputeSoftmaxZero)."""
    axis = w.i64([-1])
    top = w.one("ReduceMax", V1, [s, axis], {"keep_dims": True}, dtype=s.dtype)
    mag = w.one("Abs", V1, [s], dtype=s.dtype)
    nonzero = binary(w, "Greater", mag, fconst(w, 1e-7), dtype=BOOL)
    e = w.one("Exp", V1, [binary(w, "Subtract", s, top)], dtype=s.dtype)
    tiny = binary(w, "Multiply", s, w.one("Exp", V1, [w.one("Negative", V1, [top],
                                                            dtype=s.dtype)], dtype=s.dtype))
    e = w.one("Select", V1, [nonzero, e, tiny], dict(_NB), dtype=s.dtype)
    counted = w.one("Select", V1, [nonzero, e, fconst(w, 0.0)], dict(_NB), dtype=s.dtype)
    total = w.one("ReduceSum", V1, [counted, axis], {"keep_dims": True}, dtype=s.dtype)
    return binary(w, "Divide", e, total)


def first_max(w: NetWriter, s: Out) -> Out:
    """The index of the first highest score of each row, ``[N]`` int64, a NaN score never
    winning but as the row's first (ONNX Runtime's ``std::max_element``)."""
    clean, nan = nan_free(w, s, "max")
    outs = w.layer("TopK", "opset11", [clean, w.i64(1)],
                   {"axis": -1, "mode": "max", "sort": "value", "index_element_type": "i64",
                    "stable": True}, [(s.dtype, None), (I64, None)])
    idx = outs[1] if nan is None else first_nan_gives_zero(w, nan, -1, outs[1])
    return w.one("Squeeze", V1, [idx, w.i64([-1])], dtype=I64)


def pick(w: NetWriter, table: np.ndarray, idx: Out) -> Out:
    """``table[idx]``: the labels of the class positions `idx`."""
    t = w.const(table, DataType.STRING if table.dtype == object else None)
    return w.one("Gather", V8, [t, idx, w.i64(0)], {"batch_dims": 0}, dtype=t.dtype)


def binary_label(w: NetWriter, labels: np.ndarray, score: Out, threshold: float) -> Out:
    """``labels[1]`` where the ``[N, 1]`` score exceeds `threshold`, else ``labels[0]``:
    ``[N]``."""
    above = binary(w, "Greater", score, fconst(w, threshold), dtype=BOOL)
    above = w.one("Squeeze", V1, [above, w.i64([1])], dtype=BOOL)
    return pick(w, labels[:2], w.one("Convert", V1, [above], {"destination_type": "i64"},
                                     dtype=I64))


def two_columns(w: NetWriter, a: Out, b: Out) -> Out:
    """``[N, 2]`` from two ``[N, 1]`` columns."""
    return w.one("Concat", V1, [a, b], {"axis": 1}, dtype=a.dtype)


def from_one(w: NetWriter, c: float, s: Out) -> Out:
    return binary(w, "Subtract", fconst(w, c), s)


@exporter("LinearClassifier", since=1, domain=ML)
def _linear_classifier(w: NetWriter, node: Node, ins):
    labels = class_labels(node, "classlabels_ints", "classlabels_strings")
    coef = floats(node, "coefficients")
    intercepts = floats(node, "intercepts")
    targets = intercepts.size if intercepts is not None and intercepts.size else len(labels)
    if coef is not None and targets and coef.size % targets:
        targets = 1
    s = linear_scores(w, node, ins[0], targets)
    if targets == 1 and len(labels) == 2:
        label = binary_label(w, labels, s, 0.0)
        p = sigmoid(w, s) if text(node, "post_transform", "NONE") == "LOGISTIC" else s
        return label, two_columns(w, from_one(w, 1.0, p), p)
    if targets != len(labels):
        raise refuse(node, f"{targets} score columns for {len(labels)} class labels")
    return pick(w, labels, first_max(w, s)), post_transform(w, node, s)



@exporter("ZipMap", since=1, domain=ML)
def _zipmap(w: NetWriter, node: Node, ins):
    raise refuse(node, "ZipMap: its output, a sequence of maps, has no OpenVINO IR form; "
                 "the scores before it are the [N, classes] matrix (skl2onnx writes that "
                 "with options={'zipmap': False})")


# -- support vector machines -----------------------------------------------------------------
def kernel(w: NetWriter, node: Node, x: Out, vectors: np.ndarray) -> Out:
    """``K(x, vectors)``, ``[N, n_vectors]``, for ``kernel_type`` LINEAR, POLY, RBF or SIGMOID
    (``kernel_params``: gamma, coef0, degree). RBF sums the squared differences themselves,
    as ONNX Runtime does, rather than expanding the square."""
    kind = text(node, "kernel_type", "LINEAR").upper()
    params = list(node.attrs.get("kernel_params") or [0.0, 0.0, 0.0])
    gamma, coef0, degree = float(params[0]), float(params[1]), float(params[2])
    sv = fconst(w, vectors, x.dtype)
    if kind == "RBF":
        diff = binary(w, "Subtract", w.one("Unsqueeze", V1, [x, w.i64([1])], dtype=x.dtype),
                      w.one("Unsqueeze", V1, [sv, w.i64([0])], dtype=x.dtype))
        d2 = reduce_layer(w, "ReduceSum", V1, binary(w, "Multiply", diff, diff), w.i64([2]),
                          False, x.dtype)
        return w.one("Exp", V1, [binary(w, "Multiply", d2, fconst(w, -gamma, x.dtype))],
                     dtype=x.dtype)
    dot = w.one("MatMul", V1, [x, sv], {"transpose_a": False, "transpose_b": True},
                dtype=x.dtype)
    if kind == "LINEAR":
        return dot
    dot = binary(w, "Add", binary(w, "Multiply", dot, fconst(w, gamma, x.dtype)),
                 fconst(w, coef0, x.dtype))
    if kind == "POLY":
        return binary(w, "Power", dot, fconst(w, degree, x.dtype))
    if kind == "SIGMOID":
        return w.one("Tanh", V1, [dot], dtype=x.dtype)
    raise refuse(node, f"kernel_type {kind}")


@exporter("SVMRegressor", since=1, domain=ML)
def _svm_regressor(w: NetWriter, node: Node, ins):
    if text(node, "post_transform", "NONE") != "NONE":
        raise refuse(node, f"post_transform {text(node, 'post_transform')}")
    x = as_float(w, rows(w, ins[0]), float_type(ins[0]))
    coef = floats(node, "coefficients")
    rho = floats(node, "rho")
    n = int(node.attrs.get("n_supports", 0))
    if coef is None:
        raise refuse(node, "an SVMRegressor without coefficients")
    if n > 0:
        sv = floats(node, "support_vectors").reshape(n, -1)
        s = w.one("MatMul", V1, [kernel(w, node, x, sv), fconst(w, coef.reshape(-1, 1),
                                                               x.dtype)],
                  {"transpose_a": False, "transpose_b": False}, dtype=x.dtype)
    else:  # a linear machine: the coefficients are the weights
        s = w.one("MatMul", V1, [x, fconst(w, coef.reshape(-1, 1), x.dtype)],
                  {"transpose_a": False, "transpose_b": False}, dtype=x.dtype)
    if rho is not None and rho.size:
        s = binary(w, "Add", s, fconst(w, rho[:1], x.dtype))
    if node.attrs.get("one_class", 0):
        above = binary(w, "Greater", s, fconst(w, 0.0, x.dtype), dtype=BOOL)
        s = w.one("Select", V1, [above, fconst(w, 1.0, x.dtype), fconst(w, -1.0, x.dtype)],
                  dict(_NB), dtype=x.dtype)
    return as_float(w, s, F32)
