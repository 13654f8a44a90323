"""The squeeze-and-excitation block of MobileNetV3-style networks, run by the NumPy planner
as one kernel:

    s = GlobalAveragePool(x)                    [N, C, 1, 1]
    s = step(...step(s))                        1x1 Conv (constant weights, optional bias),
                                                Add of a per-channel constant, Identity,
                                                Relu, HardSigmoid, Sigmoid, HardSwish
    y = Mul(x, s)  (or Mul(s, x))

Each node of the chain has one output, read by the next node alone and by nothing else of
the plan. Node by node, the steps run on ``[N, C, 1, 1]`` tensors, so each costs a kernel
call and an allocation for a few hundred numbers; here they run on the ``[N, C]`` matrix of
means, the convolutions as one matrix product each, the activations in place, and the last
product broadcasts the result over ``x``. The values are those of the nodes' own kernels
within float rounding (the products may sum in another order).

At run time, inputs the fused form does not cover (an ``x`` of another element type than
the weights, not floating, of rank under 3) run through the nodes' own kernels, one by
one, as the unfused plan would.

`se_chain(gap, sole_reader, known, make)` returns ``(kernel, inputs, absorbed_nodes)`` or
None; the caller asks only where ``x`` is computed at run time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ir.attributes import attr, attr_str
from .kernels.nn import sigmoid

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_MAX_STEPS = 12


def _conv_step(node: Node, known: Callable):
    """A 1x1 Conv of a ``[N, C, 1, 1]`` tensor with constant weights as ``s @ W.T + B``."""
    w = known(node.inputs[1]) if len(node.inputs) > 1 else None
    b = known(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] is not None else None
    if (not isinstance(w, np.ndarray) or w.ndim != 4 or w.shape[2:] != (1, 1)
            or w.dtype not in _FLOATS or int(attr(node, "group", 1)) != 1
            or any(int(p) for p in attr(node, "pads", [])) or attr_str(node, "auto_pad",
                                                                     "NOTSET") != "NOTSET"
            or not (b is None or (isinstance(b, np.ndarray) and b.shape == (w.shape[0],)
                                  and b.dtype == w.dtype))):
        return None
    wt = np.ascontiguousarray(w.reshape(w.shape[:2]).T)
    if b is None:
        return (lambda s: s @ wt), w.dtype, w.shape[1], w.shape[0]

    def conv(s):
        t = s @ wt
        t += b
        return t

    return conv, w.dtype, w.shape[1], w.shape[0]


def _add_step(node: Node, prev, known: Callable):
    """Add of a constant of one value per channel (``[C, 1, 1]``, ``[1, C, 1, 1]``) or one
    value."""
    others = [v for v in node.inputs if v is not prev]
    if len(node.inputs) != 2 or len(others) != 1:
        return None
    c = known(others[0])
    if not isinstance(c, np.ndarray) or c.dtype not in _FLOATS:
        return None
    if c.size == 1 and c.ndim <= 4:
        vec, chans = c.reshape(()), None
    elif c.ndim in (3, 4) and c.shape[-2:] == (1, 1) and (c.ndim == 3 or c.shape[0] == 1):
        vec = c.reshape(-1)
        chans = vec.size
    else:
        return None

    def add(s):
        s += vec
        return s

    return add, c.dtype, chans, chans


def _activation(node: Node):
    op = node.op_type
    if op == "Relu":
        return lambda s: np.maximum(s, 0, out=s)
    if op == "HardSigmoid":
        alpha = float(attr(node, "alpha", 0.2))
        beta = float(attr(node, "beta", 0.5))

        def hard_sigmoid(s):
            s *= alpha
            s += beta
            return s.clip(0, 1, out=s)

        return hard_sigmoid
    if op == "Sigmoid":
        return sigmoid
    if op == "HardSwish":
        def hard_swish(s):
            t = s / 6
            t += 0.5
            t.clip(0, 1, out=t)
            return np.multiply(s, t, out=t)

        return hard_swish
    return None


def _step(node: Node, prev, known: Callable):
    """``(fn, dtype, channels in, channels out)`` for `node` applied to the ``[N, C]`` matrix
    `prev` stands for; dtype is the constant's type, the channels its count in and out
    (None where the step has no constant and keeps any count). None: not a step."""
    if node.domain != "" or len(node.outputs) != 1 or node.subgraphs():
        return None
    if node.op_type == "Conv" and node.inputs[0] is prev:
        return _conv_step(node, known)
    if node.op_type == "Add":
        return _add_step(node, prev, known)
    if node.op_type == "Identity":
        return (lambda s: s), None, None, None
    fn = _activation(node) if len(node.inputs) == 1 else None
    return None if fn is None else (fn, None, None, None)


def se_chain(gap: Node, sole_reader: Callable, known: Callable,
             make: Callable) -> tuple | None:
    """The squeeze-and-excitation chain starting at GlobalAveragePool `gap`, fused; None
    when there is none. `sole_reader(v)` is the one node reading `v` (None if several, none,
    or `v` is an output of the plan); `make(node)` the node's own kernel."""
    x = gap.inputs[0] if gap.inputs else None
    if gap.op_type != "GlobalAveragePool" or gap.domain != "" or x is None:
        return None
    prev, nodes, steps, dtypes = gap.outputs[0], [], [], set()
    chans = first = None  # the channel count between the steps, the count of x
    while len(nodes) < _MAX_STEPS:
        node = sole_reader(prev)
        if node is None:
            return None
        if node.op_type == "Mul" and node.domain == "" and len(node.inputs) == 2:
            if {id(v) for v in node.inputs} != {id(x), id(prev)} or not steps:
                return None
            nodes.append(node)
            break
        step = _step(node, prev, known)
        if step is None:
            return None
        fn, dtype, c_in, c_out = step
        if c_in is not None:
            if chans is not None and chans != c_in:
                return None  # left to the nodes' own kernels, which report it
            if first is None:
                first = c_in
            chans = c_out
        steps.append(fn)
        if dtype is not None:
            dtypes.add(dtype)
        nodes.append(node)
        prev = node.outputs[0]
    else:
        return None
    if len(dtypes) != 1 or first is None or chans != first:
        return None
    fused = _fused(steps, dtypes.pop(), first, _unfused(gap, nodes, known, make))
    return fused, [x], nodes


