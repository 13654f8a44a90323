"""``ai.onnx.ml`` kernels that ``onnx.reference`` lacks or computes otherwise than ONNX Runtime
(the rest of the domain runs there).

``LabelEncoder``: the table of `semantics.label_encoder` (``onnx.reference`` ignores
``default_tensor``).

``ZipMap`` turns a ``[N, C]`` float tensor of class scores into one map per row, label ->
score (what scikit-learn classifiers converted by skl2onnx output by default)::

    [{labels[c]: float(x[n, c]) for c in range(C)} for n in range(N)]

A map is a Python ``dict``; its keys are ``int`` (``classlabels_int64s``) or ``str``
(``classlabels_strings``), its values ``float``, as ONNX Runtime returns them.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ....semantics.label_encoder import encode, encoder_table
from . import kernel


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
