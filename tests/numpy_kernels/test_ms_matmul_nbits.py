"""ONNX Runtime's ``MatMulNBits`` (``com.microsoft``; weight-only 4- and 8-bit quantization
as ``MatMulNBitsQuantizer`` and int4 LLM exports write it) on both backends against ONNX
Runtime (one thread), the model written back to ONNX re-run in ONNX Runtime, and the OpenVINO
IR (``MatMul`` by the dequantized weight) in OpenVINO: packed 4-bit zero points over an odd
number of blocks, the default zero point, float zero points, 8 bits, a bias, ``K`` not a
multiple of the block size, a 3-D ``A``."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h
from test_ms_contrib_ops import check, f, ms_model

import itergraph as ig

RNG = np.random.default_rng(21)


def _pack(codes: np.ndarray, bits: int) -> np.ndarray:
    """uint8 bytes of `codes` along the last axis, two 4-bit codes a byte (low nibble
    first)."""
    if bits == 8:
        return codes.astype(np.uint8)
    if codes.shape[-1] % 2:
        codes = np.concatenate([codes, np.zeros(codes.shape[:-1] + (1,), codes.dtype)], -1)
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def _case(k: int, n: int, bits: int, block: int, zp: str, bias: bool, a_shape):
    blocks = -(-k // block)
    codes = RNG.integers(0, 2 ** bits, (n, blocks, block))
    consts = {"b": _pack(codes, bits), "s": (0.05 + 0.1 * RNG.random(n * blocks))
              .astype(np.float32)}
    ins = ["a", "b", "s"]
    if zp == "packed":
        consts["z"] = _pack(RNG.integers(0, 2 ** bits, (n, blocks)), bits).reshape(-1)
        ins.append("z")
    elif zp == "float":
        consts["z"] = RNG.uniform(0, 2 ** bits - 1, n * blocks).astype(np.float32)
        ins.append("z")
    if bias:
        consts["bias"] = f(n)
        ins += [""] * (5 - len(ins)) + ["bias"]
    node = h.make_node("MatMulNBits", ins, ["y"], domain="com.microsoft", K=k, N=n, bits=bits,
                       block_size=block)
    feeds = {"a": f(*a_shape, k)}
    return ms_model([node], feeds, consts, ["y"]), feeds


@pytest.mark.parametrize(("k", "n", "bits", "block", "zp", "bias", "a_shape"), [
    (40, 6, 4, 16, "packed", False, (3,)),
    (32, 5, 4, 32, "none", True, (2, 4)),
    (24, 7, 4, 16, "float", False, (3,)),
    (48, 4, 8, 16, "packed", True, (2, 3)),
])
def test_matmul_nbits(tmp_path, k, n, bits, block, zp, bias, a_shape):
    m, feeds = _case(k, n, bits, block, zp, bias, a_shape)
    check(m, feeds, tmp_path, rtol=1e-5, atol=1e-5)


def test_b_of_the_wrong_shape_names_the_node():
    m, feeds = _case(40, 6, 4, 16, "none", False, (3,))
    m.graph.node[0].attribute[0].i = 64  # K: B now holds too few blocks
    with pytest.raises(ig.ModelError, match="MatMulNBits.*B of shape"):
        ig.load(m).run(feeds)
