"""ONNX Runtime's ``com.microsoft`` quantization and fused operators as standard ONNX nodes,
for writers that have no such operators (the OpenVINO IR writer: `NetWriter` writes the
expansion with its own translators, the quantization ones of `export_quant_onnx` exact).

`expansion(node)` gives an IR graph whose inputs are the node's present inputs and whose
outputs are its outputs (as `schema_functions.expansion` does for ONNX's function ops), or
``None`` for an operator not covered here. Each form computes what the NumPy kernel computes
(`semantics.ms_quant`):

- ``QuantizeLinear``/``DequantizeLinear``: ONNX's, with ``axis``.
- ``DynamicQuantizeMatMul``: ``DynamicQuantizeLinear(A)``, ``MatMulInteger``, ``Cast``,
  ``Mul`` by ``a_scale * b_scale``, ``Add`` bias; ``MatMulIntegerToFloat`` likewise without the
  dynamic quantization; ``QGemm``: ``MatMulInteger`` (+ ``C``), ``Mul``, and
  ``QuantizeLinear`` when it has ``y_scale``.
- ``QLinearSigmoid``, ``QLinearLeakyRelu``: ``Gather`` from the 256-entry table of the
  kernel; ``QLinearAdd``, ``QLinearMul``: ``Gather`` from the 65536-entry table of every pair
  of codes (MLAS's scalar-run variant where the shapes show one input constant along the
  innermost axis): exact, but the scales and zero points must be constants.
- ``QLinearSoftmax``: rows of fewer than 16 codes, the exp table, sums and roundings of ONNX
  Runtime's kernel (`contrib_qsoftmax`).
- ``QLinearConcat``: ``DequantizeLinear`` then ``QuantizeLinear`` per input, ``Concat``.
- ``QLinearGlobalAveragePool``: the int32 sum (``ReduceSum``), ``Sub`` of ``x_zp * n``,
  ``Mul`` by ``x_scale / (y_scale * n)`` (computed here), ``Round``, ``Add`` y_zp, ``Clip``,
  ``Cast``; constant scales and a known spatial size. ``QLinearAveragePool``:
  ``DequantizeLinear``, ``AveragePool``, ``QuantizeLinear`` (the float sum in the runtime's
  order: a value on a rounding tie may take the neighbouring code).
- ``FusedMatMul``: ``Transpose``s, ``MatMul``, ``Mul`` by alpha; ``FusedGemm``: ``Gemm`` and
  the activation's op; ``FusedConv``: ``Conv``, ``Add`` of Z, the activation's op.

- ``DynamicQuantizeLSTM`` (constant weights, scales and zero points): per direction,
  ``DynamicQuantizeLinear`` of all of X,
  ``MatMulInteger`` by W, ``Cast``, ``Mul``; then a ``Scan`` over the steps whose body
  quantizes the hidden state (``DynamicQuantizeLinear``), multiplies it by R the same way,
  adds the step's input product and the bias and runs the LSTM gates (activations Sigmoid,
  Tanh, Relu; ``clip``, ``input_forget``, peepholes). ``sequence_lens`` is not written.

- ``SkipLayerNormalization`` / ``SkipSimplifiedLayerNormalization``: ``Add`` input, skip,
  bias; ``ReduceMean``, ``Sub``, ``Mul``, ``Add`` epsilon, ``Sqrt``, ``Reciprocal`` (the
  mean and inv_std_var outputs), ``Mul`` gamma, ``Add`` beta; ``SimplifiedLayerNormalization``
  (ONNX Runtime's, standard domain) likewise without the centering.
- ``Gelu``, ``BiasGelu``: (``Add`` bias,) ``Erf`` formula; ``FastGelu``: (``Add`` bias,)
  ``Tanh`` formula; ``QuickGelu``: ``Mul(x, Sigmoid(alpha * x))``; ``BiasAdd``: two ``Add``.
- ``MatMulNBits`` (constant codes, scales, zero points; float32): ``MatMul`` by the
  dequantized float32 weight, ``Add`` bias.
- ``EmbedLayerNormalization``: ``Gather`` of the word, position and segment rows, ``Add``, the
  layer normalization above; ``mask_index`` as ``ReduceSum(Equal(mask, 1))`` per row.
- ``Attention``: the merged projection (``MatMul``, ``Add``), ``Slice``/``Reshape``/
  ``Transpose`` to heads, ``Concat`` after the past (``present``), ``MatMul``, ``Mul`` scale,
  the mask by ``Where`` (raw masks, key lengths against a ``Range``, the causal part from the
  query and key positions), ``Softmax``, ``MatMul``; float32, mask shapes known.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ...errors import UnsupportedError, where
from ...ir.graph import MICROSOFT_DOMAIN as DOMAIN
from ...ir.graph import Graph, Node
from ...semantics import ms_quant as mq
from ...semantics import ms_quant_ops as qops
from ...semantics import ms_transformer as mt
from ...semantics import recurrent
from ...semantics.ms_nbits import weight
from .contrib_qsoftmax import qlinear_softmax
from .types import type_to_onnx

_OPSET = 21


class _Builder:
    """The nodes of one expansion, named ``in<i>`` / ``out<k>`` / ``t<j>``."""

    def __init__(self, node: Node):
        self.node = node
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def input(self, i: int) -> str | None:
        ins = self.node.inputs
        return f"in{i}" if i < len(ins) and ins[i] is not None else None

    def const(self, i: int) -> np.ndarray | None:
        ins = self.node.inputs
        v = ins[i] if i < len(ins) else None
        return None if v is None or v.const is None else np.asarray(v.const)

    def shape(self, i: int):
        t = self.node.inputs[i].type
        return getattr(t, "shape", None)

    def needs_const(self, *idx: int) -> list[np.ndarray | None]:
        vals = []
        for i in idx:
            if self.input(i) is None:
                vals.append(None)
                continue
            c = self.const(i)
            if c is None:
                raise UnsupportedError(f"{where(self.node)}: written with standard ops only "
                                       f"when its scales and zero points are constants "
                                       f"(input {i} is computed)")
            vals.append(c)
        return vals

    def init(self, value, dtype=None) -> str:
        name = "c" + self.fresh()
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, inputs: list[str | None], out: int | None = None,
           **attrs) -> str:
        name = f"out{out}" if out is not None else self.fresh()
        self.nodes.append(helper.make_node(op_type, [i or "" for i in inputs], [name],
                                           **{k: v for k, v in attrs.items() if v is not None}))
        return name

    def sub(self) -> _Builder:
        """A builder for a subgraph (its nodes and names kept apart, the counter shared)."""
        b = _Builder(self.node)
        b.inits = self.inits
        b.parent = self
        return b

    def fresh(self) -> str:
        root = self
        while getattr(root, "parent", None) is not None:
            root = root.parent
        root.count += 1
        return f"t{root.count}"

    def graph(self) -> Graph:
        from .reader import read  # the reader imports this module's siblings

        return read(self.model())

    def model(self) -> onnx.ModelProto:
        node = self.node
        ins = [helper.make_value_info(f"in{i}", type_to_onnx(v.type))
               for i, v in enumerate(node.inputs) if v is not None]
        outs = [helper.make_value_info(f"out{k}", onnx.TypeProto())
                for k in range(len(node.outputs))]
        g = helper.make_graph(self.nodes, f"{node.op_type}_standard", ins, outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", _OPSET)])
        m.ir_version = 10
        return m


def _attr(node: Node, name: str, default=None):
    v = node.attrs.get(name)
    if v is None:
        return default
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


# ---------------------------------------------------------------------------- quantization


def _quantize_linear(b: _Builder, node: Node) -> None:
    b.op(node.op_type, [b.input(0), b.input(1), b.input(2)], out=0,
         axis=int(_attr(node, "axis", 1)))


def _scaled(b: _Builder, acc: str, sa: str, sb: str, bias: str | None, out: int) -> None:
    mult = b.op("Mul", [sa, sb])
    y = b.op("Mul", [b.op("Cast", [acc], to=TensorProto.FLOAT), mult],
             out=None if bias else out)
    if bias:
        b.op("Add", [y, bias], out=out)


def _dynamic_quantize_matmul(b: _Builder, node: Node) -> None:
    qa = b.op("DynamicQuantizeLinear", [b.input(0)])
    b.nodes[-1].output[:] = [qa, qa + "_s", qa + "_z"]
    acc = b.op("MatMulInteger", [qa, b.input(1), qa + "_z", b.input(3)])
    _scaled(b, acc, qa + "_s", b.input(2), b.input(4), 0)


def _matmul_integer_to_float(b: _Builder, node: Node) -> None:
    acc = b.op("MatMulInteger", [b.input(0), b.input(1), b.input(4), b.input(5)])
    _scaled(b, acc, b.input(2), b.input(3), b.input(6), 0)


def _qgemm(b: _Builder, node: Node) -> None:
    a, bm = b.input(0), b.input(3)
    if _attr(node, "transA", 0):
        a = b.op("Transpose", [a], perm=[1, 0])
    if _attr(node, "transB", 0):
        bm = b.op("Transpose", [bm], perm=[1, 0])
    acc = b.op("MatMulInteger", [a, bm, b.input(2), b.input(5)])
    if b.input(6):
        acc = b.op("Add", [acc, b.input(6)])
    alpha = b.init(np.float32(_attr(node, "alpha", 1.0)))
    mult = b.op("Mul", [b.op("Mul", [alpha, b.input(1)]), b.input(4)])
    quantized = b.input(7) is not None
    y = b.op("Mul", [b.op("Cast", [acc], to=TensorProto.FLOAT), mult],
             out=None if quantized else 0)
    if quantized:
        b.op("QuantizeLinear", [y, b.input(7), b.input(8)], out=0)


def _matmul_nbits(b: _Builder, node: Node) -> None:
    """``MatMul`` by the weight dequantized here (float32 ``[K, N]``; constant codes, scales
    and zero points), ``Add`` bias: what ONNX Runtime computes without ``accuracy_level``."""
    codes, scales, zps = b.needs_const(1, 2, 3)
    if b.input(4) or _input_dtype(node) != np.float32:
        raise UnsupportedError(f"{where(node)}: written with standard ops only for float32 "
                               "inputs without g_idx")
    w = b.init(np.asarray(weight(node, np, codes, scales, zps), np.float32))
    y = b.op("MatMul", [b.input(0), w], out=None if b.input(5) else 0)
    if b.input(5):
        b.op("Add", [y, b.input(5)], out=0)


def _lookup(b: _Builder, node: Node) -> None:
    sx, zx, sy, zy = b.needs_const(1, 2, 3, 4)
    dt = _quant_dtype(node, 0, 2)
    lo = mq.qrange(dt)[0]
    codes = np.arange(lo, lo + 256).astype(dt)
    table = qops.qlinear_lookup(node, np, codes, sx, zx, sy, zy)
    idx = b.op("Cast", [b.input(0)], to=TensorProto.INT32)
    if lo:
        idx = b.op("Sub", [idx, b.init(np.int32(lo))])
    b.op("Gather", [b.init(table), idx], out=0, axis=0)


def _binary(b: _Builder, node: Node) -> None:
    sa, za, sb, zb, sc, zc = b.needs_const(1, 2, 4, 5, 6, 7)
    dt = _quant_dtype(node, 0, 2)
    lo = mq.qrange(dt)[0]
    codes = np.arange(lo, lo + 256).astype(dt)
    a_run = False
    sha, shb = b.shape(0), b.shape(3)
    if sha is not None and shb is not None and all(isinstance(d, int) for d in (*sha, *shb)):
        out = tuple(np.broadcast_shapes(tuple(sha), tuple(shb)))
        a_run = mq.inner_constant(sha, out) and not mq.inner_constant(shb, out)
    if a_run:
        ta, tb = codes.reshape(256, 1), codes.reshape(1, 256)
    else:
        ta, tb = np.repeat(codes, 256).reshape(256, 256), np.tile(codes, 256).reshape(256, 256)
    fn = qops.OPS[node.op_type]
    table = np.asarray(fn(node, np, ta, sa, za, tb, sb, zb, sc, zc)).reshape(-1)
    ia = b.op("Cast", [b.input(0)], to=TensorProto.INT32)
    ib = b.op("Cast", [b.input(3)], to=TensorProto.INT32)
    if lo:
        ia = b.op("Sub", [ia, b.init(np.int32(lo))])
        ib = b.op("Sub", [ib, b.init(np.int32(lo))])
    idx = b.op("Add", [b.op("Mul", [ia, b.init(np.int32(256))]), ib])
    b.op("Gather", [b.init(table), idx], out=0, axis=0)


def _qlinear_concat(b: _Builder, node: Node) -> None:
    """Each input requantized by a table over its 256 codes when the scales and zero points
    are constants (exact: OpenVINO fuses a DequantizeLinear-QuantizeLinear pair into one
    product that rounds some near-ties to the neighbouring code), else by that pair."""
    parts = []
    sy, zy = b.const(0), b.const(1) if b.input(1) is not None else np.uint8(0)
    for i in range(2, len(node.inputs), 3):
        sx, zx = b.const(i + 1), b.const(i + 2) if b.input(i + 2) is not None else np.uint8(0)
        t = node.inputs[i].type
        dt = np.dtype(t.dtype.numpy) if getattr(t, "dtype", None) is not None else None
        if None in (sy, zy, sx, zx) or dt not in (np.dtype(np.uint8), np.dtype(np.int8)):
            v = b.op("DequantizeLinear", [b.input(i), b.input(i + 1), b.input(i + 2)])
            parts.append(b.op("QuantizeLinear", [v, b.input(0), b.input(1) or b.init(zy)]))
            continue
        lo = mq.qrange(dt)[0]
        codes = np.arange(lo, lo + 256).astype(dt)
        table = mq.requantize(np, codes, sx, zx, sy, np.asarray(zy).astype(dt))
        idx = b.op("Cast", [b.input(i)], to=TensorProto.INT32)
        if lo:
            idx = b.op("Sub", [idx, b.init(np.int32(lo))])
        parts.append(b.op("Gather", [b.init(table), idx], axis=0))
    b.op("Concat", parts, out=0, axis=int(_attr(node, "axis")))


def _qlinear_global_average_pool(b: _Builder, node: Node) -> None:
    sx, zx, sy, zy = b.needs_const(1, 2, 3, 4)
    shape = b.shape(0)
    nhwc = bool(_attr(node, "channels_last", 0))
    if shape is None:
        raise UnsupportedError(f"{where(node)}: written with standard ops only with a known "
                               "input rank")
    rank = len(shape)
    axes = list(range(1, rank - 1)) if nhwc else list(range(2, rank))
    spatial = [shape[a] for a in axes]
    if not all(isinstance(d, int) for d in spatial):
        raise UnsupportedError(f"{where(node)}: written with standard ops only with known "
                               f"spatial sizes, got {shape}")
    n = int(np.prod(spatial)) if spatial else 1
    dt = _quant_dtype(node, 0, 2)
    lo, hi = mq.qrange(dt)
    zxi = 0 if zx is None else int(np.asarray(zx).reshape(()))
    zyi = 0 if zy is None else int(np.asarray(zy).reshape(()))
    scale = mq.div(np, np.float32(np.asarray(sx).reshape(())),
                   np.float32(np.asarray(sy).reshape(())) * np.float32(n))
    acc = b.op("ReduceSum", [b.op("Cast", [b.input(0)], to=TensorProto.INT32),
                             b.init(np.array(axes, np.int64))], keepdims=1)
    if zxi:
        acc = b.op("Sub", [acc, b.init(np.int32(zxi * n))])
    v = b.op("Round", [b.op("Mul", [b.op("Cast", [acc], to=TensorProto.FLOAT),
                                    b.init(np.float32(scale))])])
    v = b.op("Clip", [b.op("Add", [v, b.init(np.float32(zyi))]), b.init(np.float32(lo)),
                      b.init(np.float32(hi))])
    b.op("Cast", [v], out=0, to=helper.np_dtype_to_tensor_dtype(dt))


_POOL_ATTRS = ("auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
               "pads", "strides")


def _qlinear_average_pool(b: _Builder, node: Node) -> None:
    v = b.op("DequantizeLinear", [b.input(0), b.input(1), b.input(2)])
    nhwc = bool(_attr(node, "channels_last", 0))
    rank = len(b.shape(0)) if b.shape(0) is not None else None
    if nhwc and rank is None:
        raise UnsupportedError(f"{where(node)}: channels_last needs a known input rank")
    if nhwc:
        v = b.op("Transpose", [v], perm=[0, rank - 1] + list(range(1, rank - 1)))
    y = b.op("AveragePool", [v], **{k: _attr(node, k) for k in _POOL_ATTRS})
    if nhwc:
        y = b.op("Transpose", [y], perm=[0] + list(range(2, rank)) + [1])
    zy = b.input(4) or b.init(np.zeros((), _quant_dtype(node, 0, 2)))
    b.op("QuantizeLinear", [y, b.input(3), zy], out=0)


# ---------------------------------------------------------------------------- fused float ops


def _activation(b: _Builder, node: Node, x: str, conv: bool) -> None:
    name = _attr(node, "activation")
    if not name:
        b.op("Identity", [x], out=0)
        return
    if conv:
        p = list(_attr(node, "activation_params", []) or [])
        a = p[0] if p else None
        c = p[1] if len(p) > 1 else None
    else:
        a, c = _attr(node, "activation_alpha"), _attr(node, "activation_beta")
    g = _attr(node, "activation_gamma")
    if name in ("Relu", "Tanh", "Sigmoid", "Softplus", "Softsign"):
        b.op(name, [x], out=0)
    elif name in ("LeakyRelu", "Elu", "ThresholdedRelu"):
        b.op(name, [x], out=0, alpha=a)
    elif name == "HardSigmoid":
        b.op(name, [x], out=0, alpha=a, beta=c)
    elif name == "Selu":
        b.op(name, [x], out=0, alpha=a, gamma=g)
    elif name == "Clip" and conv:
        f32 = np.finfo(np.float32)
        b.op("Clip", [x, b.init(np.float32(f32.min if a is None else a)),
                      b.init(np.float32(f32.max if c is None else c))], out=0)
    elif name == "ScaledTanh" and not conv:
        t = b.op("Tanh", [b.op("Mul", [x, b.init(np.float32(1.0 if c is None else c))])])
        b.op("Mul", [t, b.init(np.float32(1.0 if a is None else a))], out=0)
    else:
        raise UnsupportedError(f"{where(node)}: activation '{name}' has no standard form here")


def _fused_matmul(b: _Builder, node: Node) -> None:
    ops = []
    for i, (t, tb) in enumerate((("transA", "transBatchA"), ("transB", "transBatchB"))):
        x = b.input(i)
        shape = b.shape(i)
        trans, batch = bool(_attr(node, t, 0)), bool(_attr(node, tb, 0))
        if (trans or batch) and shape is None:
            raise UnsupportedError(f"{where(node)}: {t}/{tb} need a known input rank")
        r = len(shape) if shape is not None else 0
        perm = list(range(r))
        if batch and r >= 3:
            perm = list(range(1, r - 1)) + [0, r - 1]
        if trans and r >= 2:
            perm[-1], perm[-2] = perm[-2], perm[-1]
        if perm != list(range(r)):
            x = b.op("Transpose", [x], perm=perm)
        ops.append(x)
    alpha = float(_attr(node, "alpha", 1.0))
    y = b.op("MatMul", ops, out=None if alpha != 1.0 else 0)
    if alpha != 1.0:
        b.op("Mul", [y, b.init(np.float32(alpha))], out=0)


def _fused_gemm(b: _Builder, node: Node) -> None:
    y = b.op("Gemm", [b.input(0), b.input(1), b.input(2)],
             **{k: _attr(node, k) for k in ("alpha", "beta", "transA", "transB")})
    _activation(b, node, y, conv=False)


_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _fused_conv(b: _Builder, node: Node) -> None:
    y = b.op("Conv", [b.input(0), b.input(1), b.input(2)],
             **{k: _attr(node, k) for k in _CONV_ATTRS})
    if b.input(3):
        y = b.op("Add", [y, b.input(3)])
    _activation(b, node, y, conv=True)


# ---------------------------------------------------------------------------- transformer ops


def _in_float(b: _Builder, x: str, dtype) -> str:
    """`x` as float32 when its type `dtype` is narrower (the kernels' work type)."""
    return b.op("Cast", [x], to=TensorProto.FLOAT) if np.dtype(dtype).itemsize < 4 else x


#: operators whose first output has the element type of their first input (how the type of
#: an input the file states no type for is found)
_SAME_TYPE = {"Add", "Sub", "Mul", "Div", "MatMul", "Relu", "Tanh", "Sigmoid", "Erf", "Gelu",
              "LayerNormalization", "SimplifiedLayerNormalization",
              "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "FastGelu",
              "BiasGelu", "QuickGelu", "BiasAdd", "Attention", "MultiHeadAttention",
              "Identity", "Transpose", "Reshape"}


def _input_dtype(node: Node, i: int = 0):
    """The element type of `node`'s input `i`: its type's, else followed back through the
    producers that keep their input's type (a decoder whose contrib ops' outputs the file
    gives no type); an `UnsupportedError` when it cannot be told."""
    v = node.inputs[i]
    for _ in range(10000):
        t = getattr(v, "type", None) if v is not None else None
        if getattr(t, "dtype", None) is not None:
            return np.dtype(t.dtype.numpy)
        p = v.producer if v is not None else None
        same = v.index == 0 or v.index == 3 and p is not None and \
            p.op_type in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
        if p is None or p.op_type not in _SAME_TYPE or not same or not p.inputs:
            break
        v = p.inputs[0]
    raise UnsupportedError(f"{where(node)}: the element type of input {i} is unknown")


def _quant_dtype(node: Node, i: int, zp: int):
    """The 8-bit type of `node`'s quantized input `i`: its type's, else that of its zero point
    `zp` (a constant of the same type, which a file always types), else `_input_dtype`'s."""
    z = node.inputs[zp] if zp < len(node.inputs) else None
    if getattr(node.inputs[i], "type", None) is None and z is not None and \
            getattr(z.type, "dtype", None) is not None:
        return np.dtype(z.type.dtype.numpy)
    return _input_dtype(node, i)


def _rms_or_layer_norm(b: _Builder, s: str, axes: str, eps: float, simplified: bool):
    """``(mean, inv_std_var, normalized)`` of float `s` over the axes tensor `axes`."""
    if simplified:
        d, mean = s, None
    else:
        mean = b.op("ReduceMean", [s, axes], keepdims=1)
        d = b.op("Sub", [s, mean])
    var = b.op("ReduceMean", [b.op("Mul", [d, d]), axes], keepdims=1)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, b.init(np.float32(eps))])])])
    return mean, inv, b.op("Mul", [d, inv])


