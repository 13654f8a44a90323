"""Loop forms torch.onnx writes that the OpenVINO IR writer once got wrong (found by the
``torch-unseen`` corpus source, whose entries cover the others): a carried value whose rank
changes between iterations."""

from __future__ import annotations

import pytest
from onnx import helper as h

import itergraph as ig
from onnx_builders import I64, B, F, body, model, vi


def test_carried_value_that_changes_rank_is_refused(tmp_path):
    """``z = z.unsqueeze(0)`` carried: the body result has rank 2 where the value entered
    with rank 1; an OpenVINO back edge keeps one rank, so the writer refuses, naming it."""
    nodes = [h.make_node("Constant", [], ["ax"], value=h.make_tensor("a", I64, [1], [0])),
             h.make_node("Unsqueeze", ["z_in", "ax"], ["z_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("z_in", F, [3])],
             [vi("c_out", B, []), vi("z_out", F, [1, 3])])
    m = model([h.make_node("Loop", ["M", "", "z0"], ["z"], body=b)],
              [vi("M", I64, []), vi("z0", F, [3])], [vi("z", F, ["d0", "d1"])], opset=17)
    with pytest.raises(ig.UnsupportedError, match="carried value 0 .* rank 1 .* rank 2"):
        ig.save(ig.load(m), tmp_path / "m.xml")
