"""``SVMClassifier``'s probability estimates as standard ONNX nodes: the pairwise coupling of
Wu, Lin and Weng (libsvm's ``multiclass_probability``) as ONNX Runtime runs it, for writers
that have no SVM op (the OpenVINO IR writer, `export_svm`).

For each row, with ``k`` classes and the pair scores ``s`` (pairs ``i < j``, i-major):

- ``r[i, j] = clip(1 - sigmoid(s_ij * prob_a + prob_b), 1e-7, 1 - 1e-7)``, ``r[j, i] =
  1 - r[i, j]``, ``r[i, i] = 0``;
- ``Q[i, i] = sum_j r[j, i]^2``, ``Q[i, j] = -r[j, i] * r[i, j]``; ``p = 1/k``;
- up to 100 times: ``Qp = Q p``, ``pQp = p . Qp``; stop once ``max |Qp - pQp| < 0.005 / k``;
  else for ``t = 0 .. k-1`` in turn: ``d = (pQp - Qp[t]) / Q[t, t]``, ``p[t] += d``,
  ``pQp = (pQp + d (d Q[t, t] + 2 Qp[t])) / (1 + d)^2``, ``Qp = (Qp + d Q[t]) / (1 + d)``,
  ``p /= 1 + d``.

All rows run in one ``Loop`` (trip count 100); a row that has stopped keeps its ``p`` and the
loop ends when every row has stopped.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ...ir.graph import Graph

F = TensorProto.FLOAT


class _Nodes:
    def __init__(self, prefix: str):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.prefix = prefix
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def const(self, value, dtype=np.float32) -> str:
        name = self.fresh()
        self.nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
            np.asarray(value, dtype), name)))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs) -> str:
        name = self.fresh()
        self.nodes.append(helper.make_node(op_type, inputs, [name], **attrs))
        return name


def _pair_matrices(k: int) -> tuple[np.ndarray, np.ndarray]:
    """``[pairs, k*k]``: where a pair's probability goes in ``r`` (``i*k + j``), and where its
    complement goes (``j*k + i``)."""
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    up = np.zeros((len(pairs), k * k), np.float32)
    down = np.zeros_like(up)
    for p, (i, j) in enumerate(pairs):
        up[p, i * k + j] = 1.0
        down[p, j * k + i] = 1.0
    return up, down


def _q_matrix(b: _Nodes, s: str, k: int, prob_a, prob_b) -> str:
    """``Q [N, k, k]`` from the pair scores `s` ``[N, pairs]``."""
    val = b.op("Add", [b.op("Mul", [s, b.const(prob_a)]), b.const(prob_b)])
    r1 = b.op("Sub", [b.const(1.0), b.op("Sigmoid", [val])])
    r1 = b.op("Clip", [r1, b.const(1e-7), b.const(1 - 1e-7)])
    up, down = _pair_matrices(k)
    r = b.op("Add", [b.op("MatMul", [r1, b.const(up)]),
                     b.op("MatMul", [b.op("Sub", [b.const(1.0), r1]), b.const(down)])])
    r = b.op("Reshape", [r, b.const([-1, k, k], np.int64)])
    rt = b.op("Transpose", [r], perm=[0, 2, 1])
    col = b.op("ReduceSum", [b.op("Mul", [r, r]), b.const([1], np.int64)], keepdims=0)
    diag = b.op("Mul", [b.op("Unsqueeze", [col, b.const([-1], np.int64)]),
                        b.const(np.eye(k))])
    return b.op("Sub", [diag, b.op("Mul", [rt, r])])


def _sweep(b: _Nodes, q: str, p: str, qp: str, pqp: str, k: int) -> str:
    """One pass of the updates over t = 0 .. k-1; returns the new ``p``."""
    one = b.const(1.0)
    for t in range(k):
        at = b.const([t], np.int64)
        qp_t = b.op("Gather", [qp, at], axis=1)  # [N, 1]
        q_row = b.op("Gather", [q, at], axis=1)  # [N, 1, k]
        q_row = b.op("Squeeze", [q_row, b.const([1], np.int64)])  # [N, k]
        q_tt = b.op("Gather", [q_row, at], axis=1)  # [N, 1]
        d = b.op("Div", [b.op("Sub", [pqp, qp_t]), q_tt])
        p = b.op("Add", [p, b.op("Mul", [d, b.const(np.eye(k)[t])])])
        grown = b.op("Add", [one, d])
        pqp = b.op("Add", [pqp, b.op("Mul", [d, b.op("Add", [
            b.op("Mul", [d, q_tt]), b.op("Mul", [b.const(2.0), qp_t])])])])
        pqp = b.op("Div", [b.op("Div", [pqp, grown]), grown])
        qp = b.op("Div", [b.op("Add", [qp, b.op("Mul", [d, q_row])]), grown])
        p = b.op("Div", [p, grown])
    return p


def _body(k: int, q: str) -> onnx.GraphProto:
    b = _Nodes("b")
    p, done = "p_in", "done_in"
    qp = b.op("Squeeze", [b.op("MatMul", [q, b.op("Unsqueeze", [p, b.const([-1], np.int64)])]),
                          b.const([-1], np.int64)])  # [N, k]
    pqp = b.op("ReduceSum", [b.op("Mul", [p, qp]), b.const([1], np.int64)], keepdims=1)
    err = b.op("ReduceMax", [b.op("Abs", [b.op("Sub", [qp, pqp])]), b.const([1], np.int64)],
               keepdims=0)
    stop = b.op("Or", [done, b.op("Less", [err, b.const(0.005 / k)])])
    moved = _sweep(b, q, p, qp, pqp, k)
    b.nodes.append(helper.make_node(
        "Where", [b.op("Unsqueeze", [stop, b.const([-1], np.int64)]), p, moved], ["p_out"]))
    b.nodes.append(helper.make_node("Identity", [stop], ["done_out"]))
    all_stopped = b.op("ReduceMin", [b.op("Cast", [stop], to=TensorProto.INT32)], keepdims=0)
    b.nodes.append(helper.make_node("Equal", [all_stopped, b.const(0, np.int32)], ["cond_out"]))
    return helper.make_graph(
        b.nodes, "coupling_step",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("p_in", F, [None, k]),
         helper.make_tensor_value_info("done_in", TensorProto.BOOL, [None])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("p_out", F, [None, k]),
         helper.make_tensor_value_info("done_out", TensorProto.BOOL, [None])])


def coupling_model(k: int, prob_a: np.ndarray, prob_b: np.ndarray) -> onnx.ModelProto:
    """The model ``s [N, pairs] -> p [N, k]``."""
    b = _Nodes("t")
    q = _q_matrix(b, "s", k, np.asarray(prob_a, np.float32), np.asarray(prob_b, np.float32))
    rows = b.op("Slice", [b.op("Shape", ["s"]), b.const([0], np.int64), b.const([1], np.int64)])
    p0 = b.op("Expand", [b.const(np.full(k, 1.0 / k)),
                         b.op("Concat", [rows, b.const([k], np.int64)], axis=0)])
    done0 = b.op("Expand", [b.const(False, np.bool_), rows])
    b.nodes.append(helper.make_node("Loop", [b.const(100, np.int64), b.const(True, np.bool_),
                                             p0, done0], ["p", b.fresh()], body=_body(k, q)))
    g = helper.make_graph(b.nodes, "svm_coupling",
                          [helper.make_tensor_value_info("s", F, [None, k * (k - 1) // 2])],
                          [helper.make_tensor_value_info("p", F, [None, k])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)


def coupling_graph(k: int, prob_a: np.ndarray, prob_b: np.ndarray) -> Graph:
    """`coupling_model` as an IR graph."""
    from .reader import read  # the reader imports this module's siblings

    return read(coupling_model(k, prob_a, prob_b))
