"""Compiling a graph into a plan: one generated Python function of straight-line kernel calls.

``plan.fn(*inputs, *captures)`` returns the tuple of requested outputs. Each node becomes one
line ``v7, v8 = k3(v2, v5)`` where ``k3`` is the kernel closure its factory made at compile
time, so running a plan does no dict look-up, no name resolution and no attribute parsing:
that is what keeps the per-iteration cost of a loop body low.

A node that holds subgraphs (If, Loop) receives, after its own inputs, the outer values its
subgraphs capture, in the order `Node.captured` gives.
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import Error, ExecutionError, ModelError, UnsupportedError, where
from ...ir import Graph, Node, Value
from ...ir.traits import Trait, has
from ...ir.traversal import needed_nodes
from .fusions import chain_for
from .heap import keep_temporaries
from .kernels import factory_for
from .source_names import source_label

_plan_ids = itertools.count()


@dataclass
class Plan:
    """A compiled graph: ``fn(*inputs, *captures) -> tuple(outputs)``."""

    graph: Graph
    inputs: list[Value]
    captures: list[Value]
    outputs: list[Value]
    fn: Callable[..., tuple]
    source: str
    used_inputs: frozenset[int] = frozenset()  # uids of the inputs the plan reads

    def uses(self, v: Value | None) -> bool:
        return v is not None and v.uid in self.used_inputs


class CompileContext:
    """Options and caches shared by everything compiled for one model run configuration.

    With `optimize` (the default) each loop is compiled from a rewritten copy (invariant
    code hoisted, work on sliced inputs done once before the loop; see
    `itergraph.passes.pipelines.NUMPY`) and the pairs of `fusions` run as one kernel; the
    graph itself is never changed.

    `fuse` (default: `optimize`) alone turns the fused pairs on or off.

    `progress` compiles the outermost loops' drivers to report each iteration (see
    `backends.common.progress`); `profiler`, when given, wraps every kernel and loop body
    (``profiler.kernel(path, node, fn, fused)`` and ``profiler.body(path, loop, fn)`` return
    the function to call; `path` names the enclosing loops, outermost first; `fused` lists
    the nodes a fused kernel also computes, in plan order, or is None). Plans compiled with
    neither carry no cost for them.
    """

    def __init__(self, max_iterations: int | None = None, optimize: bool = True,
                 progress: bool = False, profiler: Any = None, fuse: bool | None = None):
        self.max_iterations = max_iterations
        self.optimize = optimize  # apply the loop rewrites of `passes.pipelines.NUMPY`
        self.fuse = optimize if fuse is None else fuse  # run `fusions` pairs as one kernel
        self.progress = progress
        self.profiler = profiler
        self.loop_path: list[str] = []  # the loops whose body is being compiled
        self.loops_done: set[int] = set()  # ids of loops the rewrites were tried on
        #: per graph being compiled (innermost last), the uids of the values it reads
        self.read_stack: list[set[int]] = []
        self._cache: dict[tuple, Plan] = {}
        #: uid -> value of what the plans compiled so far folded (`_fold`): constants for
        #: the subgraphs compiled after them too, which would otherwise capture them
        self.folded: dict[int, Any] = {}

    def compile(
        self, graph: Graph, outputs: list[Value] | None = None, inputs: list[Value] | None = None
    ) -> Plan:
        outs = list(graph.outputs if outputs is None else outputs)
        ins = list(graph.inputs if inputs is None else inputs)
        key = (id(graph), tuple(v.uid for v in outs), tuple(v.uid for v in ins))
        plan = self._cache.get(key)
        if plan is None:
            keep_temporaries()
            plan = _compile(graph, ins, outs, self)
            self._cache[key] = plan
        return plan


def compile_graph(graph: Graph, max_iterations: int | None = None) -> Plan:
    return CompileContext(max_iterations).compile(graph)


def make_kernel(node: Node, ctx: CompileContext) -> Callable:
    """The run-time closure for `node`, from the kernel table or its domain's default factory."""
    factory = factory_for(node.op_type, node.version, node.domain)
    if factory is None:
        raise UnsupportedError(
            f"{where(node)}: no NumPy kernel for op '{node.op_type}' of domain "
            f"'{node.domain}' (version {node.version})"
        )
    try:
        return factory(node, ctx)
    except Error:
        raise
    except Exception as e:  # attribute parsing failed: the model is at fault
        raise ModelError(f"{where(node)}: cannot prepare op: {type(e).__name__}: {e}") from e


def run_once(node: Node, args: list) -> list:
    """`node`'s outputs computed once by its kernel on `args` (arrays, None for an omitted
    input): what `ir.static_values` computes constants with. Raises what the kernel raises."""
    out = make_kernel(node, CompileContext())(*args)
    return [out] if len(node.outputs) == 1 else list(out)


