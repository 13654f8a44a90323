"""Activations the NumPy planner computes in the array a convolution has just returned
(`fusions.chain_for`), as ONNX Runtime fuses them into its Conv:

- ``Relu`` or ``HardSigmoid`` reading the output alone (``HardSwish`` too, by its own
  kernel: it needs the output and one array more);
- the hard-swish as exporters write it out, ``Div(Mul(t, Clip(Add(t, 3), 0, 6)), 6)``
  (PaddlePaddle's PP-OCR models), the four nodes reading ``t`` twice;
- the swish (SiLU) written out, ``Mul(t, Sigmoid(t))`` (YOLOv8), the product computed into
  the sigmoid's new array.

A Conv's kernel always returns a new array, which nothing else reads: the activation
overwrites it instead of allocating its own, with the same operations in the same order as
the nodes' own kernels (bitwise the same results). An output of a type the in-place form
does not cover (not floating, constants of another type) runs through the nodes' own
kernels.

`epilogue(node, readers, known, make)` returns ``(step, nodes)``: ``step(t)`` computes, from
`node`'s output ``t``, the output of the last of `nodes` (the nodes it absorbs, in plan
order); or None. `readers(v)` lists the nodes reading `v` (None when `v` is an output of the
plan), `known(v)` is `v`'s value when compiling or the planner's marker, `make(node)` the
node's own kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ir.attributes import attr
from .kernels.elementwise import clip


def epilogue(node: Node, readers: Callable, known: Callable, make: Callable) -> tuple | None:
    t = node.outputs[0]
    users = readers(t)
    if not users or any(u.domain != "" or u.subgraphs() or len(u.outputs) != 1
                        for u in users):
        return None
    if len(users) == 1:
        return _activation(users[0], t, make)
    if len(users) == 2:
        return (_hard_swish_written_out(t, users, readers, known, make)
                or _swish_written_out(t, users, readers, make))
    return None


def _activation(user: Node, t, make: Callable) -> tuple | None:
    """Relu or HardSigmoid of `t` alone, in place (float16/32/64; else the node's kernel);
    HardSwish, which needs ``t`` and one array more, by its kernel."""
    if len(user.inputs) != 1 or user.inputs[0] is not t or user.op_type not in (
            "Relu", "HardSigmoid", "HardSwish"):
        return None
    plain = make(user)
    if user.op_type == "HardSwish":
        return plain, [user]
    if user.op_type == "Relu":
        def relu(y):
            return np.maximum(y, 0, out=y) if y.dtype.kind == "f" else plain(y)

        return relu, [user]
    alpha = float(attr(user, "alpha", 0.2))
    beta = float(attr(user, "beta", 0.5))

    def hard_sigmoid(y):  # as the kernel: alpha * y, then + beta and the clip in place
        if y.dtype.kind != "f":
            return plain(y)
        y *= alpha
        y += beta
        return y.clip(0, 1, out=y)

    return hard_sigmoid, [user]


def _scalar(known: Callable, v) -> np.ndarray | None:
    c = known(v) if v is not None else None
    return c if isinstance(c, np.ndarray) and c.size == 1 and c.dtype.kind == "f" else None


def _other(node: Node, v):
    """`node`'s other operand than `v` (binary nodes reading `v` once), else None."""
    if len(node.inputs) != 2 or sum(u is v for u in node.inputs) != 1:
        return None
    return node.inputs[1] if node.inputs[0] is v else node.inputs[0]


def _hard_swish_written_out(t, users, readers, known, make) -> tuple | None:
    """``Div(Mul(t, Clip(Add(t, 3), lo, hi)), d)`` with constant operands of one value."""
    add = next((u for u in users if u.op_type == "Add"), None)
    mul = next((u for u in users if u.op_type == "Mul"), None)
    if add is None or mul is None:
        return None
    shift = _scalar(known, _other(add, t))
    after_add = readers(add.outputs[0])
    clip_node = after_add[0] if after_add and len(after_add) == 1 else None
    if (shift is None or clip_node is None or clip_node.op_type != "Clip"
            or clip_node.inputs[0] is not add.outputs[0]
            or _other(mul, t) is not clip_node.outputs[0]):
        return None
    bounds = [_scalar(known, v) for v in clip_node.inputs[1:3]]
    after_mul = readers(mul.outputs[0])
    div = after_mul[0] if after_mul and len(after_mul) == 1 else None
    if (len(bounds) != 2 or any(b is None for b in bounds) or div is None
            or div.op_type != "Div" or len(div.inputs) != 2
            or div.inputs[0] is not mul.outputs[0] or readers(clip_node.outputs[0]) != [mul]):
        return None
    scale = _scalar(known, div.inputs[1])
    if scale is None:
        return None
    lo, hi = bounds
    consts = (shift, lo, hi, scale)
    nodes = [add, clip_node, mul, div]
    plain = _in_order(t, nodes, known, make)

    def hard_swish(y):
        if y.dtype.kind != "f" or any(c.dtype != y.dtype or c.ndim > y.ndim for c in consts):
            return plain(y)
        u = np.add(y, shift)
        clip(u, lo, hi, out=u)
        np.multiply(y, u, out=u)
        return np.divide(u, scale, out=u)

    return hard_swish, nodes


def _swish_written_out(t, users, readers, make) -> tuple | None:
    """``Mul(t, Sigmoid(t))`` (SiLU as YOLOv8 exports it): the product into the sigmoid's
    own new array."""
    sig = next((u for u in users if u.op_type == "Sigmoid"), None)
    mul = next((u for u in users if u.op_type == "Mul"), None)
    if (sig is None or mul is None or len(sig.inputs) != 1
            or _other(mul, t) is not sig.outputs[0] or readers(sig.outputs[0]) != [mul]):
        return None
    sigmoid, product = make(sig), make(mul)

    def swish(y):
        g = sigmoid(y)
        if g is y or g.__class__ is not np.ndarray or g.dtype != y.dtype or g.shape != y.shape:
            return product(y, g)
        return np.multiply(y, g, out=g)

    return swish, [sig, mul]


def _in_order(t, nodes: list[Node], known: Callable, make: Callable) -> Callable:
    """``run(value of t)``: `nodes` run one by one by their own kernels; the last's output."""
    kernels = [make(n) for n in nodes]

    def run(y):
        env = {t.uid: y}
        for node, k in zip(nodes, kernels):
            out = k(*[None if v is None else env[v.uid] if v.uid in env else known(v)
                      for v in node.inputs])
            env[node.outputs[0].uid] = out
        return env[nodes[-1].outputs[0].uid]

    return run
