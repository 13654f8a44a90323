"""``ai.onnx.ml`` ``SVMClassifier`` -> standard OpenVINO layers, computing what ONNX Runtime
computes (its kernel is the oracle: the ONNX-ML text leaves the score layout open). The
features are cast to float32 first, as ONNX Runtime does.

- One-vs-one machines (``vectors_per_class`` given): the kernel of the features and the
  support vectors ``K [N, V]`` (`write.kernel`); each class pair ``i < j`` scores
  ``K @ w_ij + rho_ij``, where ``w_ij`` takes class i's vectors' coefficients from row
  ``j - 1`` and class j's from row ``i``: one ``MatMul`` by a ``[V, pairs]`` matrix built
  here. A positive score votes for i, any other for j; the label is the first class with
  the most votes. The scores output is the pair scores post-transformed over the row (three
  classes or more); with two classes it is ``[-s, s]`` (``post_transform`` NONE),
  ``[1 - p, p]`` with ``p = sigmoid(s)`` (LOGISTIC) or ``[1 - s, s]`` (SOFTMAX,
  SOFTMAX_ZERO: untransformed, as ONNX Runtime 1.32 writes it).
- Linear machines (no support vectors): ``x @ coefficients^T + rho[0]``, post-transformed; the
  label is the first highest score's, except with two classes and no ``prob_a``: the second
  label where the highest score is >= 0.5 (all coefficients >= 0) or > 0 (some negative).

With probability estimates (``prob_a``/``prob_b``, one-vs-one machines) the scores output
is the class probabilities of the pairwise coupling (`onnx.svm_coupling`, a ``Loop``),
post-transformed; the label still follows the votes (ONNX Runtime).

Refused, naming the node: ``PROBIT``, attribute lists of inconsistent sizes.
"""

from __future__ import annotations

import numpy as np

from .....ir.graph import Node
from .....ir.types import DataType
from ....onnx.svm_coupling import coupling_graph
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from .write import (
    _NB,
    ML,
    V1,
    as_float,
    binary,
    class_labels,
    fconst,
    first_max,
    floats,
    kernel,
    pick,
    post_transform,
    refuse,
    rows,
    text,
    two_columns,
)

F32, BOOL = DataType.FLOAT32, DataType.BOOL


def _matmul(w: NetWriter, a: Out, b: Out) -> Out:
    return w.one("MatMul", V1, [a, b], {"transpose_a": False, "transpose_b": False}, dtype=F32)


