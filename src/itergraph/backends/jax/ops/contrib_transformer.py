"""JAX lowerings of ONNX Runtime's fused transformer operators (domain ``com.microsoft``, and
``SimplifiedLayerNormalization`` of the standard domain): the node-level functions of
`semantics.ms_transformer` over ``jax.numpy``, ``erf`` being ``lax.erf``.
"""

from __future__ import annotations

from ....semantics import ms_transformer as mt
from ....semantics.ms_embed_norm import embed_layer_norm
from ..table import lowering
from ._util import precision


def _erf(x):
    from jax import lax

    return lax.erf(x)


def _outs(outs: tuple):
    return outs[0] if len(outs) == 1 else outs


@lowering("SkipLayerNormalization", domain=mt.DOMAIN)
def _skip_layer_norm(cx, x, skip, gamma, beta=None, bias=None):
    return _outs(mt.skip_layer_norm(cx.node, cx.xp, x, skip, gamma, beta, bias))


@lowering("SkipSimplifiedLayerNormalization", domain=mt.DOMAIN)
def _skip_simplified_layer_norm(cx, x, skip, gamma, bias=None):
    return _outs(mt.skip_layer_norm(cx.node, cx.xp, x, skip, gamma, None, bias,
                                    simplified=True))


@lowering("SimplifiedLayerNormalization", since=1)
def _simplified_layer_norm(cx, x, scale):
    return _outs(mt.simplified_layer_norm(cx.node, cx.xp, x, scale))


@lowering("Gelu", domain=mt.DOMAIN)
def _gelu(cx, x):
    return mt.gelu_node(cx.node, cx.xp, x, _erf)


@lowering("BiasGelu", domain=mt.DOMAIN)
def _bias_gelu(cx, a, b):
    return mt.bias_gelu_node(cx.node, cx.xp, a, b, _erf)


@lowering("FastGelu", domain=mt.DOMAIN)
def _fast_gelu(cx, x, bias=None):
    return mt.fast_gelu_node(cx.node, cx.xp, x, bias)


@lowering("QuickGelu", domain=mt.DOMAIN)
def _quick_gelu(cx, x):
    return mt.quick_gelu_node(cx.node, cx.xp, x)


@lowering("BiasAdd", domain=mt.DOMAIN)
def _bias_add(cx, x, bias, skip):
    return mt.bias_add_node(cx.node, cx.xp, x, bias, skip)


@lowering("Attention", domain=mt.DOMAIN)
def _attention(cx, *inputs):
    xp = cx.xp
    return _outs(mt.attention_node(cx.node, xp, *inputs,
                                   matmul=lambda p, q: xp.matmul(p, q, precision=precision())))


@lowering("MultiHeadAttention", domain=mt.DOMAIN)
def _multi_head_attention(cx, *inputs):
    xp = cx.xp
    return _outs(mt.multi_head_attention_node(
        cx.node, xp, *inputs, matmul=lambda p, q: xp.matmul(p, q, precision=precision())))


@lowering("EmbedLayerNormalization", domain=mt.DOMAIN)
def _embed_layer_norm(cx, *inputs):
    return _outs(embed_layer_norm(cx.node, cx.xp, *inputs))
