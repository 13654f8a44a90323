"""ONNX Runtime's ``EmbedLayerNormalization`` (``com.microsoft``, the embedding layer of the
BERT graphs its transformer optimizer writes) on both backends against ONNX Runtime (one
thread), the model written back to ONNX re-run in ONNX Runtime, and the OpenVINO IR (standard
ops, `frontends.onnx.contrib_expand`) in OpenVINO: with and without segments, a mask holding
other values than 0 and 1 (``mask_index`` counts the ones), ``position_ids`` per row and
broadcast, and the ``embedding_sum`` output."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h
from test_ms_contrib_ops import check, f, ms_model

import itergraph as ig

B, S, H, V = 2, 5, 16, 11


def _ids(*shape, high=V, seed=3):
    return np.random.default_rng(seed).integers(0, high, shape).astype(np.int32)


def _model(segments: bool, mask: bool, positions: str | None, outs: list[str], epsilon=None):
    feeds = {"ids": _ids(B, S)}
    consts = {"word": f(V, H), "pos": f(8, H), "g": f(H), "b": f(H)}
    ins = ["ids", "", "word", "pos", "", "g", "b", "", ""]
    if segments:
        feeds["seg"] = _ids(B, S, high=2, seed=4)
        consts["segw"] = f(2, H)
        ins[1], ins[4] = "seg", "segw"
    if mask:
        feeds["mask"] = np.array([[1, 1, 1, 0, 0], [1, 2, 1, 1, 0]], np.int32)
        ins[7] = "mask"
    if positions:
        feeds["pid"] = _ids(B if positions == "rows" else 1, S, high=8, seed=5)
        ins[8] = "pid"
    while ins[-1] == "":
        ins.pop()
    attrs = {} if epsilon is None else {"epsilon": epsilon}
    n = h.make_node("EmbedLayerNormalization", ins, outs, domain="com.microsoft", **attrs)
    return ms_model([n], feeds, consts, [o for o in outs if o]), feeds


@pytest.mark.parametrize(("segments", "mask", "positions"),
                         [(True, True, None), (False, True, "rows"), (True, False, "one"),
                          (False, False, None)])
def test_embed_layer_norm(tmp_path, segments, mask, positions):
    m, feeds = _model(segments, mask, positions, ["y", "mask_index", "sum"], epsilon=1e-5)
    check(m, feeds, tmp_path, rtol=1e-5, atol=1e-5)


def test_embed_layer_norm_default_epsilon(tmp_path):
    m, feeds = _model(True, True, None, ["y", "mask_index"])
    check(m, feeds, tmp_path, rtol=1e-5, atol=1e-5)


def test_ids_outside_the_table_name_the_node():
    m, feeds = _model(False, False, None, ["y", "mask_index"])
    feeds["ids"][0, 0] = V
    with pytest.raises(ig.ModelError, match="EmbedLayerNormalization.*input_ids"):
        ig.load(m).run(feeds)