def _compile(graph: Graph, inputs: list[Value], outputs: list[Value], ctx: CompileContext) -> Plan:
    nodes = needed_nodes(graph, outputs)
    local: dict[int, str] = {}
    env: dict[str, Any] = {"_Error": Error}
    params: list[str] = []
    for i, v in enumerate(inputs):
        local[v.uid] = f"i{i}"
        params.append(f"i{i}")
    for i, v in enumerate(graph.initializers):
        local.setdefault(v.uid, f"c{i}")
        env[f"c{i}"] = v.const
    defined = set(local) | {v.uid for n in nodes for v in n.outputs}
    captures: list[Value] = []
    input_ids = {v.uid for v in inputs}
    used: set[int] = set()

    def ref(v: Value | None) -> str:
        if v is None:
            return "None"
        if v.uid in input_ids:
            used.add(v.uid)
        name = local.get(v.uid)
        if name is None:
            if v.uid in defined:
                raise ModelError(f"graph '{graph.name}': value '{v.name}' used before definition")
            if v.const is not None and v.producer is None:
                name = f"g{len(env)}"
                env[name] = v.const
            elif v.uid in folded:  # an outer-scope value folded when compiling its graph
                name = f"f{v.uid}"
                env[name] = folded[v.uid]
            else:  # an outer-scope value: becomes a parameter after the inputs
                name = f"o{len(captures)}"
                captures.append(v)
                params.append(name)
            local[v.uid] = name
        return name

    def known(v: Value | None) -> Any:
        """The value of `v` if the plan knows it when compiled (else `_UNKNOWN`)."""
        if v is None:
            return None
        if v.uid in folded:
            return folded[v.uid]
        if v.uid not in input_ids and v.const is not None and v.producer is None:
            return v.const
        return _UNKNOWN

    folded = ctx.folded
    out_ids = {v.uid for v in outputs}
    lines: list[str] = []
    line_nodes: dict[int, Node] = {}
    ctx.read_stack.append({v.uid for n in nodes for v in n.reads()} | {v.uid for v in outputs})
    try:
        fold = functools.partial(_fold, known=known, folded=folded, out_ids=out_ids, env=env,
                                 local=local)
        # what folds is folded first: the fusions asked about the nodes then see every
        # constant, also those computed by nodes that come later in plan order
        done = {id(n) for n in nodes if _foldable(n, known, out_ids)
                and fold(n, make_kernel(n, ctx))}
        _lines([n for n in nodes if id(n) not in done], env, local, ref, ctx, lines,
               line_nodes, fold,
               _pairs(nodes, out_ids, known, ctx) if ctx.fuse else lambda node: None)
    finally:
        ctx.read_stack.pop()
    env["_copy"] = np.array  # a folded constant leaves a plan as a copy of its own
    ret = "".join((f"_copy({r})" if r.startswith("f") else r) + ", "
                  for r in (ref(v) for v in outputs))
    pid = next(_plan_ids)
    filename = f"<itergraph plan {pid}: {source_label(graph.name or 'graph')}>"
    source = "\n".join(
        [f"def plan({', '.join(params)}):", "    try:", *lines, f"        return ({ret})",
         "    except _Error:", "        raise",
         "    except Exception as e:", "        _fail(e)", ""]
    )
    env["_fail"] = _failure_reporter(filename, line_nodes)
    exec(compile(source, filename, "exec"), env)  # noqa: S102 - generated from our own IR
    return Plan(graph, inputs, captures, outputs, env["plan"], source, frozenset(used))


def _pairs(nodes, out_ids, known, ctx) -> Callable[[Node], tuple | None]:
    """``pair(node)``: `fusions.chain_for` of `node` and the nodes after it that read only
    its result, as ``(kernel, inputs, absorbed nodes)``, or None. Asked in plan order, so
    that what the nodes before it folded is known; never for a node `_fold` folds (all its
    inputs known)."""
    readers: dict[int, list[Node]] = {}
    for n in nodes:
        for v in n.reads():
            readers.setdefault(v.uid, []).append(n)

    def readers_of(v: Value) -> list[Node] | None:
        return None if v.uid in out_ids else readers.get(v.uid, [])

    def pair(n: Node) -> tuple | None:
        if (len(n.outputs) != 1 or n.outputs[0].uid in out_ids
                or (n.op_type not in _NOT_FOLDED
                    and all(known(v) is not _UNKNOWN for v in n.inputs))):
            return None
        return chain_for(n, readers_of, known, lambda node: make_kernel(node, ctx))

    return pair


