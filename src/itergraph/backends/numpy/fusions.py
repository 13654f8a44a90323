"""Pairs of nodes the NumPy planner runs as one kernel, as ONNX Runtime's graph optimizer
does at its basic level: the second node's constant work is folded into the first's
constants once, when the plan is compiled.

    Conv(x, W, B) -> BatchNormalization(scale, bias, mean, var)   (inference, one output)
        == Conv(x, W * a, B * a + c)   with  a = scale / sqrt(var + eps),  c = bias - mean * a

(per output channel); likewise the Mul, Add and Sub by one constant per output channel that
follow a Conv (or its BatchNormalization), as PaddlePaddle exports a batch norm. A pair is
fused only when every constant is known when compiling,
the first node's output is read by the second alone and is no output of the plan; the
fused kernel computes the second node's outputs and is reported under the first node's name.
The folded form rounds once where the pair rounds twice (about one float32 ulp of the
result).

Also fused: an arithmetic node and the element-wise node reading its result, the second
computed in place (`inplace`; no folding, the same results).

`fusion_for(node, consumer, known)` returns ``(kernel, inputs)`` -- the kernel to call on
`inputs` in place of both nodes -- or None.

Longer chains: `chain_for(node, readers, known, make)` returns ``(kernel, inputs, nodes)``,
the kernel computing the last of `nodes` (the nodes after `node` it absorbs, in plan
order), or None: a squeeze-and-excitation block (`squeeze_excite`); a Conv (or the pair
Conv + BatchNormalization), or an integer product handed on as float (`integer_chains`),
and the activation computed in its output (`epilogues`); else a pair.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ir.attributes import attr_or_default
from .epilogues import epilogue
from .inplace import inplace_pair
from .integer_chains import integer_chain
from .kernels.conv_nd import conv_kernel
from .kernels.norm import inference_affine, is_inference
from .squeeze_excite import se_chain

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _conv_constants(conv: Node, known: Callable) -> tuple | None:
    """A Conv's weights and bias (None: none) when known when compiling and foldable."""
    w = known(conv.inputs[1])
    b = known(conv.inputs[2]) if len(conv.inputs) > 2 else None
    if (not isinstance(w, np.ndarray) or w.dtype not in _FLOATS or w.ndim < 3
            or not (b is None or (isinstance(b, np.ndarray) and b.shape == (w.shape[0],)))):
        return None
    return w, b


def _per_channel(c, w: np.ndarray) -> np.ndarray | None:
    """Constant `c` as one value per output channel of a Conv with weights `w` (``[M]``),
    when it broadcasts against the Conv's output ``[N, M, *spatial]`` as such: one value, or
    ``[M, 1, ..]`` / ``[1, M, 1, ..]`` with a 1 per spatial axis."""
    m, n = w.shape[0], w.ndim - 2
    if not isinstance(c, np.ndarray) or c.dtype != w.dtype:
        return None
    if c.size == 1 and c.ndim <= n + 2:
        return np.full(m, c.reshape(()), w.dtype)
    if c.ndim in (n + 1, n + 2) and c.shape[-n - 1:] == (m,) + (1,) * n and c.size == m:
        return c.reshape(m)
    return None


def _affine(node: Node, t, w: np.ndarray, known: Callable) -> tuple | None:
    """`node` reading the Conv output `t` as ``t * a + c`` per output channel, ``(a, c)``
    (either None: 1 or 0); None when it is not one."""
    if node.domain != "" or len(node.outputs) != 1:
        return None
    if node.op_type == "BatchNormalization":
        params = [known(v) for v in node.inputs[1:5]]
        m = w.shape[0]
        if (node.inputs[0] is not t or len(params) != 4 or not is_inference(node)
                or not all(isinstance(p, np.ndarray) and p.shape == (m,)
                           and p.dtype == w.dtype for p in params)):
            return None
        return inference_affine(*params, float(attr_or_default(node, "epsilon")), w.dtype)
    if (node.op_type not in ("Mul", "Add", "Sub") or len(node.inputs) != 2
            or sum(v is t for v in node.inputs) != 1
            or (node.op_type == "Sub" and node.inputs[0] is not t)):
        return None
    vec = _per_channel(known(node.inputs[1] if node.inputs[0] is t else node.inputs[0]), w)
    if vec is None:
        return None
    return {"Mul": (vec, None), "Add": (None, vec), "Sub": (None, -vec)}[node.op_type]


