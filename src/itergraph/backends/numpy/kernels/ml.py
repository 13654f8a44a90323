"""``ai.onnx.ml`` kernels that ``onnx.reference`` lacks or computes otherwise than ONNX Runtime
(the rest of the domain runs there).

``LabelEncoder``: the table of `semantics.label_encoder` (``onnx.reference`` ignores
``default_tensor``).

``ZipMap`` turns a ``[N, C]`` float tensor of class scores into one map per row, label ->
score (what scikit-learn classifiers converted by skl2onnx output by default)::

    [{labels[c]: float(x[n, c]) for c in range(C)} for n in range(N)]

A map is a Python ``dict``; its keys are ``int`` (``classlabels_int64s``) or ``str``
(``classlabels_strings``), its values ``float``, as ONNX Runtime returns them.

``LinearRegressor`` runs in ``onnx.reference``, given a zero intercept where the node has none
(it would make its scores NaN; ONNX Runtime takes zeros); a ``LinearClassifier`` without
``intercepts`` is refused, as in ONNX Runtime. ``LinearClassifier`` runs in
``onnx.reference``, which labels a row by ``np.argmax`` of its post-transformed scores; ONNX
Runtime labels it by the first highest *raw* score, a NaN never winning but as the first
(`backends.common.nan_arg`). The two differ only where a score is
infinite or NaN (a softmax of ``inf`` is NaN): such rows are labelled as ONNX Runtime does.
"""

from __future__ import annotations

import copy

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ....semantics.label_encoder import encode, encoder_table
from ...common.nan_arg import nan_arg
from . import default_factory, kernel


@kernel("ZipMap", domain="ai.onnx.ml")
def _zipmap(node, ctx):
    ints, strings = node.attrs.get("classlabels_int64s"), node.attrs.get("classlabels_strings")
    if (ints is None) == (strings is None):
        raise ModelError(f"{where(node)}: exactly one of classlabels_int64s and "
                         "classlabels_strings must be given")
    labels = [int(v) for v in ints] if ints is not None else \
        [v.decode() if isinstance(v, bytes) else str(v) for v in strings]

    def run(x):
        x = np.asarray(x)
        if x.ndim == 1:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != len(labels):
            raise ExecutionError(f"{where(node)}: input of shape {list(x.shape)} does not "
                                 f"match the {len(labels)} class labels")
        return [dict(zip(labels, row.tolist())) for row in x.astype(np.float32)]

    return run


@kernel("LabelEncoder", domain="ai.onnx.ml")
def _label_encoder(node, ctx):
    def run(x):
        x = np.asarray(x)
        table = encoder_table(node.attrs, node.version, x.dtype.kind in "OUS", where(node))
        return encode(x, *table)

    return run


def _with_intercepts(node):
    """`node`, or a copy of it with a zero intercept (added to every score) where it has no
    ``intercepts``: ``onnx.reference`` makes absent ones NaN (``np.array(None)``), ONNX
    Runtime takes them as zeros."""
    if node.attrs.get("intercepts") is not None:
        return node
    node = copy.copy(node)
    node.attrs = {**node.attrs, "intercepts": [0.0]}
    return node


@kernel("LinearRegressor", domain="ai.onnx.ml")
def _linear_regressor(node, ctx):
    return default_factory("ai.onnx.ml")(_with_intercepts(node), ctx)


@kernel("LinearClassifier", domain="ai.onnx.ml")
def _linear_classifier(node, ctx):
    if not node.attrs.get("intercepts"):  # onnx.reference would make every score NaN
        raise ModelError(f"{where(node)}: a LinearClassifier needs 'intercepts' (ONNX "
                         "Runtime refuses one without)")
    reference = default_factory("ai.onnx.ml")(node, ctx)
    coef = np.asarray(node.attrs.get("coefficients", []), np.float32)
    intercepts = node.attrs.get("intercepts")
    names = node.attrs.get("classlabels_ints")
    if names is None:
        names = [v.decode() if isinstance(v, bytes) else str(v)
                 for v in node.attrs.get("classlabels_strings") or []]

    def run(x):
        label, scores = reference(x)
        odd = ~np.isfinite(scores).all(axis=-1) if scores.ndim == 2 else None
        n = len(names)
        targets = len(intercepts) if intercepts is not None and len(intercepts) else n
        if odd is None or not odd.any() or n < 2 or targets != n or scores.shape[1] != n \
                or coef.size % n:
            return label, scores
        rows = np.asarray(x, np.float32).reshape(len(scores), -1)[odd]
        with np.errstate(invalid="ignore", over="ignore"):
            raw = rows @ coef.reshape(n, -1).T
            if intercepts is not None and len(intercepts):
                raw = raw + np.asarray(intercepts, np.float32)
        label = label.copy()
        label[odd] = np.asarray(names, label.dtype)[nan_arg(np, raw, 1, True, False)]
        return label, scores

    return run
