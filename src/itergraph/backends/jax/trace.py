"""Tracing IR graphs into JAX computations, node by node, with partial evaluation.

`eval_graph` walks a graph's nodes in order and binds each output in the scope. Each node is
dispatched to its rule in the lowering table; control flow (``Loop``, ``If``) has rules there
too, which trace the node's subgraphs themselves (see `table`). A foldable rule whose inputs
are all static runs on NumPy and its result stays static. A node that cannot be lowered
raises `CannotLower`; any other unexpected failure inside a rule is reported the same way, so
that the runner falls back to the NumPy backend, which gives the model's own error if there
is one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import Error, ExecutionError, where
from ...ir import Graph, Node, Value
from .affine import propagate
from .big_constants import constant_inputs, derived
from .channels_last import along_axis, elementwise
from .context import FOLD_MAX_ELEMENTS, CannotLower, NeedsDriver, OpContext, Scope, TraceContext
from .table import Rule, lookup

MAX_RANK = 64  # NumPy's (and ONNX Runtime's) limit on an array's dimensions
MAX_BYTES = np.iinfo(np.intp).max  # NumPy's limit on an array's size in bytes


def eval_graph(tc: TraceContext, graph: Graph, scope: Scope, outputs: list[Value]) -> list[Any]:
    """Trace the nodes of `graph` that `outputs` need; return the outputs' values."""
    for node in tc.cache.needed(graph, outputs):
        eval_node(tc, node, scope)
    return [scope.get(v) for v in outputs]


def eval_nodes(tc: TraceContext, nodes: list[Node], scope: Scope) -> None:
    for node in nodes:
        eval_node(tc, node, scope)


def eval_node(tc: TraceContext, node: Node, scope: Scope) -> None:
    outs = node.outputs
    if outs and outs[0].uid in tc.big:  # a large Constant node: passed in as an argument
        scope.bind(outs[0], tc.big[outs[0].uid])
        return
    if tc.depth == 0:
        tc.top_node = node
    if tc.padded:
        from .loops.padded_reads import apply, reads_padded

        if reads_padded(node, scope):
            for v, x in zip(outs, apply(tc, node, scope)):
                scope.bind(v, x)
            return
    rule = lookup(node)
    if rule is None:
        raise CannotLower(node, no_lowering_reason(node))
    if rule.traces_subgraphs:
        results = _guard(node, lambda: rule.fn(tc, node, scope))
    else:
        results = _apply_rule(tc, node, rule, scope)
    if len(results) != len(outs):
        raise CannotLower(node, f"lowering produced {len(results)} values for {len(outs)} outputs")
    for v, x in zip(outs, results):
        _check_array(node, v, x)
        scope.bind(v, x)


def _check_array(node: Node, v: Value, x) -> None:
    """An output NumPy could not hold: a rank above 64 (XLA computes it), or more bytes than
    an array can address (XLA aborts the process on such a shape when compiling)."""
    if getattr(x, "ndim", 0) > MAX_RANK:
        raise ExecutionError(f"{where(node)}: output '{v.name}' would have rank {x.ndim}; "
                             f"an array has at most {MAX_RANK} dimensions")
    shape = getattr(x, "shape", ())
    if all(isinstance(d, int) for d in shape):
        size = math.prod(shape) * np.dtype(getattr(x, "dtype", np.uint8)).itemsize
        if size > MAX_BYTES:
            raise ExecutionError(f"{where(node)}: output '{v.name}' would have shape "
                                 f"{tuple(shape)}, more bytes than an array can hold")


def _guard(node: Node, fn) -> list:
    try:
        return fn()
    except (Error, NeedsDriver):
        raise
    except Exception as e:  # a lowering bug or an input XLA cannot take: let NumPy run it
        raise CannotLower(node, f"lowering failed ({type(e).__name__}: {e})") from e