def _skip_layer_norm(b: _Builder, node: Node, simplified: bool = False) -> None:
    """``Add`` input, skip (and bias) (output 3), then the normalization over the last axis
    (``ReduceMean``, ``Sub``, ``Mul``, ``Sqrt``, ``Reciprocal``), ``Mul`` gamma, ``Add`` beta;
    mean and inv_std_var as float32 outputs 1 and 2 (the mean zeros when `simplified`)."""
    dt = _input_dtype(node)
    beta = None if simplified else b.input(3)
    bias = b.input(3 if simplified else 4)
    n_out = len(node.outputs)
    s = b.op("Add", [_in_float(b, b.input(0), dt), _in_float(b, b.input(1), dt)])
    if bias:
        s = b.op("Add", [s, _in_float(b, bias, dt)])
    if n_out > 3:
        _cast_out(b, s, dt, 3)
    eps = float(_attr(node, "epsilon", mt.SKIP_NORM_EPSILON))
    mean, inv, y = _rms_or_layer_norm(b, s, b.init(np.array([-1], np.int64)), eps, simplified)
    y = b.op("Mul", [y, _in_float(b, b.input(2), dt)])
    if beta:
        y = b.op("Add", [y, _in_float(b, beta, dt)])
    if dt.itemsize < 4:
        y = b.op("Cast", [y], to=helper.np_dtype_to_tensor_dtype(dt))
    b.op("Identity", [y], out=0)
    if n_out > 1:
        if mean is None:
            zero = helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0])
            b.op("ConstantOfShape", [b.op("Shape", [inv])], out=1, value=zero)
        else:
            b.op("Identity", [mean], out=1)
    if n_out > 2:
        b.op("Identity", [inv], out=2)


