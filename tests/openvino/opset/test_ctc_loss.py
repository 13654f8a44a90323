"""CTCLoss-4 against OpenVINO and against a brute-force sum over all alignments: read (as
``org.openvinotoolkit`` CTCLoss), run on NumPy and JAX, written back. No ONNX op computes a
CTC loss and OpenVINO's ONNX frontend reads none, so there is no ONNX leg."""

from __future__ import annotations

import itertools

import numpy as np
import openvino as ov
import openvino.opset4 as ops4
import pytest
from opcheck import check_op
from ov_helpers import save

import itergraph as ig

rng = np.random.default_rng(53)


def _decode(labels, collapse, unique):
    if unique:
        return list(dict.fromkeys(labels))
    if collapse:
        return [v for i, v in enumerate(labels) if i == 0 or v != labels[i - 1]]
    return list(labels)


def _brute(logits, t_len, target, blank, merge):
    """-log of the summed probability of every step labelling that reads as `target`."""
    x = logits[:t_len].astype(np.float64)
    logp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(logits.shape[1]), repeat=t_len):
        seq = [v for i, v in enumerate(path) if not (merge and i and v == path[i - 1])]
        if [v for v in seq if v != blank] == target:
            total += np.exp(sum(logp[i, v] for i, v in enumerate(path)))
    return -np.log(total) if total else np.inf


def _model(n, t, c, flags, with_blank, blank):
    logits = ops4.parameter([n, t, c], np.float32, name="logits")
    ll = ops4.parameter([n], np.int32, name="logit_length")
    labels = ops4.parameter([n, t], np.int32, name="labels")
    lab_len = ops4.parameter([n], np.int32, name="label_length")
    collapse, merge, unique = flags
    y = ops4.ctc_loss(logits, ll, labels, lab_len,
                      ops4.constant(np.int32(blank)) if with_blank else None,
                      preprocess_collapse_repeated=collapse, ctc_merge_repeated=merge,
                      unique=unique)
    return y, [logits, ll, labels, lab_len]


FLAGS = [(False, True, False), (True, True, False), (False, False, False), (True, False, False),
         (False, True, True), (False, False, True)]


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("with_blank", [False, True])
def test_ctc_loss(flags, with_blank, tmp_path):
    n, t, c = 3, 5, 4
    blank = 1 if with_blank else c - 1
    other = [k for k in range(c) if k != blank]
    labels = rng.choice(other, (n, t)).astype(np.int32)
    labels[0, :3] = [other[0], other[0], other[1]]  # a repeat, to collapse or keep
    feeds = {"logits": rng.standard_normal((n, t, c)).astype(np.float32),
             "logit_length": np.array([5, 4, 5], np.int32),
             "labels": labels, "label_length": np.array([3, 2, 1], np.int32)}
    y, params = _model(n, t, c, flags, with_blank, blank)
    check_op([y], params, feeds, tmp_path, rtol=1e-4, atol=1e-4, to_onnx=False)
    collapse, merge, unique = flags
    want = [_brute(feeds["logits"][b], int(feeds["logit_length"][b]),
                   _decode(list(labels[b, :feeds["label_length"][b]]), collapse, unique),
                   blank, merge) for b in range(n)]
    got = list(ig.load(save(ov.Model([y], params), tmp_path, "again")).run(feeds).values())[0]
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_ctc_loss_dynamic(tmp_path):
    logits = ops4.parameter([-1, -1, 3], np.float32, name="logits")
    ll = ops4.parameter([-1], np.int64, name="logit_length")
    labels = ops4.parameter([-1, -1], np.int64, name="labels")
    lab_len = ops4.parameter([-1], np.int64, name="label_length")
    y = ops4.ctc_loss(logits, ll, labels, lab_len, ops4.constant(np.int64(0)))
    feeds = {"logits": rng.standard_normal((2, 6, 3)).astype(np.float32),
             "logit_length": np.array([6, 3], np.int64),
             "labels": rng.integers(1, 3, (2, 6)).astype(np.int64),
             "label_length": np.array([4, 1], np.int64)}
    check_op([y], [logits, ll, labels, lab_len], feeds, tmp_path, rtol=1e-4, atol=1e-4,
             to_onnx=False)
