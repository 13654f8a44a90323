"""Static analysis for `explain` before any run: what can compile, judged without shapes.

Per top-level node: it compiles unless it (or something inside its subgraphs) has no JAX
lowering, handles sequence or optional values, carries a value whose declared shape changes
across iterations or that grows by a Concat of itself, or is a loop that can stop early
with concatenated outputs nested inside another loop or a branch (its output length is
data-dependent). Shape-dependent reasons
(a reshape target computed from run-time data, branches of different shapes) only show up
when a run traces the graph; `CompiledGraph.explain` reports those after a run.
"""

from __future__ import annotations

from ...analysis.loop_features import grows_each_iteration
from ...errors import where
from ...ir import Concat, Graph, Loop, Node
from ...ir.traversal import needed_nodes
from ...ir.types import MapType, OptionalType, SequenceType, TensorType
from ...passes.cells import fused_kind
from .context import CompileCache, Scope, TraceContext
from .loops.info import static_truth
from .records import Record
from .run_time_shapes import RunTimeShapes
from .table import load_all, lookup
from .trace import no_lowering_reason


def _non_tensor(v) -> bool:
    return v is not None and isinstance(v.type, (SequenceType, OptionalType, MapType))


def _may_stop_early(tc, loop: Loop, scope) -> bool:
    if loop.precondition is not None and not static_truth(tc, loop, scope, loop.precondition, {}):
        return True
    if loop.condition_result is not None and not static_truth(
            tc, loop, scope, loop.condition_result, {}):
        return True
    if loop.initial_condition is not None and loop.initial_condition.const is None:
        return True
    if loop.trip_count is not None and loop.trip_count.const is None and not loop.sliced:
        p = loop.trip_count.producer
        return not (p is not None and p.op_type in ("Constant", "Shape", "Size"))
    return False


def _problems(tc, graph: Graph, node: Node, depth: int, notes: list[Record]) -> list[str]:
    """What keeps `node`, a node of `graph`, from compiling."""
    out: list[str] = []
    for v in list(node.inputs) + list(node.outputs):
        if _non_tensor(v):
            out.append(f"{where(node)} handles the sequence/optional value '{v.name}'")
            break
    rule = lookup(node)
    why = rule.refuses(node) if rule is not None and rule.refuses is not None else None
    if rule is None:
        out.append(f"{where(node)}: {no_lowering_reason(node)}")
    elif why:
        out.append(f"{where(node)}: {why}")
    elif depth > 0 and _varying_slice(graph, node):
        out.append(f"{where(node)}: one bound is computed in the body and the other is a "
                   "constant, so the slice's length changes from one iteration to the next")
    elif isinstance(node, Loop):
        out.extend(_loop_problems(tc, graph, node, depth, notes))
    elif rule.traces_subgraphs:  # If: what its branches hold
        for g in node.subgraphs():
            for n in g.nodes:
                out.extend(_problems(tc, g, n, depth + 1, notes))
    elif node.subgraphs():
        out.append(f"{where(node)} holds subgraphs (only Loop and If are lowered)")
    return out


def _varying_slice(graph: Graph, node: Node) -> bool:
    """A ``Slice`` in a loop body or branch (`graph`) whose start is computed there and whose
    end is a constant, or the reverse (``x[i:]``): its length changes per iteration (a
    difference known when compiling, ``x[i:i + k]``, is lowered)."""
    if node.op_type != "Slice" or node.domain != "" or len(node.inputs) < 3:
        return False

    def const(v) -> bool:
        return v is not None and (v.const is not None or
                                  v.producer is not None and v.producer.op_type == "Constant")

    inputs = {v.uid for v in graph.inputs}
    own = {id(n) for n in graph.nodes}

    def computed(v) -> bool:
        """Whether `v` depends on the body's inputs (the iteration, carried values) through
        ops other than Shape / Size (whose results are known when compiling)."""
        seen, todo = set(), [v]
        while todo:
            u = todo.pop()
            if u is None or u.uid in seen:
                continue
            seen.add(u.uid)
            if u.uid in inputs:
                return True
            q = u.producer
            if q is None or id(q) not in own or q.op_type in ("Shape", "Size", "Constant"):
                continue
            todo.extend(q.inputs)
        return False

    starts, ends = node.inputs[1], node.inputs[2]
    return computed(starts) and const(ends) or const(starts) and computed(ends)


#: ops whose output has the shape of their input 0 (the carried value written into)
_SHAPE_OF_DATA = {"ScatterND", "ScatterElements", "Scatter", "Identity", "Cast"}


def _broadcast_of_itself(c) -> bool:
    """Is the body's result of carried value `c`, through ops that keep its shape, an
    ``Expand`` of `c` itself to a shape computed in the body? (TensorFlow's TensorList as
    OpenVINO's frontend writes it: a placeholder widened to the first element's shape, then
    written by ScatterND.)"""
    v = c.result
    for _ in range(16):
        n = v.producer
        if n is None or not n.inputs or n.inputs[0] is None:
            return False
        if n.op_type == "Expand" and n.domain == "":
            shape = n.inputs[1] if len(n.inputs) > 1 else None
            return n.inputs[0] is c.param and shape is not None and shape.const is None
        if n.op_type not in _SHAPE_OF_DATA or n.domain != "":
            return False
        v = n.inputs[0]
    return False


