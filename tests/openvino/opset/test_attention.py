"""ScaledDotProductAttention-13 against OpenVINO: no mask, float and boolean masks, causal
(square and L != S), explicit scale, dynamic shapes; read, written back to IR and to ONNX."""

from __future__ import annotations

import numpy as np
import openvino.opset13 as ops
import pytest
from opcheck import check_op, rand

rng = np.random.default_rng(13)
TOL = {"rtol": 1e-4, "atol": 1e-5}


@pytest.mark.parametrize("mask", ["none", "float", "bool", "causal"])
@pytest.mark.parametrize("lens", [(5, 5), (3, 6)])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa(mask, lens, scale, tmp_path):
    n_q, n_k = lens
    q = ops.parameter([2, 4, n_q, 8], np.float32, name="q")
    k = ops.parameter([2, 4, n_k, 8], np.float32, name="k")
    v = ops.parameter([2, 4, n_k, 6], np.float32, name="v")
    feeds = {"q": rand(rng, 2, 4, n_q, 8), "k": rand(rng, 2, 4, n_k, 8),
             "v": rand(rng, 2, 4, n_k, 6)}
    params = [q, k, v]
    m = None
    if mask == "float":
        m = ops.parameter([1, 1, n_q, n_k], np.float32, name="m")
        feeds["m"] = rand(rng, 1, 1, n_q, n_k)
        params.append(m)
    elif mask == "bool":
        m = ops.parameter([n_q, n_k], np.bool_, name="m")
        mv = rng.random((n_q, n_k)) > 0.3
        mv[:, 0] = True  # no row fully masked
        feeds["m"] = mv
        params.append(m)
    sc = None if scale is None else ops.constant(np.float32(scale))
    if sc is not None and m is None:
        m = ops.constant(np.zeros((1, 1), np.float32))
    a = ops.scaled_dot_product_attention(q, k, v, m, sc, causal=mask == "causal")
    check_op([a], params, feeds, tmp_path, **TOL)


def test_sdpa_dynamic_shapes(tmp_path):
    q = ops.parameter([-1, -1, -1], np.float32, name="q")
    k = ops.parameter([-1, -1, -1], np.float32, name="k")
    v = ops.parameter([-1, -1, -1], np.float32, name="v")
    a = ops.scaled_dot_product_attention(q, k, v, causal=True)
    feeds = {"q": rand(rng, 3, 4, 5), "k": rand(rng, 3, 6, 5), "v": rand(rng, 3, 6, 2)}
    check_op([a], [q, k, v], feeds, tmp_path, **TOL)
