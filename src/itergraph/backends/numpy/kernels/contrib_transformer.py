"""NumPy kernels of ONNX Runtime's fused transformer operators (domain ``com.microsoft``:
``SkipLayerNormalization``, ``SkipSimplifiedLayerNormalization``, ``Gelu``, ``BiasGelu``,
``FastGelu``, ``QuickGelu``, ``BiasAdd``; and ``SimplifiedLayerNormalization`` of the standard
domain, which ONNX Runtime registers there; ``Attention``). Semantics in
`semantics.ms_transformer`.
"""

from __future__ import annotations

import numpy as np

from ....semantics import ms_transformer as mt
from ....semantics.ms_embed_norm import embed_layer_norm
from . import kernel
from .elementwise import erf

DOMAIN = mt.DOMAIN


def _one(fn):
    """A factory running ``fn(node, np, *inputs)``."""

    def factory(node, ctx):
        def run(*inputs):
            return fn(node, np, *inputs)

        return run

    return factory


def _outs(outs: tuple):
    return outs[0] if len(outs) == 1 else outs


@kernel("SkipLayerNormalization", domain=DOMAIN)
def _skip_layer_norm(node, ctx):
    def fn(x, skip, gamma, beta=None, bias=None):
        return _outs(mt.skip_layer_norm(node, np, x, skip, gamma, beta, bias))

    return fn


@kernel("SkipSimplifiedLayerNormalization", domain=DOMAIN)
def _skip_simplified_layer_norm(node, ctx):
    def fn(x, skip, gamma, bias=None):
        return _outs(mt.skip_layer_norm(node, np, x, skip, gamma, None, bias,
                                        simplified=True))

    return fn


@kernel("SimplifiedLayerNormalization", since=1)
def _simplified_layer_norm(node, ctx):
    def fn(x, scale):
        return _outs(mt.simplified_layer_norm(node, np, x, scale))

    return fn


kernel("Gelu", domain=DOMAIN)(_one(lambda node, xp, x: mt.gelu_node(node, xp, x, erf)))
kernel("BiasGelu", domain=DOMAIN)(
    _one(lambda node, xp, a, b: mt.bias_gelu_node(node, xp, a, b, erf)))
kernel("FastGelu", domain=DOMAIN)(_one(mt.fast_gelu_node))
kernel("QuickGelu", domain=DOMAIN)(_one(mt.quick_gelu_node))
kernel("BiasAdd", domain=DOMAIN)(_one(mt.bias_add_node))


@kernel("Attention", domain=DOMAIN)
def _attention(node, ctx):
    def fn(*inputs):
        return _outs(mt.attention_node(node, np, *inputs))

    return fn


@kernel("MultiHeadAttention", domain=DOMAIN)
def _multi_head_attention(node, ctx):
    def fn(*inputs):
        return _outs(mt.multi_head_attention_node(node, np, *inputs))

    return fn


@kernel("EmbedLayerNormalization", domain=DOMAIN)
def _embed_layer_norm(node, ctx):
    def fn(*inputs):
        return _outs(embed_layer_norm(node, np, *inputs))

    return fn