def _loop_problems(tc, graph: Graph, node: Loop, depth: int, notes: list[Record]
                   ) -> list[str]:
    from .loops.growing import candidates
    from .loops.padded_reads import static_problem
    from .loops.ranks import changing_ranks

    out: list[str] = []
    scope = Scope(tc)
    early = _may_stop_early(tc, node, scope)
    grown = set(candidates(node))
    grown_names = {c.param.name for j, c in enumerate(node.carried) if j in grown}
    buffered = []
    for j, c in enumerate(node.carried):
        if j in grown:
            why = static_problem(node, j)
            if why is None and early and depth > 0:
                why = ("its buffer is sized per run by the loop driver, which runs top-level "
                       "loops only")
            if why is None:
                buffered.append(c.param.name)
                continue
            out.append(f"{where(node)}: carried value '{c.param.name}' grows every "
                       f"iteration (a Concat of itself), and XLA loops need a fixed shape; "
                       f"not run as a buffer: {why}")
            continue
        if grows_each_iteration(c):
            out.append(f"{where(node)}: carried value '{c.param.name}' grows every "
                       "iteration (a Concat of itself), and XLA loops need a fixed shape")
            continue
        if _broadcast_of_itself(c):
            out.append(f"{where(node)}: carried value '{c.param.name}' is broadcast (Expand) "
                       "to a shape the body computes, so its shape may change in the first "
                       "iteration, and XLA loops need a fixed shape")
            continue
        a, b = c.value.type, c.result.type
        if (isinstance(a, TensorType) and isinstance(b, TensorType) and a.rank is not None
                and b.rank is not None and a.rank != b.rank):
            out.append(f"{where(node)}: carried value '{c.param.name}' changes rank from "
                       f"{a.rank} to {b.rank}")
            continue
        if (isinstance(a, TensorType) and isinstance(b, TensorType) and a.shape is not None
                and b.shape is not None and all(isinstance(d, int) for d in a.shape + b.shape)
                and a.shape != b.shape):
            out.append(f"{where(node)}: carried value '{c.param.name}' changes shape from "
                       f"{list(a.shape)} to {list(b.shape)}")
    out.extend(f"{where(node)}: carried value '{name}' changes rank from {a} to {b} (the "
               "body's element-wise ops give it another rank than it starts with)"
               for name, a, b in changing_ranks(node) if name not in grown_names)
    concat = any(isinstance(p, Concat) for p in node.output_ports)
    if early and concat and depth > 0:
        out.append(f"{where(node)} can stop early and has concatenated outputs: their length "
                   "is data-dependent, which XLA cannot express inside another loop or "
                   "branch")
    how = ("lax.while_loop" + (" with output buffers (driven from Python)"
                               if concat or buffered else "")
           if early else "lax.scan (if the iteration count is known when compiling)")
    if buffered:
        how += ("; carried value(s) " + ", ".join(f"'{n}'" for n in buffered) + " grow every "
                "iteration (a Concat, or ONNX Runtime's Attention appending to its past): "
                "carried as fixed-capacity buffers with a valid length"
                + (" (sized per driver step, doubled when full)" if early else "")
                + ", reads made exact by masking; checked when tracing, and a read the rule "
                "table does not cover sends the loop to NumPy")
    kind = fused_kind(graph, node)
    if kind is not None:
        out = []
        cells = " and ".join(f"one {k} cell" for k in kind.split("+"))
        split = " (stacked cells: one loop each, passes.cells.fission)" if "+" in kind else ""
        how = (f"fused as {cells}{split} (passes.fuse_cells): lax.scan over its steps, the "
               "input projection of all steps one matrix product before it")
        notes.append(Record(where(node), True, how))
        return out
    at = len(notes)
    sub = [p for n in node.body.nodes for p in _problems(tc, node.body, n, depth + 1, notes)]
    out.extend(sub)
    if depth > 0 or not out:  # outer loop first, then what is inside it
        notes.insert(at, Record(where(node), not out, how if not out else "; ".join(out)))
    return out


def analyze(graph: Graph) -> list[Record]:
    """The records of `graph` as the backend compiles it: after the passes that remove
    sequences (`passes.pipelines.XLA_SEQUENCES`); fused cells are recognised in place."""
    from ...passes.pipelines import XLA_SEQUENCES, rewritten_copy
    from .generation import lowered, merged

    load_all()
    graph, said = lowered(graph, node_problems)
    graph = rewritten_copy(XLA_SEQUENCES, graph)
    tc = TraceContext(CompileCache())
    records: list[Record] = []
    shapes = RunTimeShapes()
    for node in needed_nodes(graph, graph.outputs):
        notes: list[Record] = []
        probs = _problems(tc, graph, node, 0, notes)
        early = isinstance(node, Loop) and _may_stop_early(tc, node, Scope(tc))
        late = shapes.problem(node, early)
        probs += [late] if late and not probs else []
        if probs:
            records.append(Record(where(node), False, "runs on NumPy: " + "; ".join(probs)))
        elif not (notes and notes[0].element == where(node)):
            records.append(Record(where(node), True, "compiles with XLA"))
        records.extend(notes)
    return merged(records, said)


def node_problems(graph: Graph, node: Node) -> list[str]:
    """What keeps `node`, a top-level node of `graph`, from compiling (none: it compiles),
    judged as `analyze` judges it."""
    load_all()
    return _problems(TraceContext(CompileCache()), graph, node, 0, [])