def _embed_layer_norm(b: _Builder, node: Node) -> None:
    """``Gather`` of the word, position (``Range`` of the sequence length, or
    ``position_ids``) and segment rows, ``Add``, the layer normalization of
    `_rms_or_layer_norm`, ``Mul`` gamma, ``Add`` beta (output 0); ``mask_index`` as
    ``ReduceSum`` of ``Equal(mask, 1)`` per row, zeros without a mask; ``embedding_sum``."""
    dt = _input_dtype(node, 2)
    ids = b.input(0)
    if b.input(8):
        pos = b.input(8)
    else:  # (1, S): 0 .. S - 1
        seq = b.op("Squeeze", [_dim(b, ids, 1)])
        pos = b.op("Unsqueeze", [b.op("Range", [b.init(np.int32(0)),
                                                b.op("Cast", [seq], to=TensorProto.INT32),
                                                b.init(np.int32(1))]), _i64(b, 0)])
    e = b.op("Add", [_in_float(b, b.op("Gather", [b.input(2), ids], axis=0), dt),
                     _in_float(b, b.op("Gather", [b.input(3), pos], axis=0), dt)])
    if b.input(1) and b.input(4):
        e = b.op("Add", [e, _in_float(b, b.op("Gather", [b.input(4), b.input(1)], axis=0),
                                      dt)])
    eps = float(_attr(node, "epsilon", mt.SKIP_NORM_EPSILON))
    _, _, y = _rms_or_layer_norm(b, e, _i64(b, -1), eps, False)
    y = b.op("Add", [b.op("Mul", [y, _in_float(b, b.input(5), dt)]),
                     _in_float(b, b.input(6), dt)])
    _cast_out(b, y, dt, 0)
    n_out = len(node.outputs)
    if n_out > 1:
        if b.input(7):
            ones = b.op("Cast", [b.op("Equal", [b.input(7), b.init(np.int32(1))])],
                        to=TensorProto.INT32)
            b.op("ReduceSum", [ones, _i64(b, 1)], out=1, keepdims=0)
        else:
            b.op("ConstantOfShape", [_dim(b, ids, 0)], out=1,
                 value=helper.make_tensor("z", TensorProto.INT32, [1], [0]))
    if n_out > 2:
        _cast_out(b, e, dt, 2)