def _fused(steps: list, dtype: np.dtype, chans: int, fallback: Callable) -> Callable:
    def se(x):
        if (x.__class__ is not np.ndarray or x.dtype != dtype or x.ndim < 3
                or x.shape[1] != chans or x.size == 0):
            return fallback(x)
        n = x.shape[0]
        # over the spatial axes as laid out (no copy of a channels-last input)
        s = np.add.reduce(x, axis=tuple(range(2, x.ndim)))
        s /= x.size // (n * chans)  # as GlobalAveragePool's mean: the sum, then one division
        for step in steps:
            s = step(s)
        return np.multiply(x, s.reshape((n, chans) + (1,) * (x.ndim - 2)))

    return se


def _unfused(gap: Node, nodes: list[Node], known: Callable, make: Callable) -> Callable:
    """The chain run node by node with the nodes' own kernels."""
    kernels = [make(gap)] + [make(n) for n in nodes]
    plans = []
    prev = gap.outputs[0]
    for node in nodes:
        plans.append([None if v is prev or v is gap.inputs[0] else known(v)
                      for v in node.inputs])
        plans[-1] = (plans[-1], [i for i, v in enumerate(node.inputs) if v is prev],
                     [i for i, v in enumerate(node.inputs) if v is gap.inputs[0]])
        prev = node.outputs[0]

    def run(x):
        t = kernels[0](x)
        for k, (args, at_prev, at_x) in zip(kernels[1:], plans):
            a = list(args)
            for i in at_prev:
                a[i] = t
            for i in at_x:
                a[i] = x
            t = k(*a)
        return t

    return run
