"""Gate fission: a loop body's ``Split`` of a sum of matrix products becomes one sum per block.

Recurrent cells compute all gates at once, ``gates = x_t W + h R + b``, then split the gate
row into blocks (``Split(gates, axis=-1)``). On XLA's CPU backend, element-wise code that
reads several column blocks of one row-major array is several times slower than code reading
separate arrays. This pass rewrites, inside every canonical `Loop` body (at any depth),

    Split(A_1 + A_2 + ... + A_m, axis=last) -> (G_1, ..., G_n)

into, for each block k with columns [o_k, o_k + s_k):

    G_k = A_1[k] + A_2[k] + ... + A_m[k]

where an addend ``MatMul(a, W)`` with a loop-invariant rank-2 ``W`` of static shape gives
``MatMul(a, Slice(W, o_k, o_k + s_k, axis=-1))`` (the slice of W is invariant, so backends
compute it once), an addend with a static last dimension equal to the split dimension gives
``Slice(addend, o_k, o_k + s_k, axis=-1)``, and an addend whose last dimension is 1 (or a
scalar) stays as it is. Additions are kept in the original order and association, so each
block's element is computed by the same operations as before (matrix products may round
differently, as a smaller BLAS/XLA product can block the sum differently).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.loop import Loop
from .base import Pass
from .loop_motion import (
    LoopScope,
    body_value_uses,
    const_value,
    loop_results,
    static_shape,
)


class GateFission(Pass):
    """A loop body's ``Split`` of a sum of matrix products becomes one sum per block.

    Applies to: in every canonical `Loop` body at any depth, ``Split`` nodes (domain "",
    opset >= 13, with constant sizes or sizes implied by an evenly divided static dimension)
    over the last axis whose input is an ``Add`` tree (or a single ``MatMul``) of the forms
    of the module docstring, with at least one ``MatMul`` leaf, and whose inner
    ``Add``/``MatMul`` values are read by nothing else (so the old tree becomes dead code; it
    stays in the body and backends skip it). The Split's outputs are replaced, everywhere in
    the body (nodes, nested captures, loop results, body outputs), by the new block sums.

    Returns: the number of Split nodes rewritten.

    Guarantees: additions keep their order and association, so each block's element is
    computed by the same operations as before; matrix products may round differently (a
    smaller BLAS/XLA product can block the sum differently).
    """

    name = "gate_fission"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        count = 0
        for _, node in list(graph.walk()):
            if isinstance(node, Loop):
                count += _fission_loop(node)
        return count

    def applicable(self, graph: Graph) -> bool:
        for _, node in graph.walk():
            if isinstance(node, Loop):
                scope = LoopScope(node)
                uses = body_value_uses(node)
                if any(_plan(n, scope, uses) is not None for n in node.body.nodes):
                    return True
        return False


gate_fission = GateFission()


def _plan(split: Node, scope: LoopScope, uses: dict[int, int]):
    """(sizes, leaves) for a Split this pass rewrites, else None. A leaf is
    ("mm", node, W shape) or ("value", value); returns (sizes, uids of the tree's inner
    values, root)."""
    if split.op_type != "Split" or split.domain != "":
        return None
    if not split.inputs or split.inputs[0] is None:
        return None
    root = split.inputs[0]
    leaves: list = []
    inner: list[Value] = []

    def collect(v: Value, top: bool) -> bool:
        p = v.producer
        if p is not None and p.domain == "" and v.uid in scope.defined and (
                top or uses.get(v.uid, 0) == 1):
            if p.op_type == "Add" and len(p.inputs) == 2 and None not in p.inputs:
                inner.append(v)
                return collect(p.inputs[0], False) and collect(p.inputs[1], False)
            if p.op_type == "MatMul" and None not in p.inputs:
                w = p.inputs[1]
                shape = static_shape(w)
                if scope.is_invariant(w) and shape is not None and len(shape) == 2:
                    inner.append(v)
                    leaves.append(("mm", p, shape))
                    return True
        leaves.append(("value", v))
        return True

    if not collect(root, True) or not any(leaf[0] == "mm" for leaf in leaves):
        return None
    if uses.get(root.uid, 0) != 1:
        return None
    dim = next(leaf[2][1] for leaf in leaves if leaf[0] == "mm")
    axis = split.attrs.get("axis", 0)
    rank = None
    for leaf in leaves:
        if leaf[0] == "value":
            shape = static_shape(leaf[1])
            if shape is None:
                return None
            if shape and shape[-1] not in (1, dim):
                return None
    mm_in = leaves[[leaf[0] for leaf in leaves].index("mm")][1].inputs[0]
    in_shape = static_shape(mm_in)
    if in_shape is not None:
        rank = max(len(in_shape), 2)
    if axis != -1 and (rank is None or axis != rank - 1):
        return None
    sizes = const_value(split.inputs[1]) if len(split.inputs) > 1 and split.inputs[1] is not None \
        else None
    n = len(split.outputs)
    if sizes is not None:
        sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
    elif len(split.inputs) > 1 and split.inputs[1] is not None:
        return None
    elif dim % n == 0:
        sizes = [dim // n] * n
    else:
        return None
    if len(sizes) != n or sum(sizes) != dim or min(sizes) < 0:
        return None
    for leaf in leaves:
        if leaf[0] == "mm" and leaf[2][1] != dim:
            return None
    return sizes, {v.uid for v in inner}, root


def _fission_loop(loop: Loop) -> int:
    body = loop.body
    done = 0
    for split in list(body.nodes):
        scope = LoopScope(loop)
        uses = body_value_uses(loop)
        plan = _plan(split, scope, uses)
        if plan is None:
            continue
        sizes, inner, root = plan
        _rewrite(loop, split, sizes, root, inner)
        done += 1
    return done


def _i64(name: str, values) -> Value:
    return Value(name, None, np.asarray(values, dtype=np.int64))


def _rewrite(loop: Loop, split: Node, sizes: list[int], root: Value, inner: set[int]) -> None:
    body = loop.body
    version = split.version
    at = body.nodes.index(split)
    new_nodes: list[Node] = []
    axes = _i64("gate_axis", [-1])
    body.initializers.append(axes)
    base = split.name or "gates"
    replace: dict[int, Value] = {}
    offset = 0
    for k, (size, out) in enumerate(zip(sizes, split.outputs)):
        starts, ends = _i64(f"{base}_start{k}", [offset]), _i64(f"{base}_end{k}", [offset + size])
        body.initializers.extend([starts, ends])
        offset += size

        def block(v: Value, k=k, starts=starts, ends=ends) -> Value:
            p = v.producer
            if p is not None and p.op_type == "Add" and p.domain == "" and v.uid in inner:
                a, b = block(p.inputs[0]), block(p.inputs[1])
                n = Node("Add", [a, b], [Value(f"{v.name}_g{k}")], version=p.version,
                         name=f"{p.name}_g{k}")
                new_nodes.append(n)
                return n.outputs[0]
            if p is not None and p.op_type == "MatMul" and p.domain == "" and v.uid in inner:
                w = p.inputs[1]
                s = Node("Slice", [w, starts, ends, axes], [Value(f"{w.name}_g{k}")],
                         version=version, name=f"{p.name}_w{k}")
                m = Node("MatMul", [p.inputs[0], s.outputs[0]], [Value(f"{v.name}_g{k}")],
                         version=p.version, name=f"{p.name}_g{k}")
                new_nodes.extend([s, m])
                return m.outputs[0]
            shape = static_shape(v)
            if not shape or shape[-1] == 1:
                return v
            s = Node("Slice", [v, starts, ends, axes], [Value(f"{v.name}_g{k}")],
                     version=version, name=f"{base}_slice{k}_{v.name}")
            new_nodes.append(s)
            return s.outputs[0]

        g = block(root)
        if g is root or g.producer is None or g.producer not in new_nodes:
            g = _identity(new_nodes, g, out, version)
        replace[out.uid] = g
    body.nodes[at + 1:at + 1] = new_nodes
    _substitute(loop, replace)


def _identity(new_nodes: list[Node], v: Value, out: Value, version) -> Value:
    n = Node("Identity", [v], [Value(out.name)], version=version)
    new_nodes.append(n)
    return n.outputs[0]


def _substitute(loop: Loop, replace: dict[int, Value]) -> None:
    """Make every reader of a replaced value in `loop`'s body read its replacement."""
    body = loop.body

    def sub(g: Graph) -> None:
        for n in g.nodes:
            n.inputs = [replace.get(v.uid, v) if v is not None else None for v in n.inputs]
            for sg in n.subgraphs():
                sub(sg)
        g.outputs = [replace.get(v.uid, v) for v in g.outputs]

    sub(body)
    for port in list(loop.carried) + list(loop.output_ports):
        if port.result.uid in replace:
            port.result = replace[port.result.uid]
    for attr in ("condition_result", "precondition"):
        v = getattr(loop, attr)
        if v is not None and v.uid in replace:
            setattr(loop, attr, replace[v.uid])
    assert all(v.uid not in replace for v in loop_results(loop) if v is not None)