def _simplified_layer_norm(b: _Builder, node: Node) -> None:
    """RMS normalization over the axes from ``axis`` on, in float32 (``stash_type`` 1)."""
    dt = _input_dtype(node)
    axis = int(_attr(node, "axis", -1))
    if int(_attr(node, "stash_type", 1)) != 1:
        raise UnsupportedError(f"{where(node)}: written with standard ops only with "
                               "stash_type 1 (float32)")
    if axis < 0:
        axes = list(range(axis, 0))
    elif b.shape(0) is not None:
        axes = list(range(axis, len(b.shape(0))))
    else:
        raise UnsupportedError(f"{where(node)}: a non-negative axis needs a known input rank")
    eps = float(_attr(node, "epsilon", mt.SIMPLIFIED_NORM_EPSILON))
    x = b.op("Cast", [b.input(0)], to=TensorProto.FLOAT) if dt != np.float32 else b.input(0)
    _, inv, y = _rms_or_layer_norm(b, x, b.init(np.array(axes, np.int64)), eps, True)
    y = b.op("Mul", [y, b.op("Cast", [b.input(1)], to=TensorProto.FLOAT)])
    b.op("Cast", [y], out=0, to=helper.np_dtype_to_tensor_dtype(dt))
    if len(node.outputs) > 1:
        b.op("Identity", [inv], out=1)