def _conv_affine(conv: Node, sole_reader: Callable, known: Callable) -> tuple | None:
    """The Conv and the per-channel affine nodes after it (inference BatchNormalization;
    Mul, Add, Sub by one value per channel), folded: ``(kernel, inputs, nodes)``."""
    consts = _conv_constants(conv, known)
    if consts is None:
        return None
    w, b = consts
    shape = (w.shape[0],) + (1,) * (w.ndim - 1)
    nodes: list[Node] = []
    while (user := sole_reader((nodes[-1] if nodes else conv).outputs[0])) is not None:
        ac = _affine(user, (nodes[-1] if nodes else conv).outputs[0], w, known)
        if ac is None:
            break
        a, c = ac
        if a is not None:
            w = w * a.reshape(shape)
            b = None if b is None else b * a
        if c is not None:
            b = c if b is None else b + c
        nodes.append(user)
    if not nodes:
        return None
    fn = conv_kernel(conv, w)

    def fused(x):
        return fn(x, w, b)

    return fused, [conv.inputs[0]], nodes


def _conv_batch_norm(conv: Node, bn: Node, known: Callable) -> tuple | None:
    """Conv -> BatchNormalization alone (see `_conv_affine`)."""
    chain = _conv_affine(conv, lambda v: bn if v is conv.outputs[0] else None, known)
    return None if chain is None else chain[:2]


_PAIRS = {("Conv", "BatchNormalization"): _conv_batch_norm}
_PAIRS.update({(a, b): inplace_pair for a in ("Add", "Sub", "Mul", "Div")
               for b in ("Add", "Sub", "Mul", "Div", "Clip")})


def fusion_for(node: Node, consumer: Node, known: Callable) -> tuple | None:
    """The kernel running `node` and its output's only reader `consumer` as one, with the
    values it reads; None when the pair does not fuse (see module docstring)."""
    rule = _PAIRS.get((node.op_type, consumer.op_type))
    if rule is None or node.domain != "" or consumer.domain != "" or node.subgraphs():
        return None
    return rule(node, consumer, known)


def chain_for(node: Node, readers: Callable, known: Callable,
              make: Callable) -> tuple | None:
    """The kernel running `node` and the nodes after it that only its result feeds, with
    the values it reads and the absorbed nodes (see module docstring); None: no fusion.
    `readers(v)` lists the nodes reading `v`, None when `v` is an output of the plan;
    `make(node)` is the node's own kernel."""
    if node.domain != "" or node.subgraphs() or len(node.outputs) != 1:
        return None

    def sole_reader(v):
        users = readers(v)
        return users[0] if users and len(users) == 1 else None

    if node.op_type == "GlobalAveragePool":
        return se_chain(node, sole_reader, known, make)
    if node.op_type in ("ConvInteger", "MatMulInteger"):
        chain = integer_chain(node, sole_reader, make)
        if chain is None:
            return None
    elif node.op_type != "Conv":
        consumer = sole_reader(node.outputs[0])
        fused = None if consumer is None else fusion_for(node, consumer, known)
        return None if fused is None else (*fused, [consumer])
    else:
        chain = _conv_affine(node, sole_reader, known)
    head, reads, nodes = chain or (make(node), list(node.inputs), [])
    tail = epilogue(nodes[-1] if nodes else node, readers, known, make)
    if tail is None:
        return chain
    step = tail[0]

    def conv_then(*args):
        return step(head(*args))

    return conv_then, reads, nodes + tail[1]