def _lines(nodes, env, local, ref, ctx, lines, line_nodes, fold, pairs) -> None:
    """One line per node (an Identity is an alias): ``v7, v8 = k3(v2, v5)``; a node whose
    value `fold` computes while compiling becomes none, a node and the readers that `pairs`
    fuses with it one line, where the last of them stands (their other inputs may be
    computed in between)."""
    pending: dict[int, tuple] = {}  # id(last node) -> the fused chain, written there
    absorbed: set[int] = set()  # ids of the other nodes of fused chains: no line of their own

    def emit(k, node, kernel, reads, outputs, fused=None):
        env[f"k{k}"] = kernel
        if ctx.profiler is not None:
            env[f"k{k}"] = ctx.profiler.kernel(tuple(ctx.loop_path), node, env[f"k{k}"],
                                               fused)
        args = ", ".join(ref(v) for v in reads)
        names = []
        for v in outputs:
            local[v.uid] = f"v{v.uid}"
            names.append(f"v{v.uid}")
        lhs = names[0] if len(names) == 1 else (", ".join(names) + "," if names else "_")
        lines.append(f"        {lhs} = k{k}({args})")
        line_nodes[len(lines) + 2] = node  # +2: the def and try lines come first

    for k, node in enumerate(nodes):
        if id(node) in pending:
            first_k, first, kernel, reads, chain = pending.pop(id(node))
            emit(first_k, first, kernel, reads, node.outputs, chain)
            continue
        if id(node) in absorbed:
            continue
        if node.op_type == "Identity" and node.domain == "" and node.inputs[0] is not None:
            local[node.outputs[0].uid] = ref(node.inputs[0])  # an alias, not a call
            continue
        pair = pairs(node)
        if pair is not None and not any(id(m) in pending or id(m) in absorbed
                                        for m in pair[2]):
            kernel, reads, chain = pair
            pending[id(chain[-1])] = (k, node, kernel, reads, chain)
            absorbed.update(id(m) for m in chain[:-1])
            continue
        kernel = make_kernel(node, ctx)
        if fold(node, kernel):
            continue
        emit(k, node, kernel, [*node.inputs, *node.captured()], node.outputs)


_UNKNOWN = object()
FOLD_MAX = 1 << 20  # elements: larger inputs or results are left to run time
#: Pure ops whose result can be far larger than their inputs, or costs more to keep than to
#: compute: never folded.
_NOT_FOLDED = frozenset({"ConstantOfShape", "Expand", "EyeLike", "OneHot", "Range", "Tile",
                         "Pad", "Resize", "MatMul", "MatMulInteger", "Gemm", "Einsum", "Conv",
                         "ConvTranspose", "Gather", "GatherElements", "GatherND", "NonZero"})


def _foldable(node, known, out_ids) -> bool:
    """Might `_fold` fold `node` (before its kernel is made)?"""
    return (node.op_type != "Identity" and has(node, Trait.PURE) and node.op_type not in _NOT_FOLDED
            and not node.subgraphs() and not any(v.uid in out_ids for v in node.outputs)
            and all(known(v) is not _UNKNOWN for v in node.inputs))


def _fold(node, kernel, known, folded, out_ids, env, local) -> bool:
    """Constant folding with the kernels themselves: a pure node whose inputs are all known
    when compiling (initializers, Constant nodes, what was folded before it) runs once, now,
    and its outputs become constants of the plan (silero VAD's LSTM weights, an Unsqueeze of
    a Constant inside an If branch, are otherwise rebuilt on every call). Left to run time:
    ops outside `traits.PURE`, those in `_NOT_FOLDED`, inputs or results over `FOLD_MAX`
    elements, the plan's own outputs (handed to the caller, who may write to them), and any
    node whose kernel fails (the run then reports it where it happens)."""
    if (not has(node, Trait.PURE) or node.op_type in _NOT_FOLDED or node.subgraphs()
            or any(v.uid in out_ids for v in node.outputs)):
        return False
    args = [known(v) for v in node.inputs]
    if any(a is _UNKNOWN or (a is not None and (not isinstance(a, np.ndarray)
                                                or a.size > FOLD_MAX)) for a in args):
        return False
    try:
        res = kernel(*args)
    except Exception:  # the run raises it, if the node runs at all
        return False
    res = [res] if len(node.outputs) == 1 else list(res)
    if not all(isinstance(r, np.ndarray) and r.size <= FOLD_MAX for r in res):
        return False
    for v, r in zip(node.outputs, res):
        r = r.view()
        r.flags.writeable = False  # shared by every run of the plan
        folded[v.uid] = r
        name = f"f{v.uid}"
        env[name] = r
        local[v.uid] = name
    return True


def _failure_reporter(filename: str, line_nodes: dict[int, Node]) -> Callable:
    def fail(e: Exception):
        tb = e.__traceback__
        node = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                node = line_nodes.get(tb.tb_lineno)
            tb = tb.tb_next
        if isinstance(e, RecursionError):
            raise ExecutionError(f"{where(node)}: graph nesting too deep") from e
        raise ExecutionError(f"{where(node)} failed: {type(e).__name__}: {e}").with_traceback(
            sys.exc_info()[2]
        ) from e

    return fail