def _gelu_of(b: _Builder, x: str, dt, out: int = 0) -> None:
    """``0.5 * x * (1 + Erf(x / sqrt(2)))``."""
    xf = _in_float(b, x, dt)
    e = b.op("Erf", [b.op("Mul", [xf, b.init(np.float32(1 / np.sqrt(2)))])])
    y = b.op("Mul", [b.op("Mul", [xf, b.init(np.float32(0.5))]),
                     b.op("Add", [e, b.init(np.float32(1))])])
    _cast_out(b, y, dt, out)


def _cast_out(b: _Builder, y: str, dt, out: int) -> None:
    if np.dtype(dt).itemsize < 4:
        b.op("Cast", [y], out=out, to=helper.np_dtype_to_tensor_dtype(dt))
    else:
        b.op("Identity", [y], out=out)


def _gelu(b: _Builder, node: Node) -> None:
    _gelu_of(b, b.input(0), _input_dtype(node))


def _bias_gelu(b: _Builder, node: Node) -> None:
    dt = _input_dtype(node)
    x = b.op("Add", [_in_float(b, b.input(0), dt), _in_float(b, b.input(1), dt)])
    _gelu_of(b, x, dt)  # (a second Cast of the float sum to float is the identity)


def _fast_gelu(b: _Builder, node: Node) -> None:
    """``0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`` of ``X (+ bias)``."""
    dt = _input_dtype(node)
    x = _in_float(b, b.input(0), dt)
    if b.input(1):
        x = b.op("Add", [x, _in_float(b, b.input(1), dt)])
    cube = b.op("Mul", [b.op("Mul", [x, x]), x])
    inner = b.op("Add", [x, b.op("Mul", [cube, b.init(np.float32(0.044715))])])
    t = b.op("Tanh", [b.op("Mul", [inner, b.init(np.float32(mt.SQRT_2_OVER_PI))])])
    y = b.op("Mul", [b.op("Mul", [x, b.init(np.float32(0.5))]),
                     b.op("Add", [t, b.init(np.float32(1))])])
    _cast_out(b, y, dt, 0)


def _quick_gelu(b: _Builder, node: Node) -> None:
    """``x * Sigmoid(alpha * x)``."""
    dt = _input_dtype(node)
    x = _in_float(b, b.input(0), dt)
    alpha = float(_attr(node, "alpha", mt.QUICK_GELU_ALPHA))
    y = b.op("Mul", [x, b.op("Sigmoid", [b.op("Mul", [x, b.init(np.float32(alpha))])])])
    _cast_out(b, y, dt, 0)


def _bias_add(b: _Builder, node: Node) -> None:
    b.op("Add", [b.op("Add", [b.input(0), b.input(1)]), b.input(2)], out=0)



def _i64(b: _Builder, *v: int) -> str:
    return b.init(np.array(v, np.int64))


def _dim(b: _Builder, x: str, i: int) -> str:
    """Dimension `i` of `x` as a 1-element int64 tensor."""
    return b.op("Gather", [b.op("Shape", [x]), _i64(b, i)], axis=0)


def _lengths_mask(b: _Builder, m: str, x: str, keys: str, zero: str, fv: str) -> str:
    """A 1-D ``mask_index`` whose form the sizes decide only at run time: its first ``B``
    entries are key lengths in every form ((B), (2B), (3B + 2)); entries ``B`` to ``2B`` are
    start positions only when it holds ``2B``."""
    m64 = b.op("Cast", [m], to=TensorProto.INT64)
    batch = _dim(b, x, 0)
    twice = b.op("Add", [batch, batch])
    ends = b.op("Unsqueeze", [b.op("Slice", [m64, _i64(b, 0), batch]), _i64(b, 1)])
    padded = b.op("Concat", [m64, b.op("Expand", [b.init(np.zeros(1, np.int64)), batch])],
                  axis=0)
    starts = b.op("Where", [b.op("Equal", [_dim(b, m, 0), twice]),
                            b.op("Slice", [padded, batch, twice]), b.init(np.int64(0))])
    keep = b.op("And", [b.op("Less", [keys, ends]),
                        b.op("GreaterOrEqual", [keys, b.op("Unsqueeze", [starts, _i64(b, 1)])])])
    return b.op("Unsqueeze", [b.op("Where", [keep, zero, fv]), _i64(b, 1, 2)])