def pair_weights(coef: np.ndarray, counts: list[int]) -> np.ndarray:
    """The ``[V, pairs]`` matrix whose column ``(i, j)`` (``i < j``, i-major) weighs the kernel
    values into that pair's score; `coef` is ``[classes - 1, V]``."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
    c = len(counts)
    out = np.zeros((coef.shape[1], c * (c - 1) // 2), np.float32)
    p = 0
    for i in range(c):
        for j in range(i + 1, c):
            si, sj = starts[i], starts[j]
            out[si:si + counts[i], p] = coef[j - 1, si:si + counts[i]]
            out[sj:sj + counts[j], p] = coef[i, sj:sj + counts[j]]
            p += 1
    return out


def _vote_matrices(c: int) -> tuple[np.ndarray, np.ndarray]:
    """``[pairs, classes]``: the class a pair's positive score votes for, and a negative."""
    pos = np.zeros((c * (c - 1) // 2, c), np.float32)
    neg = np.zeros_like(pos)
    p = 0
    for i in range(c):
        for j in range(i + 1, c):
            pos[p, i] = neg[p, j] = 1.0
            p += 1
    return pos, neg


def _one_vs_one(w: NetWriter, node: Node, x: Out, labels: np.ndarray, counts: list[int]):
    c, v = len(labels), sum(counts)
    coef, rho, sv = floats(node, "coefficients"), floats(node, "rho"), \
        floats(node, "support_vectors")
    pairs = c * (c - 1) // 2
    if len(counts) != c or coef is None or coef.size < (c - 1) * v or rho is None or \
            rho.size < pairs or sv is None or v == 0 or sv.size % v:
        raise refuse(node, f"an SVMClassifier whose {len(counts)} vectors_per_class, "
                     f"coefficients, rho and support vectors do not fit {c} classes")
    k = kernel(w, node, x, sv.reshape(v, -1).astype(np.float32))
    s = _matmul(w, k, fconst(w, pair_weights(coef[:(c - 1) * v].reshape(c - 1, v), counts)))
    s = binary(w, "Add", s, fconst(w, rho[:pairs]))
    up = binary(w, "Greater", s, fconst(w, 0.0), dtype=BOOL)
    up = w.one("Convert", V1, [up], {"destination_type": "f32"}, dtype=F32)
    down = binary(w, "Subtract", fconst(w, 1.0), up)
    pos, neg = _vote_matrices(c)
    votes = binary(w, "Add", _matmul(w, up, fconst(w, pos)), _matmul(w, down, fconst(w, neg)))
    label = pick(w, labels, first_max(w, votes))
    prob_a, prob_b = floats(node, "prob_a"), floats(node, "prob_b")
    if prob_a is not None and prob_a.size:
        if prob_b is None or prob_a.size < pairs or prob_b.size < pairs:
            raise refuse(node, f"an SVMClassifier with {prob_a.size} prob_a and "
                         f"{0 if prob_b is None else prob_b.size} prob_b for {pairs} pairs")
        return label, post_transform(w, node, _coupled(w, s, c, prob_a[:pairs],
                                                       prob_b[:pairs]))
    if c > 2:
        return label, post_transform(w, node, s)
    kind = text(node, "post_transform", "NONE")
    if kind == "NONE":
        return label, two_columns(w, w.one("Negative", V1, [s], dtype=F32), s)
    if kind == "LOGISTIC":
        s = w.one("Sigmoid", V1, [s], dtype=F32)
    return label, two_columns(w, binary(w, "Subtract", fconst(w, 1.0), s), s)


def _coupled(w: NetWriter, s: Out, c: int, prob_a: np.ndarray, prob_b: np.ndarray) -> Out:
    """The class probabilities ``[N, c]`` from the pair scores `s` (`onnx.svm_coupling`, an
    ONNX Loop written by this writer's own translators)."""
    body = coupling_graph(c, prob_a, prob_b)
    w.env[body.inputs[0].uid] = s
    w.write_nodes(body)
    return w.get(body.outputs[0])


def _linear(w: NetWriter, node: Node, x: Out, labels: np.ndarray, proba: bool):
    c = len(labels)
    coef, rho = floats(node, "coefficients"), floats(node, "rho")
    if coef is None or coef.size % c or rho is None or rho.size < 1:
        raise refuse(node, f"a linear SVMClassifier with {0 if coef is None else coef.size} "
                     f"coefficients for {c} classes")
    s = w.one("MatMul", V1, [x, fconst(w, coef.reshape(c, -1))],
              {"transpose_a": False, "transpose_b": True}, dtype=F32)
    s = binary(w, "Add", s, fconst(w, rho[:1]))
    top = first_max(w, s)
    if c == 2 and not proba:
        best = w.one("ReduceMax", V1, [s, w.i64([1])], {"keep_dims": False}, dtype=F32)
        threshold, op = (0.5, "GreaterEqual") if (coef >= 0).all() else (0.0, "Greater")
        second = binary(w, op, best, fconst(w, threshold), dtype=BOOL)
        one = w.const(np.ones((), np.int64))
        top = w.one("Select", V1, [second, one, top], dict(_NB), dtype=DataType.INT64)
    return pick(w, labels, top), post_transform(w, node, s)


@exporter("SVMClassifier", since=1, domain=ML)
def _svm_classifier(w: NetWriter, node: Node, ins):
    labels = class_labels(node, "classlabels_ints", "classlabels_strings")
    prob_a = floats(node, "prob_a")
    counts = [int(n) for n in node.attrs.get("vectors_per_class") or []]
    if text(node, "post_transform", "NONE") == "PROBIT":
        raise refuse(node, "post_transform PROBIT")
    if len(labels) < 2:
        raise refuse(node, f"an SVMClassifier with {len(labels)} class label(s)")
    x = as_float(w, rows(w, ins[0]), F32)
    if sum(counts) > 0:
        return _one_vs_one(w, node, x, labels, counts)
    return _linear(w, node, x, labels, prob_a is not None and prob_a.size > 0)
