"""Pairs of nodes the NumPy planner runs as one kernel, as ONNX Runtime's graph optimizer
does at its basic level: the second node's constant work is folded into the first's
constants once, when the plan is compiled.

    Conv(x, W, B) -> BatchNormalization(scale, bias, mean, var)   (inference, one output)
        == Conv(x, W * a, B * a + c)   with  a = scale / sqrt(var + eps),  c = bias - mean * a

(per output channel). A pair is fused only when every constant is known when compiling,
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
Conv + BatchNormalization) and the activation computed in its output (`epilogues`); else a
pair.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ir.attributes import attr
from .epilogues import epilogue
from .inplace import inplace_pair
from .kernels.conv_nd import conv_kernel
from .kernels.norm import inference_affine, is_inference
from .squeeze_excite import se_chain

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _conv_batch_norm(conv: Node, bn: Node, known: Callable) -> tuple | None:
    w = known(conv.inputs[1])
    b = known(conv.inputs[2]) if len(conv.inputs) > 2 else None
    params = [known(v) for v in bn.inputs[1:5]]
    if (len(bn.outputs) != 1 or len(params) != 4 or not is_inference(bn)
            or not isinstance(w, np.ndarray) or w.dtype not in _FLOATS or w.ndim < 3
            or not (b is None or isinstance(b, np.ndarray))):
        return None
    m = w.shape[0]
    if not all(isinstance(p, np.ndarray) and p.shape == (m,) and p.dtype == w.dtype
               for p in params) or (b is not None and b.shape != (m,)):
        return None
    a, c = inference_affine(*params, float(attr(bn, "epsilon", 1e-5)), w.dtype)
    weights = w * a.reshape((m,) + (1,) * (w.ndim - 1))
    bias = c if b is None else b * a + c
    fn = conv_kernel(conv, weights)

    def fused(x):
        return fn(x, weights, bias)

    return fused, [conv.inputs[0]]


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
    consumer = sole_reader(node.outputs[0])
    fused = None if consumer is None else fusion_for(node, consumer, known)
    chain = None if fused is None else (*fused, [consumer])
    if node.op_type != "Conv":
        return chain
    head, reads, nodes = chain or (make(node), list(node.inputs), [])
    tail = epilogue(nodes[-1] if nodes else node, readers, known, make)
    if tail is None:
        return chain
    step = tail[0]

    def conv_then(*args):
        return step(head(*args))

    return conv_then, reads, nodes + tail[1]
