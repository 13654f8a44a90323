"""``ai.onnx.ml`` tree ensembles -> OpenVINO layers: every tree walked at once.

The nodes of all trees become tables indexed by their position in the attribute lists
(`Tables`): feature, threshold, comparison, the positions of the true and false children
(a leaf points to itself) and whether a missing value (NaN) goes to the true child. The walk
starts at each tree's root (``idx``: ``[N, trees]``) and takes as many steps as the deepest
tree has levels, each step ``Gather`` of the tables at ``idx``, ``GatherElements`` of the
features, the comparison, and ``Select`` of the child. The leaves' weights (``[nodes,
targets]``) are then gathered and summed over the trees.

- ``TreeEnsembleRegressor``: ``SUM`` or ``AVERAGE`` (divided by the number of trees), plus
  ``base_values``; ``MIN``/``MAX`` and post-transforms are refused.
- ``TreeEnsembleClassifier``: scores are the sums plus ``base_values``; with three or more
  classes they are post-transformed and the label is the first highest raw score among the
  classes some reached leaf scores (every class where ``base_values`` are given). With two
  labels and weights for the first class only (gradient boosting, random forests as
  skl2onnx writes them), ONNX Runtime's binary form: score ``s``, with non-negative weights
  ``[1 - s, s]`` and label ``s > 0.5``, else ``[-s, s]`` and label ``s > 0``; LOGISTIC
  gives ``[1 - sigmoid(s), sigmoid(s)]`` in both. Other two-class layouts ONNX Runtime
  computes inconsistently (labels outside the class list): refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .....errors import ModelError, where
from .....ir.graph import Node
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from .write import (
    BOOL,
    F32,
    I64,
    ML,
    V1,
    V3,
    V8,
    as_float,
    binary,
    binary_label,
    class_labels,
    fconst,
    first_max,
    float_type,
    floats,
    from_one,
    pick,
    post_transform,
    refuse,
    rows,
    sigmoid,
    text,
    two_columns,
)

_COMPARE = {"BRANCH_LEQ": "LessEqual", "BRANCH_LT": "Less", "BRANCH_GTE": "GreaterEqual",
            "BRANCH_GT": "Greater", "BRANCH_EQ": "Equal", "BRANCH_NEQ": "NotEqual"}


@dataclass
class Tables:
    """The node tables of one ensemble (one row per entry of ``nodes_*``)."""

    roots: np.ndarray  # [trees] position of each tree's root
    feature: np.ndarray
    threshold: np.ndarray
    mode: list[str]
    true: np.ndarray
    false: np.ndarray
    missing: np.ndarray  # bool: NaN goes to the true child
    depth: int  # levels below the deepest root
    weights: np.ndarray  # [nodes, targets] summed leaf weights
    scored: np.ndarray  # [nodes, targets] bool: the leaf carries a weight for the target


def tables(node: Node, prefix: str, targets: int) -> Tables:
    """Read the ``nodes_*`` and ``{prefix}_*`` (``target``/``class``) attributes."""
    a = node.attrs
    _check_lists(node, ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids",
                        "nodes_values", "nodes_truenodeids", "nodes_falsenodeids"))
    _check_lists(node, tuple(f"{prefix}_{k}" for k in ("treeids", "nodeids", "ids",
                                                        "weights")))
    tids = [int(t) for t in a["nodes_treeids"]]
    nids = [int(n) for n in a["nodes_nodeids"]]
    pos = {(t, n): i for i, (t, n) in enumerate(zip(tids, nids))}
    mode = [m.decode() if isinstance(m, bytes) else str(m) for m in a["nodes_modes"]]
    unknown = sorted({m for m in mode if m != "LEAF" and m not in _COMPARE})
    if unknown:
        raise refuse(node, f"node mode {unknown[0]}")
    n = len(tids)
    true, false = np.arange(n), np.arange(n)
    for i, m in enumerate(mode):
        if m != "LEAF":
            true[i] = _child(node, pos, tids[i], a["nodes_truenodeids"][i])
            false[i] = _child(node, pos, tids[i], a["nodes_falsenodeids"][i])
    missing = np.asarray(a.get("nodes_missing_value_tracks_true") or [0] * n, bool)
    roots = {}
    for i, t in enumerate(tids):
        roots.setdefault(t, i)
    weights, scored = np.zeros((n, targets)), np.zeros((n, targets), bool)
    w_all = floats(node, f"{prefix}_weights")
    for t, nid, k, wk in zip(a[f"{prefix}_treeids"], a[f"{prefix}_nodeids"],
                             a[f"{prefix}_ids"], w_all):
        i = _child(node, pos, int(t), nid)
        if not 0 <= int(k) < targets:
            raise refuse(node, f"{prefix} id {k} for {targets} targets")
        weights[i, int(k)] += wk
        scored[i, int(k)] = True
    thr = floats(node, "nodes_values")  # (given as a list or a tensor)
    return Tables(np.array([roots[t] for t in sorted(roots)], np.int64),
                  np.asarray(a["nodes_featureids"], np.int64), thr, mode, true, false,
                  missing, _depth(node, list(roots.values()), true, false), weights, scored)


def _check_lists(node: Node, names: tuple[str, ...]) -> None:
    """The parallel attribute lists `names` are all given, of one length."""
    lengths = {}
    for k in names:
        v = node.attrs.get(k, node.attrs.get(k + "_as_tensor"))
        if v is None:
            raise ModelError(f"{where(node)}: attribute {k} is missing")
        lengths[k] = len(np.asarray(v).reshape(-1))
    if len(set(lengths.values())) > 1:
        raise ModelError(f"{where(node)}: attributes {', '.join(names)} differ in length "
                         f"({', '.join(str(n) for n in lengths.values())})")


def _child(node: Node, pos: dict, tree: int, nid) -> int:
    i = pos.get((tree, int(nid)))
    if i is None:
        raise refuse(node, f"a reference to node {nid} that tree {tree} does not have")
    return i


def _depth(node: Node, roots: list[int], true: np.ndarray, false: np.ndarray) -> int:
    """Steps from the roots to the deepest leaf (more steps than nodes: a cycle, refused)."""
    level, steps = set(roots), 0
    while True:
        level = {int(c) for i in level for c in (true[i], false[i]) if c != i}
        if not level:
            return steps
        steps += 1
        if steps > len(true):
            raise refuse(node, "trees whose nodes form a cycle")


def walk(w: NetWriter, node: Node, x: Out, t: Tables) -> Out:
    """The position of the leaf each row reaches in each tree, ``[N, trees]`` int64."""
    dt = x.dtype
    n = w.one("Gather", V8, [w.one("ShapeOf", V3, [x], {"output_type": "i64"}, dtype=I64),
                             w.i64([0]), w.i64(0)], {"batch_dims": 0}, dtype=I64)
    shape = w.one("Concat", V1, [n, w.i64([len(t.roots)])], {"axis": 0}, dtype=I64)
    idx = w.one("Broadcast", V3, [w.const(t.roots), shape], {"mode": "numpy"}, dtype=I64)
    table = {k: w.const(v) for k, v in (("feature", t.feature), ("true", t.true),
                                         ("false", t.false))}
    table["threshold"] = fconst(w, t.threshold, dt)
    for _ in range(t.depth):
        at = {k: w.one("Gather", V8, [v, idx, w.i64(0)], {"batch_dims": 0}, dtype=v.dtype)
              for k, v in table.items()}
        value = w.one("GatherElements", "opset6", [x, at["feature"]], {"axis": 1}, dtype=dt)
        go = _compare(w, node, t, value, at["threshold"], idx)
        idx = w.one("Select", V1, [go, at["true"], at["false"]], {"auto_broadcast": "numpy"},
                    dtype=I64)
    return idx


def _compare(w: NetWriter, node: Node, t: Tables, value: Out, threshold: Out,
             idx: Out) -> Out:
    """Whether each row goes to the true child: the node's comparison, or-ed with
    ``missing & isnan`` where any node sends missing values to its true child."""
    modes = sorted({m for m in t.mode if m != "LEAF"}) or ["BRANCH_LEQ"]
    go = None
    for k, m in enumerate(modes):
        hit = binary(w, _COMPARE[m], value, threshold, dtype=BOOL)
        if go is not None:
            code = np.array([modes.index(x) if x in modes else 0 for x in t.mode], np.int64)
            mine = binary(w, "Equal", _gather(w, w.const(code), idx), w.i64(k), dtype=BOOL)
            hit = w.one("Select", V1, [mine, hit, go], {"auto_broadcast": "numpy"}, dtype=BOOL)
        go = hit
    if t.missing.any():
        nan = w.one("IsNaN", "opset10", [value], dtype=BOOL)
        tracks = _gather(w, w.const(t.missing), idx)
        go = binary(w, "LogicalOr", go, binary(w, "LogicalAnd", tracks, nan), dtype=BOOL)
    return go


def _gather(w: NetWriter, table: Out, idx: Out) -> Out:
    return w.one("Gather", V8, [table, idx, w.i64(0)], {"batch_dims": 0}, dtype=table.dtype)


def leaf_sum(w: NetWriter, table: np.ndarray, leaves: Out, dtype) -> Out:
    """``table[leaves]`` summed over the trees: ``[N, targets]``."""
    got = _gather(w, w.const(table.astype(dtype)), leaves)
    return w.one("ReduceSum", V1, [got, w.i64([1])], {"keep_dims": False},
                 dtype=got.dtype)


def features(w: NetWriter, x: Out) -> Out:
    """`x` as ``[N, F]`` float (integer features are compared as float32)."""
    return as_float(w, rows(w, x), float_type(x))


@exporter("TreeEnsembleRegressor", since=1, domain=ML)
def _tree_regressor(w: NetWriter, node: Node, ins):
    agg = text(node, "aggregate_function", "SUM")
    if agg not in ("SUM", "AVERAGE"):
        raise refuse(node, f"aggregate_function {agg}")
    if text(node, "post_transform", "NONE") != "NONE":
        raise refuse(node, f"post_transform {text(node, 'post_transform')}")
    t = tables(node, "target", int(node.attrs.get("n_targets", 1)))
    y = leaf_sum(w, t.weights, walk(w, node, features(w, ins[0]), t), np.float32)
    if agg == "AVERAGE":
        y = binary(w, "Divide", y, fconst(w, len(t.roots)))
    base = floats(node, "base_values")
    if base is not None and base.size:
        y = binary(w, "Add", y, fconst(w, base))
    return y


@exporter("TreeEnsembleClassifier", since=1, domain=ML)
def _tree_classifier(w: NetWriter, node: Node, ins):
    labels = class_labels(node, "classlabels_int64s", "classlabels_strings")
    ids = {int(k) for k in node.attrs.get("class_ids", [])}
    base = floats(node, "base_values")
    base = base if base is not None and base.size else None
    if len(labels) == 2 and ids == {0} and (base is None or base.size == 1):
        return _binary_trees(w, node, ins[0], labels, base)
    if len(labels) < 3:
        raise refuse(node, f"{len(labels)} class labels with weights for classes "
                     f"{sorted(ids)} (ONNX Runtime labels such rows outside the class list)")
    if base is not None and base.size != len(labels):
        raise refuse(node, f"{base.size} base_values for {len(labels)} classes")
    t = tables(node, "class", len(labels))
    leaves = walk(w, node, features(w, ins[0]), t)
    s = leaf_sum(w, t.weights, leaves, np.float32)
    if base is not None:
        s = binary(w, "Add", s, fconst(w, base))
    raw = s
    if base is None and not t.scored[t.true == np.arange(len(t.true))].all():
        # a class no reached leaf scores is no candidate for the label (ONNX Runtime)
        hit = leaf_sum(w, t.scored, leaves, np.float32)
        some = binary(w, "Greater", hit, fconst(w, 0.0), dtype=BOOL)
        raw = w.one("Select", V1, [some, s, fconst(w, -np.inf)], {"auto_broadcast": "numpy"},
                    dtype=F32)
    return pick(w, labels, first_max(w, raw)), post_transform(w, node, s)


def _binary_trees(w: NetWriter, node: Node, x: Out, labels: np.ndarray, base) -> list[Out]:
    t = tables(node, "class", 1)
    s = leaf_sum(w, t.weights, walk(w, node, features(w, x), t), np.float32)
    if base is not None:
        s = binary(w, "Add", s, fconst(w, base))
    kind = text(node, "post_transform", "NONE")
    if kind not in ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"):
        raise refuse(node, f"post_transform {kind}")
    positive = bool((floats(node, "class_weights") >= 0).all())
    label = binary_label(w, labels, s, 0.5 if positive else 0.0)
    if kind == "LOGISTIC":
        p = sigmoid(w, s)
        return [label, two_columns(w, from_one(w, 1.0, p), p)]
    other = from_one(w, 1.0, s) if positive else w.one("Negative", V1, [s], dtype=F32)
    return [label, two_columns(w, other, s)]
