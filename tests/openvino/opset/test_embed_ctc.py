"""Embedding bags (EmbeddingBagPackedSum-3, EmbeddingBagOffsetsSum-3, EmbeddingSegmentsSum-3,
EmbeddingBagPacked-15, EmbeddingBagOffsets-15) and CTCGreedyDecoder-1 against OpenVINO: with
and without weights and default rows, empty bags, sum and mean; read, written back, to ONNX."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset3 as ops3
import openvino.opset15 as ops15
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(31)
TABLE = rand(rng, 10, 3, 2)


def _i(v):
    return np.array(v, np.int64)


# OpenVINO refuses weights with reduction "mean"
VARIANTS = [(w, v, r) for w in (False, True) for v, r in [(3, "sum"), (15, "sum"), (15, "mean")]
            if not (w and r == "mean")]


@pytest.mark.parametrize("weighted,version,reduction", VARIANTS)
def test_embedding_bag_packed(weighted, version, reduction, tmp_path):
    t = ops3.parameter(list(TABLE.shape), np.float32, name="t")
    idx = ops3.parameter([4, 3], np.int64, name="idx")
    feeds = {"t": TABLE, "idx": rng.integers(0, 10, (4, 3))}
    params = [t, idx]
    w = None
    if weighted:
        w = ops3.parameter([4, 3], np.float32, name="w")
        feeds["w"] = rand(rng, 4, 3)
        params.append(w)
    if version == 3:
        e = ops3.embedding_bag_packed_sum(t, idx, w)
    else:
        e = ops15.embedding_bag_packed(t, idx, w, reduction=reduction)
    check_op([e], params, feeds, tmp_path, rtol=1e-5, atol=1e-5)


# weights come after default_index in OpenVINO's API (and its CPU plugin refuses -1 there);
# an empty bag sits between others (the plugin refuses an offset equal to the index count)
@pytest.mark.parametrize("default", [None, 7])
@pytest.mark.parametrize("weighted,version,reduction", VARIANTS)
def test_embedding_bag_offsets(weighted, default, version, reduction, tmp_path):
    if weighted and default is None:
        default = 7
    t = ops3.parameter(list(TABLE.shape), np.float32, name="t")
    idx = ops3.parameter([7], np.int64, name="idx")
    off = ops3.parameter([5], np.int64, name="off")
    feeds = {"t": TABLE, "idx": rng.integers(0, 10, 7), "off": _i([0, 2, 2, 5, 6])}
    params = [t, idx, off]
    d = None if default is None else ops3.constant(np.int64(default))
    w = None
    if weighted:
        w = ops3.parameter([7], np.float32, name="w")
        feeds["w"] = rand(rng, 7)
        params.append(w)
    if version == 3:
        e = ops3.embedding_bag_offsets_sum(t, idx, off, d, w)
    else:
        e = ops15.embedding_bag_offsets(t, idx, off, d, w, reduction=reduction)
    check_op([e], params, feeds, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("weighted,default", [(False, None), (False, 3), (True, 3)])
def test_embedding_segments_sum(weighted, default, tmp_path):
    t = ops3.parameter(list(TABLE.shape), np.float32, name="t")
    idx = ops3.parameter([6], np.int64, name="idx")
    seg = ops3.parameter([6], np.int64, name="seg")
    feeds = {"t": TABLE, "idx": rng.integers(0, 10, 6), "seg": _i([0, 0, 2, 2, 2, 4])}
    params = [t, idx, seg]
    d = None if default is None else ops3.constant(np.int64(default))
    w = None
    if weighted:
        w = ops3.parameter([6], np.float32, name="w")
        feeds["w"] = rand(rng, 6)
        params.append(w)
    e = ops3.embedding_segments_sum(t, idx, seg, ops3.constant(np.int64(6)), d, w)
    check_op([e], params, feeds, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("merge", [True, False])
def test_ctc_greedy_decoder(merge, tmp_path):
    T, N, C = 6, 3, 4
    x = ops1.parameter([T, N, C], np.float32, name="x")
    m = ops1.parameter([T, N], np.float32, name="m")
    scores = rand(rng, T, N, C)
    scores[1, :] = scores[0, :]  # repeats to merge
    mask = np.zeros((T, N), np.float32)
    for n, length in enumerate([6, 4, 1]):
        mask[:length, n] = 1
    d = ops1.ctc_greedy_decoder(x, m, merge)
    check_op([d], [x, m], {"x": scores, "m": mask}, tmp_path)