def _attention_mask(b: _Builder, node: Node, k: str, x: str, fill: float, mi: int = 3):
    """The additive mask ``(B, 1, S, T)`` (or ``(1, 1, S, T)``) as the semantics builds it:
    ``Where`` over the raw mask or over key positions against lengths; the causal part from
    ``Range``s of the query and key positions."""
    add = None
    zero, fv = b.init(np.float32(0)), b.init(np.float32(fill))
    t_len = _dim(b, k, 2)
    keys = b.op("Range", [b.init(np.int64(0)), b.op("Squeeze", [t_len]), b.init(np.int64(1))])
    if b.input(mi):
        shape, xs = b.shape(mi), b.shape(0)
        batch = xs[0] if xs is not None else None
        m = b.input(mi)
        if shape is not None and len(shape) == 2:
            add = b.op("Unsqueeze", [b.op("Where", [b.op("Greater", [m, b.init(np.int32(0))]),
                                                     zero, fv]), _i64(b, 1, 2)])
        elif shape is not None and len(shape) == 3:
            add = b.op("Unsqueeze", [b.op("Where", [b.op("Greater", [m, b.init(np.int32(0))]),
                                                     zero, fv]), _i64(b, 1)])
        elif shape is not None and len(shape) == 1 and (
                batch is not None and shape[0] == batch or isinstance(batch, int) and
                shape[0] in (2 * batch, 3 * batch + 2)):
            # key lengths (B): also where B is one named dimension of both inputs
            m64 = b.op("Cast", [m], to=TensorProto.INT64)
            ends = b.op("Unsqueeze", [m64 if shape[0] == batch else
                                      b.op("Slice", [m64, _i64(b, 0), _i64(b, batch)]),
                                      _i64(b, 1)])
            keep = b.op("Less", [keys, ends])
            if shape[0] == 2 * batch:
                starts = b.op("Unsqueeze", [b.op("Slice", [m64, _i64(b, batch),
                                                           _i64(b, 2 * batch)]), _i64(b, 1)])
                keep = b.op("And", [keep, b.op("GreaterOrEqual", [keys, starts])])
            add = b.op("Unsqueeze", [b.op("Where", [keep, zero, fv]), _i64(b, 1, 2)])
        elif shape is not None and len(shape) == 1:
            add = _lengths_mask(b, m, x, keys, zero, fv)
        else:
            raise UnsupportedError(f"{where(node)}: written with standard ops only with a "
                                   f"mask_index of known shape (B, T), (B, S, T), (B), (2B) or "
                                   f"(3B + 2), "
                                   f"got {shape}")
    if _attr(node, "unidirectional", 0):
        s_len = _dim(b, x, 1)
        past = b.op("Sub", [t_len, s_len])
        queries = b.op("Range", [b.init(np.int64(0)), b.op("Squeeze", [s_len]),
                                 b.init(np.int64(1))])
        limit = b.op("Unsqueeze", [b.op("Add", [queries, past]), _i64(b, 1)])
        future = b.op("Greater", [keys, limit])
        base = add or zero
        add = b.op("Where", [future, b.init(np.float32(np.finfo(np.float32).min)), base])
    return add


