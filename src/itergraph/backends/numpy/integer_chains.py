"""Integer products handed on as float, as ONNX Runtime's dynamic quantizer writes them:

    ConvInteger | MatMulInteger  ->  [Add(t, bias)]  ->  Cast(to=FLOAT)  ->  [Mul(t, scale)]

(a ``ConvInteger`` output plus its quantized int32 bias, converted to float and scaled).
The product is computed in float32 anyway where that is exact (`exact_int.float_product`:
every value an integer below ``2**24``); run as one kernel, it stays float32: the int32
bias is added in float32 where the sum is exact too (``bound + max|bias| < 2**24``, so the
sum, its int32 form and the Cast of it are the same number), the Cast is then the identity,
and the Mul computed into the same array (`inplace.binary_step`). Three passes over the
output and their allocations go (the int32 conversion, the int32 sum, the Cast).

Where float32 is not exact (wide codes or weights), or the bias is no int32 array that
broadcasts into the product, the nodes run by their own kernels from the exact int32
product: results are bitwise those of the unfused nodes either way.

`integer_chain(node, sole_reader, make)` returns ``(kernel, inputs, absorbed nodes)`` for
`fusions.chain_for`, or None.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ir.attributes import attr
from .inplace import binary_step
from .kernels.quant_int import conv_integer_float, matmul_integer_float

_FLOAT = 1  # TensorProto.FLOAT
_EXACT32 = float(1 << 24)
_FLOAT_FORMS = {"ConvInteger": conv_integer_float, "MatMulInteger": matmul_integer_float}


def _reads_once(node: Node, v) -> int | None:
    """The slot of `node`'s one read of `v` (a binary node of the default domain), else None."""
    if node.domain != "" or len(node.inputs) != 2 or len(node.outputs) != 1:
        return None
    slots = [i for i, u in enumerate(node.inputs) if u is v]
    return slots[0] if len(slots) == 1 else None


def integer_chain(node: Node, sole_reader: Callable, make: Callable) -> tuple | None:
    t = node.outputs[0]
    add = sole_reader(t)
    if add is None:
        return None
    nodes, reads = [], list(node.inputs)
    add_slot = _reads_once(add, t) if add.op_type == "Add" and (add.version or 7) >= 7 \
        else None
    if add_slot is not None:
        nodes.append(add)
        reads.append(add.inputs[1 - add_slot])
        t = add.outputs[0]
    cast = sole_reader(t)
    if (cast is None or cast.op_type != "Cast" or cast.domain != "" or len(cast.outputs) != 1
            or attr(cast, "to") != _FLOAT):
        return None
    nodes.append(cast)
    mul = sole_reader(cast.outputs[0])
    slot = None if mul is None or mul.op_type != "Mul" or (mul.version or 7) < 7 else \
        _reads_once(mul, cast.outputs[0])
    if slot is not None:
        nodes.append(mul)
        reads.append(mul.inputs[1 - slot])
    return _kernel(node, nodes, make, add_slot, slot), reads, nodes


def _kernel(node: Node, nodes: list[Node], make: Callable, add_slot: int | None,
            slot: int | None) -> Callable:
    """The chain's kernel, reading `node`'s inputs, then the bias (`add_slot`: where the
    Add reads the product, None: no Add), then the Mul's other operand (`slot`: where the
    Mul reads the Cast, None: no Mul)."""
    n_in = len(node.inputs)
    has_bias = add_slot is not None
    product = _FLOAT_FORMS[node.op_type](node)
    exact = make(node)
    plain = [make(n) for n in nodes]
    scale = None if slot is None else binary_step(nodes[-1], slot)

    def unfused(acc, rest):
        """The nodes' own kernels from the int32 product `acc`."""
        k, v = 0, acc
        if has_bias:
            v = plain[0](v, rest[0]) if add_slot == 0 else plain[0](rest[0], v)
            k = 1
        v = plain[k](v)
        return v if slot is None else scale(v, rest[-1])

    def fused(*args):
        rest = args[n_in:]
        got = product(*args[:n_in])
        if got is None:
            return unfused(exact(*args[:n_in]), rest)
        y, bound = got
        if has_bias:
            b = rest[0]
            if (b.__class__ is not np.ndarray or b.dtype != np.int32 or b.ndim > y.ndim
                    or np.broadcast_shapes(b.shape, y.shape) != y.shape
                    or bound + (max(-int(b.min()), int(b.max())) if b.size else 0) >= _EXACT32):
                return unfused(y.astype(np.int32), rest)
            y += b.astype(np.float32)
        return y if slot is None else scale(y, rest[-1])

    return fused
