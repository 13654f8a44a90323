"""The per-node and per-leaf attribute lists of ``ai.onnx.ml``'s tree ensembles: each group's
lists describe one node (or one leaf weight) per entry, so they have one length. ONNX Runtime
refuses other lengths at load ("nodes_truenodeids ... size mismatch"); the reference
implementation walked them (a list of a million entries took minutes)."""

from __future__ import annotations

from ...errors import ModelError

_NODES = ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values",
          "nodes_values_as_tensor", "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids",
          "nodes_missing_value_tracks_true", "nodes_hitrates", "nodes_hitrates_as_tensor")
#: op type -> its groups of attributes of one length
GROUPS = {
    "TreeEnsembleClassifier": (_NODES, ("class_treeids", "class_nodeids", "class_ids",
                                        "class_weights", "class_weights_as_tensor")),
    "TreeEnsembleRegressor": (_NODES, ("target_treeids", "target_nodeids", "target_ids",
                                       "target_weights", "target_weights_as_tensor")),
}


def _length(a) -> int:
    if a.ints:
        return len(a.ints)
    if a.floats:
        return len(a.floats)
    if a.strings:
        return len(a.strings)
    t = a.t
    return int(t.dims[0]) if a.HasField("t") and len(t.dims) == 1 else 0


def check_tree_attributes(p, what: str) -> None:
    """A `ModelError` naming the node when the lists of one group differ in length."""
    attrs = {a.name: a for a in p.attribute}
    for group in GROUPS.get(p.op_type, ()):
        lengths = {n: _length(attrs[n]) for n in group if n in attrs}
        if len(set(lengths.values())) > 1:
            said = ", ".join(f"{n} {k}" for n, k in lengths.items())
            raise ModelError(f"{what}: the lists of one group must have one length, got {said}")