def _apply_rule(tc: TraceContext, node: Node, rule: Rule, scope: Scope) -> list:
    if node.subgraphs():
        raise CannotLower(node, "ops holding subgraphs other than Loop and If are not lowered")
    inputs = [None if v is None else scope.get(v) for v in node.inputs]
    for i, x in enumerate(inputs):
        if x is not None and not hasattr(x, "shape"):
            kind = "a sequence" if isinstance(x, list | tuple) else type(x).__name__
            raise CannotLower(node, f"input {i} is {kind}; XLA handles tensors only")
    if rule.fold and all(x is None or isinstance(x, np.ndarray) for x in inputs):
        folded = _fold(tc, node, rule, scope, inputs)
        if folded is not None:
            return folded
    if rule.fold and tc.origin:
        host = constant_inputs(tc, inputs)
        if host is not None:
            folded = _fold_constants(tc, node, rule, scope, host)
            if folded is not None:
                return folded
    import jax.numpy as jnp

    def call(args, as_node=node):
        return rule.fn(OpContext(as_node, jnp, tc, scope.frame), *args)

    try:
        res = (elementwise(tc, node, inputs, call) or along_axis(tc, node, inputs, call)
               or _results(node, call(inputs)))
    except (Error, NeedsDriver):
        raise
    except Exception as e:
        shapes = [None if x is None else (tuple(x.shape), str(x.dtype)) for x in inputs]
        raise CannotLower(node, f"lowering failed for inputs {shapes} "
                                f"({type(e).__name__}: {e})") from e
    propagate(tc, node, inputs, res)
    return res


def _fold(tc, node, rule, scope, inputs) -> list | None:
    """Run a foldable rule on NumPy; None when the result is too large to embed (or it fails)."""
    try:
        out = rule.fn(OpContext(node, np, tc, scope.frame), *inputs)
    except CannotLower:
        raise
    except Error:
        raise
    except Exception:
        return None  # e.g. an out-of-range index: the traced path reports it at run time
    res = _results(node, out)
    res = [np.asarray(r) if not isinstance(r, np.ndarray) else r for r in res]
    if any(r.size > FOLD_MAX_ELEMENTS and r.dtype.kind != "O" for r in res):
        return None
    return res


#: a node computed once from large constants may make at most this many times their bytes
#: (a widening Cast or DequantizeLinear does; an Expand or Tile to far more is left to XLA)
FOLD_GROWTH = 8


def _fold_constants(tc, node, rule, scope, host) -> list | None:
    """Run a foldable rule on NumPy over `host`, the values of its constant inputs (some of
    them large constants passed as arguments), once per compilation: small results stay
    static, large ones become arguments (`big_constants.derived`). None when the rule fails
    on the host or its results are too large (`FOLD_GROWTH`): XLA then computes it per call."""
    keys = [("value", v.uid) for v in node.outputs]
    res = [tc.store.get(k) for k in keys]
    if any(r is None for r in res):
        try:
            out = rule.fn(OpContext(node, np, tc, scope.frame), *host)
        except Error:
            raise
        except Exception:
            return None
        res = [np.asarray(r) for r in _results(node, out)]
        limit = FOLD_GROWTH * sum(h.nbytes for h in host if h is not None)
        if any(r.dtype.kind not in "biufc" for r in res) or sum(r.nbytes for r in res) > limit:
            return None
        tc.store.update(zip(keys, res))
    tc.note(node, True, "compiled with XLA; computed once, on the host, from constants")
    return [r if r.size <= FOLD_MAX_ELEMENTS else derived(tc, k, lambda r=r: r)
            for k, r in zip(keys, res)]


def _results(node: Node, out) -> list:
    if len(node.outputs) == 1:
        out = [out]
    else:
        out = list(out)
    return [np.asarray(r) if isinstance(r, np.generic) else r for r in out]


SEQUENCE_OPS = ("SplitToSequence", "ConcatFromSequence")


def no_lowering_reason(node: Node) -> str:
    why = (f"no JAX lowering for op '{node.op_type}'"
           + (f" of domain '{node.domain}'" if node.domain else "")
           + (f" (opset {node.version})" if node.version else ""))
    if node.op_type.startswith(("Sequence", "Optional")) or node.op_type in SEQUENCE_OPS:
        why += ": XLA has no sequence or optional values"
    return why
