"""The loop transforms on real exporter output: a sample of the real-world corpus where each
applies, checked against the framework's recorded outputs on the NumPy backend, and on the
written files in ONNX Runtime (.onnx) and OpenVINO (.xml)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))

from corpus import entries  # noqa: E402
from peers import PEERS  # noqa: E402
from stages import assert_outputs  # noqa: E402

import itergraph as ig  # noqa: E402
from itergraph.ir.clone import clone_graph  # noqa: E402
from itergraph.transforms import TRANSFORMS, optimize  # noqa: E402

SAMPLE = {
    "unroll": ["torch/for_range_const_op23", "torch/scan_rnn_dynamo_op20",
               "sklearn/kneighbors_transformer_distance_op22", "sklearn-ov/gpr_rbf_op9",
               "torch-ov/scan_reverse_dynamo_op20_onnxfe"],
    "unroll=2": ["torch/for_range_input_op17", "torch/for_range_shape_op13",
                 "sklearn-ov/nearest_neighbors_kneighbors_op22",
                 "torch-ov/scan_multi_carry_dynamo_op20_onnxfe"],
    "loop-to-scan": ["torch/for_over_rows_op23", "torch/for_range_const_op23",
                     "torch-ov/manual_rnn_stack_ptfe",
                     "sklearn-ov/kneighbors_transformer_distance_op9"],
    "scan-to-loop": ["torch/scan_cumsum_dynamo_op20", "torch/scan_cond_dynamo_op27",
                     "sklearn/gpr_rbf_op9", "torch-ov/scan_rnn_dynamo_op20_onnxfe"],
    "loop-to-ti": ["torch/for_over_rows_op9", "torch/manual_rnn_stack_op11",
                   "torch-ov/manual_gru_loop_ptfe", "torch-ov/if_in_loop_ptfe"],
}
#: transforms that apply once the input shapes are fixed (a TensorIterator only for a count
#: known before the run: OpenVINO's fails on zero iterations)
FIXED_SHAPES = {"loop-to-ti"}
CASES = [pytest.param(t, e, id=f"{t}:{e}") for t, ids in SAMPLE.items() for e in ids]


def fresh(model: ig.Model) -> ig.Model:
    """A copy of `model` for a pass to rewrite in place."""
    return ig.Model(clone_graph(model.graph), model.source)


@pytest.mark.parametrize(("transform", "entry_id"), CASES)
def test_transform_keeps_the_recorded_outputs(transform, entry_id, tmp_path):
    (entry,) = [e for e in entries() if e.id == entry_id]
    model = ig.load(entry.file)
    name, _, arg = transform.partition("=")
    if name in FIXED_SHAPES:
        model = model.with_input_shapes({k: np.shape(v) for k, v in entry.feeds().items()})
    assert TRANSFORMS[name].build(arg or None)(fresh(model).graph) > 0, \
        f"{transform} no longer applies to {entry_id}"
    done = optimize(model, [transform])
    assert_outputs(list(done.run(entry.feeds()).values()), entry, f"numpy after {transform}")
    for suffix, peer in ((".onnx", "onnxruntime"), (".xml", "openvino")):
        path = tmp_path / f"opt{suffix}"
        ig.save(done, path)
        assert_outputs(PEERS.run(peer, path, entry.feeds()), entry,
                       f"{peer} after {transform}", exact_dtype=False,
                       peer_error=entry.peer_error(peer))