def _attention(b: _Builder, node: Node) -> None:
    """``MatMul`` + ``Add`` (the merged projection), ``Slice`` Q, K, V, ``Reshape`` and
    ``Transpose`` to heads, ``Concat`` after the past, ``MatMul``, ``Mul`` scale, the mask
    (``Where``), ``Softmax``, ``MatMul``, ``Transpose``, ``Reshape``."""
    for name in ("do_rotary", "past_present_share_buffer"):
        if _attr(node, name, 0):
            raise UnsupportedError(f"{where(node)}: attribute {name} is not supported")
    dt = _input_dtype(node) if b.input(0) else None
    if b.input(6) or dt not in (np.float32, np.float16):
        raise UnsupportedError(f"{where(node)}: written with standard ops only in float32 or "
                               "float16 without past_sequence_length")
    n = int(_attr(node, "num_heads"))
    wshape = b.shape(1)
    sizes = _attr(node, "qkv_hidden_sizes")
    if not sizes:
        if wshape is None or not isinstance(wshape[1], int):
            raise UnsupportedError(f"{where(node)}: written with standard ops only with "
                                   "known weight shapes or qkv_hidden_sizes")
        sizes = [wshape[1] // 3] * 3
    hq, hk, hv = (int(v) for v in sizes)
    # float16 is computed in float32 and cast back, as ONNX Runtime's CPU kernel is run
    x = _in_float(b, b.input(0), dt)
    qkv = b.op("MatMul", [x, _in_float(b, b.input(1), dt)])
    if b.input(2):
        qkv = b.op("Add", [qkv, _in_float(b, b.input(2), dt)])

    def heads(lo: int, hi: int) -> str:
        part = b.op("Slice", [qkv, _i64(b, lo), _i64(b, hi), _i64(b, 2)])
        r = b.op("Reshape", [part, _i64(b, 0, 0, n, (hi - lo) // n)])
        return b.op("Transpose", [r], perm=[0, 2, 1, 3])

    q, k, v = heads(0, hq), heads(hq, hq + hk), heads(hq + hk, hq + hk + hv)
    if b.input(4):
        past = _in_float(b, b.input(4), dt)
        pk = b.op("Gather", [past, b.init(np.int64(0))], axis=0)
        pv = b.op("Gather", [past, b.init(np.int64(1))], axis=0)
        k = b.op("Concat", [pk, k], axis=2)
        v = b.op("Concat", [pv, v], axis=2)
    scale = float(_attr(node, "scale", 0.0)) or 1.0 / np.sqrt(hq // n)
    scores = b.op("Mul", [b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                          b.init(np.float32(scale))])
    fill = float(_attr(node, "mask_filter_value", mt.MASK_FILTER_VALUE))
    add = _attention_mask(b, node, k, x, fill)
    if add:
        scores = b.op("Add", [scores, add])
    if b.input(5):
        scores = b.op("Add", [scores, _in_float(b, b.input(5), dt)])
    out = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
    _cast_out(b, b.op("Reshape", [b.op("Transpose", [out], perm=[0, 2, 1, 3]),
                                  _i64(b, 0, 0, hv)]), dt, 0)
    if len(node.outputs) > 1:
        _cast_out(b, b.op("Concat", [b.op("Unsqueeze", [k, _i64(b, 0)]),
                                     b.op("Unsqueeze", [v, _i64(b, 0)])], axis=0), dt, 1)


def _multi_head_attention(b: _Builder, node: Node) -> None:
    """The forms `ms_transformer.multi_head_attention_node` takes: ``Reshape`` / ``Transpose``
    of Q (and of 3-D K, V, after their ``bias`` slices, ``Concat`` after the pasts), then as
    `_attention`; the presents are the keys and values attended to."""
    if b.input(8) or b.input(9) or len(node.outputs) > 3 or \
            _input_dtype(node) != np.float32:
        raise UnsupportedError(f"{where(node)}: written with standard ops only in float32 "
                               "without past_sequence_length, cache_indirection or qk")
    n = int(_attr(node, "num_heads"))
    qs, ks, vs = b.shape(0), (b.shape(1) if b.input(1) else None), \
        (b.shape(2) if b.input(2) else None)
    if qs is None or len(qs) != 3 or not isinstance(qs[2], int) or ks is None or \
            vs is None or len(ks) != len(vs) or len(ks) not in (3, 4):
        raise UnsupportedError(f"{where(node)}: written with standard ops only for a query "
                               "(B, S, D) of known D and key / value of known rank 3 or 4")
    d = qs[2]
    q, k, v = b.input(0), b.input(1), b.input(2)
    bias = b.input(3)
    if bias:
        q = b.op("Add", [q, b.op("Slice", [bias, _i64(b, 0), _i64(b, d)])])

    def heads(t: str) -> str:
        return b.op("Transpose", [b.op("Reshape", [t, _i64(b, 0, 0, n, -1)])],
                    perm=[0, 2, 1, 3])

    qh = heads(q)
    if len(ks) == 3:
        if bias:
            k = b.op("Add", [k, b.op("Slice", [bias, _i64(b, d), _i64(b, 2 * d)])])
            v = b.op("Add", [v, b.op("Slice", [bias, _i64(b, 2 * d), _i64(b, 1 << 62)])])
        k, v = heads(k), heads(v)
        if b.input(6) and b.input(7):
            k = b.op("Concat", [b.input(6), k], axis=2)
            v = b.op("Concat", [b.input(7), v], axis=2)
    scale = float(_attr(node, "scale", 0.0)) or 1.0 / np.sqrt(d // n)
    scores = b.op("Mul", [b.op("MatMul", [qh, b.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                          b.init(np.float32(scale))])
    fill = float(_attr(node, "mask_filter_value", mt.MASK_FILTER_VALUE))
    add = _attention_mask(b, node, k, b.input(0), fill, mi=4)
    if add:
        scores = b.op("Add", [scores, add])
    if b.input(5):
        scores = b.op("Add", [scores, b.input(5)])
    out = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
    b.op("Reshape", [b.op("Transpose", [out], perm=[0, 2, 1, 3]), _i64(b, 0, 0, -1)], out=0)
    for i, t in ((1, k), (2, v)):
        if i < len(node.outputs) and node.outputs[i] is not None:
            b.op("Identity", [t], out=i)


_BUILDERS: dict[str, Callable[[_Builder, Node], None]] = {
    "QuantizeLinear": _quantize_linear,
    "DequantizeLinear": _quantize_linear,
    "DynamicQuantizeMatMul": _dynamic_quantize_matmul,
    "MatMulIntegerToFloat": _matmul_integer_to_float,
    "QGemm": _qgemm,
    "QLinearSigmoid": _lookup,
    "QLinearLeakyRelu": _lookup,
    "QLinearSoftmax": lambda b, node: qlinear_softmax(b, node, _quant_dtype(node, 0, 2)),
    "QLinearAdd": _binary,
    "QLinearMul": _binary,
    "QLinearConcat": _qlinear_concat,
    "QLinearGlobalAveragePool": _qlinear_global_average_pool,
    "QLinearAveragePool": _qlinear_average_pool,
    "FusedMatMul": _fused_matmul,
    "FusedGemm": _fused_gemm,
    "FusedConv": _fused_conv,
    "DynamicQuantizeLSTM": lambda b, node: _dq_lstm(b, node),
    "SkipLayerNormalization": _skip_layer_norm,
    "SkipSimplifiedLayerNormalization": lambda b, node: _skip_layer_norm(b, node, True),
    "Gelu": _gelu,
    "BiasGelu": _bias_gelu,
    "FastGelu": _fast_gelu,
    "QuickGelu": _quick_gelu,
    "BiasAdd": _bias_add,
    "Attention": _attention,
    "MultiHeadAttention": _multi_head_attention,
    "EmbedLayerNormalization": _embed_layer_norm,
    "MatMulNBits": _matmul_nbits,
}

# ONNX Runtime's operators of the standard domain that ONNX itself does not define.
_STANDARD_BUILDERS: dict[str, Callable[[_Builder, Node], None]] = {
    "SimplifiedLayerNormalization": _simplified_layer_norm,
}


def expansion(node: Node) -> Graph | None:
    """`node` (domain ``com.microsoft``) as standard ONNX nodes, or None if not covered."""
    b = _built(node)
    return None if b is None else b.graph()


def expansion_model(node: Node) -> onnx.ModelProto | None:
    """The same as an ONNX model (inputs ``in<i>``, outputs ``out<k>``)."""
    b = _built(node)
    return None if b is None else b.model()


def _built(node: Node) -> _Builder | None:
    if node.domain == DOMAIN:
        build = _BUILDERS.get(node.op_type)
    elif node.domain in ("", "ai.onnx"):
        build = _STANDARD_BUILDERS.get(node.op_type)
    else:
        return None
    if build is None:
        return None
    b = _Builder(node)
    build(b, node)
    return b


# ---------------------------------------------------------------------------- DynamicQuantizeLSTM

def standard_activations(node: Node, names: list[str]) -> list[str]:
    """`names`, when each is an activation the standard ops spell
    (`semantics.recurrent.ACTIVATION_OPS`)."""
    for a in names:
        if a not in recurrent.ACTIVATION_OPS:
            raise UnsupportedError(f"{where(node)}: activation '{a}' is not written with "
                                   "standard ops (Sigmoid, Tanh, Relu)")
    return names


def _qproduct(b: _Builder, x: str, w: str, scale: str, zp: str) -> str:
    """``float((q(x) - zx) @ (w - zp)) * (sx * scale)`` with `x` dynamically quantized."""
    q = b.op("DynamicQuantizeLinear", [x])
    b.nodes[-1].output[:] = [q, q + "_s", q + "_z"]
    acc = b.op("MatMulInteger", [q, w, q + "_z", zp])
    return b.op("Mul", [b.op("Cast", [acc], to=TensorProto.FLOAT),
                        b.op("Mul", [q + "_s", scale])])


def _per_dir(b: _Builder, i: int, d: int, first: bool) -> str:
    """Direction `d`'s row of the constant ``[dirs]`` / ``[dirs, 4H]`` parameter input `i`
    (`first`: its first entry, as ONNX Runtime reads a zero point)."""
    (v,) = b.needs_const(i)
    row = v.reshape(v.shape[0], -1)[d]
    return b.init(row[0] if first else row)


def _reverse(b: _Builder, x: str) -> str:
    return b.op("Slice", [x, b.init(np.array([-1], np.int64)),
                          b.init(np.array([np.iinfo(np.int64).min], np.int64)),
                          b.init(np.array([0], np.int64)), b.init(np.array([-1], np.int64))])


def _dq_lstm(b: _Builder, node: Node) -> None:
    H = _attr(node, "hidden_size")
    direction = _attr(node, "direction", "forward")
    if H is None:
        raise UnsupportedError(f"{where(node)}: written with standard ops only with a "
                               "hidden_size attribute")
    if b.input(4) is not None:
        raise UnsupportedError(f"{where(node)}: sequence_lens is not written with standard ops")
    H = int(H)
    dirs = 2 if direction == "bidirectional" else 1
    given = _attr(node, "activations")
    names = standard_activations(node, recurrent.activation_names(given, "LSTM", dirs))
    clip = _attr(node, "clip")
    couple = bool(_attr(node, "input_forget", 0))
    x = b.input(0)
    xs = b.op("Shape", [x])
    seq = b.op("Slice", [xs, b.init(np.array([0], np.int64)), b.init(np.array([1], np.int64))])
    batch = b.op("Slice", [xs, b.init(np.array([1], np.int64)),
                           b.init(np.array([2], np.int64))])
    state_shape = b.op("Concat", [batch, b.init(np.array([H], np.int64))], axis=0)
    xw_shape = b.op("Concat", [seq, batch, b.init(np.array([4 * H], np.int64))], axis=0)
    ys, hs, cs = [], [], []
    for di in range(dirs):
        d = b.init(np.int64(di))
        reverse = direction == "reverse" or di == 1
        xd = _reverse(b, x) if reverse else x
        w, r = b.needs_const(1, 2)
        xw = _qproduct(b, b.op("Flatten", [xd], axis=2), b.init(w[di]),
                       _per_dir(b, 8, di, False), _per_dir(b, 9, di, True))
        xw = b.op("Reshape", [xw, xw_shape])
        bias = None
        if b.input(3):
            bd = b.op("Gather", [b.input(3), d], axis=0)
            bias = b.op("Add", [
                b.op("Slice", [bd, b.init(np.array([0], np.int64)),
                               b.init(np.array([4 * H], np.int64))]),
                b.op("Slice", [bd, b.init(np.array([4 * H], np.int64)),
                               b.init(np.array([8 * H], np.int64))])])
        init = []
        for i in (5, 6):
            init.append(b.op("Gather", [b.input(i), d], axis=0) if b.input(i) else
                        b.op("ConstantOfShape", [state_shape],
                             value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0])))
        peep = b.op("Gather", [b.input(7), d], axis=0) if b.input(7) else None
        r_d, rs, rz = b.init(r[di]), _per_dir(b, 10, di, False), _per_dir(b, 11, di, True)
        body = lstm_body(b, lambda s, h, r_d=r_d, rs=rs, rz=rz: _qproduct(s, h, r_d, rs, rz),
                         bias, peep, H, names[3 * di:3 * di + 3], clip, couple)
        hn, cn, y = b.fresh(), b.fresh(), b.fresh()
        b.nodes.append(helper.make_node("Scan", [*init, xw], [hn, cn, y], body=body,
                                        num_scan_inputs=1))
        ys.append(_reverse(b, y) if reverse else y)
        hs.append(hn)
        cs.append(cn)
    zero, one = b.init(np.array([0], np.int64)), b.init(np.array([1], np.int64))
    outs = [[b.op("Unsqueeze", [y, one]) for y in ys],
            [b.op("Unsqueeze", [h, zero]) for h in hs],
            [b.op("Unsqueeze", [c, zero]) for c in cs]]
    for k in range(len(node.outputs)):
        if node.outputs[k] is not None:
            b.op("Concat", outs[k], out=k, axis=1 if k == 0 else 0)


def masked_step(s: _Builder, ins: list, h2: str) -> tuple[str, str]:
    """A step body's mask: adds the bool input ``m_t [batch]`` to `ins`; returns the mask
    ``[batch, 1]`` and the step's output, `h2` zeroed in the rows that take no step (selected,
    not multiplied: a row past its length that computed NaN or inf still outputs 0, as in
    ONNX Runtime)."""
    m_t = s.fresh()
    ins.append(helper.make_tensor_value_info(m_t, TensorProto.BOOL, None))
    m = s.op("Unsqueeze", [m_t, s.init(np.array([1], np.int64))])
    return m, s.op("Where", [m, h2, s.init(np.array(0, np.float32))])


def hidden_and_direction(node) -> tuple[int, str, int]:
    """An RNN node's ``(hidden_size, direction, number of directions)``; the hidden size
    must be given for a standard-ops form."""
    H = _attr(node, "hidden_size")
    if H is None:
        raise UnsupportedError(f"{where(node)}: written with standard ops only with a "
                               "hidden_size attribute")
    direction = _attr(node, "direction", "forward")
    return int(H), direction, 2 if direction == "bidirectional" else 1


def lstm_body(b: _Builder, rec: Callable[[_Builder, str], str], bias, peep,
              H: int, acts: list[str], clip, couple: bool,
              masked: bool = False) -> onnx.GraphProto:
    """The Scan body of one LSTM direction: ``(h, c, xw_t) -> (h', c', h')``; `rec(s, h)`
    writes the recurrent product ``[batch, 4H]`` into the body builder `s`; gates i, o, f, c,
    peepholes i, o, f. `masked`: a fourth scanned input, ``[batch]`` bool, says which rows
    take this step (ONNX ``sequence_lens``): the others keep ``h, c`` and output zeros."""
    s = b.sub()
    h, c, xw_t = (s.fresh() for _ in range(3))
    g = s.op("Add", [xw_t, rec(s, h)])
    if bias:
        g = s.op("Add", [g, bias])
    parts = [s.fresh() for _ in range(4)]
    s.nodes.append(helper.make_node("Split", [g], parts, axis=1, num_outputs=4))
    gi, go, gf, gc = parts
    pi = po = pf = None
    if peep:
        pp = [s.fresh() for _ in range(3)]
        s.nodes.append(helper.make_node("Split", [peep], pp, axis=0, num_outputs=3))
        pi, po, pf = pp
        gi = s.op("Add", [gi, s.op("Mul", [pi, c])])
        gf = s.op("Add", [gf, s.op("Mul", [pf, c])])

    def act(k: int, v: str) -> str:
        if clip is not None:
            v = s.op("Clip", [v, s.init(np.float32(-clip)), s.init(np.float32(clip))])
        return s.op(recurrent.ACTIVATION_OPS[acts[k]], [v])

    i = act(0, gi)
    fg = s.op("Sub", [s.init(np.float32(1)), i]) if couple else act(0, gf)
    c2 = s.op("Add", [s.op("Mul", [fg, c]), s.op("Mul", [i, act(1, gc)])])
    if po:
        go = s.op("Add", [go, s.op("Mul", [po, c2])])
    h2 = s.op("Mul", [act(0, go), act(2, c2)])
    h_out = s.op("Identity", [h2])
    ins = [helper.make_tensor_value_info(h, TensorProto.FLOAT, None),
           helper.make_tensor_value_info(c, TensorProto.FLOAT, None),
           helper.make_tensor_value_info(xw_t, TensorProto.FLOAT, None)]
    if masked:
        m, h_out = masked_step(s, ins, h2)
        h2 = s.op("Where", [m, h2, h])
        c2 = s.op("Where", [m, c2, c])
    outs = [helper.make_tensor_value_info(h2, TensorProto.FLOAT, None),
            helper.make_tensor_value_info(c2, TensorProto.FLOAT, None),
            helper.make_tensor_value_info(h_out, TensorProto.FLOAT, None)]
    return helper.make_graph(s.nodes, "lstm_step", ins, outs)
