"""Output types of ONNX Runtime's fused transformer and quantized operators (domain
``com.microsoft``), for which ONNX's inference has no schema: without them every value after
the first fused operator of a transformer is untyped, and the writers cannot tell its rank.

- ``SkipLayerNormalization``, ``SkipSimplifiedLayerNormalization``: output 0 and
  ``input_skip_bias_sum`` (3) have input 0's type;
- ``Gelu``, ``FastGelu``, ``BiasGelu``, ``QuickGelu``, ``BiasAdd``, and the quantized
  ``QLinearSoftmax``, ``QLinearSigmoid``, ``QLinearLeakyRelu``: input 0's type;
- ``Attention``: ``(B, S, v_hidden)``, ``v_hidden`` the last of ``qkv_hidden_sizes``, else a
  third of the weights' columns;
- ``MultiHeadAttention``: ``(B, S, Dv)``, ``Dv`` the value's last dimension (3-D value) or
  heads times head size (4-D value);
- ``MatMulNBits``: ``A``'s shape with the last dimension ``N``;
- ``QGemm``: ``(M, N)`` from ``A`` and ``B`` (``transA``, ``transB``), of ``y_zero_point``'s
  type when it has ``y_scale`` (else ``A``'s 8-bit type), float32 without;
- ``EmbedLayerNormalization``: ``(B, S, H)`` of the word embedding's type, ``mask_index``
  int32 ``(B)``, ``embedding_sum`` as output 0.
"""

from __future__ import annotations

from ..ir.graph import MICROSOFT_DOMAIN as DOMAIN
from ..ir.graph import Node
from ..ir.types import DataType, TensorType

_LIKE_INPUT = {"SkipLayerNormalization": (0, 3), "SkipSimplifiedLayerNormalization": (0, 3),
               "Gelu": (0,), "FastGelu": (0,), "BiasGelu": (0,), "QuickGelu": (0,),
               "BiasAdd": (0,), "QLinearSoftmax": (0,), "QLinearSigmoid": (0,),
               "QLinearLeakyRelu": (0,)}


def _tensor(node: Node, i: int) -> TensorType | None:
    v = node.inputs[i] if i < len(node.inputs) else None
    t = getattr(v, "type", None)
    return t if isinstance(t, TensorType) else None


def _shape(node: Node, i: int) -> tuple | None:
    t = _tensor(node, i)
    return None if t is None else t.shape


def contrib_output_types(n: Node) -> list:
    """The types of `n`'s outputs that its inputs decide (None where they do not)."""
    out: list = [None] * len(n.outputs)
    if n.domain != DOMAIN or not n.inputs:
        return out
    first = _tensor(n, 0)
    if n.op_type in _LIKE_INPUT:
        for i in _LIKE_INPUT[n.op_type]:
            if i < len(out):
                out[i] = first
        return out
    xs = _shape(n, 0)
    if n.op_type == "EmbedLayerNormalization":
        _embed_types(n, xs, out)
    elif n.op_type == "MatMulNBits" and first is not None:
        width = n.attrs.get("N")
        out[0] = TensorType(first.dtype, None if xs is None else
                            (*xs[:-1], int(width) if width is not None else None))
    elif n.op_type == "QGemm" and first is not None:
        out[0] = _qgemm_type(n, first, xs)
    elif n.op_type in ("Attention", "MultiHeadAttention") and first is not None:
        known = xs is not None and len(xs) == 3
        out[0] = TensorType(first.dtype, (xs[0], xs[1], _attention_width(n)) if known else None)
    return out


def _qgemm_type(n: Node, first: TensorType, xs: tuple | None) -> TensorType:
    quantized = len(n.inputs) > 7 and n.inputs[7] is not None
    zp = _tensor(n, 8) if quantized else None
    dt = (zp.dtype if zp is not None else first.dtype) if quantized else DataType.FLOAT32
    ws = _shape(n, 3)
    if xs is None or ws is None or len(xs) != 2 or len(ws) != 2:
        return TensorType(dt, None)
    m = xs[1] if n.attrs.get("transA", 0) else xs[0]
    k = ws[0] if n.attrs.get("transB", 0) else ws[1]
    return TensorType(dt, (m, k))


def _attention_width(n: Node):
    """The last dimension of ``Attention`` / ``MultiHeadAttention``'s output, or None."""
    if n.op_type == "Attention":
        sizes = n.attrs.get("qkv_hidden_sizes")
        ws = _shape(n, 1)
        return int(sizes[2]) if sizes else \
            ws[1] // 3 if ws and len(ws) == 2 and isinstance(ws[1], int) else None
    vs = _shape(n, 2)
    if vs is not None and len(vs) == 3:
        return vs[2]
    if vs is not None and len(vs) == 4 and all(isinstance(x, int) for x in vs[1::2]):
        return vs[1] * vs[3]
    return None


def _embed_types(n: Node, xs: tuple | None, out: list) -> None:
    word = _tensor(n, 2)
    known = xs is not None and len(xs) == 2
    h = word.shape[1] if word is not None and word.shape and len(word.shape) == 2 else None
    emb = TensorType(word.dtype if word is not None else None,
                     (xs[0], xs[1], h) if known else None)
    out[0] = emb
    if len(out) > 1:
        out[1] = TensorType(DataType.INT32, (xs[0],) if known else (None,))
    if len(out) > 2:
        out[2] = emb
