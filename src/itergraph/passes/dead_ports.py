"""Dead ports and dead loops: what no graph output (or loop condition) ever reads goes away."""

from __future__ import annotations

from ..ir.graph import Graph, Node, Value
from ..ir.loop import UNBOUNDED_TRIP_COUNT, Carried, Last, Loop, Sliced
from ..ir.static_values import static_int
from ..ir.traits import Trait, traits
from .base import Pass
from .loop_motion import static_shape


class DeadPorts(Pass):
    """Remove loop ports, loops and nodes whose values never reach an output.

    Applies to: every graph at any depth, outermost first, each with its roots: the main
    graph's outputs; for a loop body, the results of the loop's remaining output ports, its
    condition result and precondition; for an ``If`` branch, its outputs. A value is live
    when a root needs it. Then, repeated until nothing changes:

    - a node none of whose outputs is live is removed when it is removable: an op with the
      ``PURE`` or ``RANDOM`` trait, or an ``If``/``Loop`` whose subgraphs hold only removable
      nodes (so a loop with no used output and no side effect goes, a while loop included);
    - a loop's ``Last`` and ``Concat`` outputs that are not live are removed;
    - a ``Carried`` port whose parameter is not live is removed (a value whose result feeds
      only itself, or nothing live), unless a ``Last`` output reads its result (after zero
      iterations that output is the port's initial value);
    - an ``Invariant`` port whose parameter is not live is removed;
    - a ``Sliced`` port whose parameter is not live is removed only when the loop's iteration
      count stays the same without it: another kept sliced input reads the same value with
      the same slicing, or its slice count is static and the constant trip count or another
      kept sliced input's static count is no larger. Otherwise it stays (as a bound);
    - body parameters of removed ports leave the body; body outputs that are no longer
      results leave the body's output list.

    Returns: the number of nodes and ports removed.

    Guarantees: every graph output keeps its value for every input on which the original
    graph runs without error. Removed nodes no longer run, so a removed node that would have
    failed (or a removed while loop that would not have ended) no longer does.
    """

    name = "dead_ports"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        return _prune(graph, list(graph.outputs))


dead_ports = DeadPorts()


def removable(node: Node) -> bool:
    """Whether `node` may be dropped when nothing reads its outputs."""
    if isinstance(node, Loop):
        return all(removable(n) for n in node.body.nodes)
    if node.op_type == "If" and node.domain == "":
        return all(removable(n) for g in node.subgraphs() for n in g.nodes)
    t = traits(node.op_type, node.domain)
    return Trait.PURE in t or Trait.RANDOM in t


def live_values(graph: Graph, roots: list[Value | None]) -> set[int]:
    """uids of the values `roots` need in `graph` (with what non-removable nodes read)."""
    live = {v.uid for v in roots if v is not None}
    for n in reversed(graph.nodes):
        if any(v.uid in live for v in n.outputs) or not removable(n):
            live.update(v.uid for v in n.reads())
    return live


def _prune(graph: Graph, roots: list[Value | None]) -> int:
    done = 0
    while True:
        live = live_values(graph, roots)
        kept = [n for n in graph.nodes if any(v.uid in live for v in n.outputs)
                or not removable(n)]
        changed = len(graph.nodes) - len(kept)
        graph.nodes = kept
        for n in graph.nodes:
            if isinstance(n, Loop):
                changed += _prune_loop(n, live)
            else:
                for g in n.subgraphs():
                    changed += _prune(g, list(g.outputs))
        done += changed
        if not changed:
            return done


def _body_roots(loop: Loop) -> tuple[list[Value | None], set[int]]:
    """The body's roots, carried results of live carried parameters included, and the live
    body values."""
    roots = [p.result for p in loop.output_ports]
    roots += [loop.condition_result, loop.precondition]
    added: set[int] = set()
    while True:
        live = live_values(loop.body, roots)
        more = [c for c in loop.carried if c.param.uid in live and id(c) not in added]
        if not more:
            return roots, live
        for c in more:
            added.add(id(c))
            roots.append(c.result)


def _prune_loop(loop: Loop, outer_live: set[int]) -> int:
    removed = 0
    outs = [p for p in loop.output_ports if p.output.uid in outer_live]
    if len(outs) != len(loop.output_ports):
        removed += len(loop.output_ports) - len(outs)
        loop.set_output_ports(outs)
    roots, live = _body_roots(loop)
    last_results = {p.result.uid for p in loop.output_ports if isinstance(p, Last)}
    ports = list(loop.input_ports)
    for p in list(ports):
        if p.param.uid in live:
            continue
        if isinstance(p, Carried) and p.result.uid in last_results:
            continue
        if isinstance(p, Sliced) and not _bounded_without(loop, p, ports):
            continue
        ports.remove(p)
    if len(ports) != len(loop.input_ports):
        removed += len(loop.input_ports) - len(ports)
        gone = {p.param.uid for p in loop.input_ports if p not in ports}
        loop.input_ports = ports
        loop.body.inputs = [v for v in loop.body.inputs if v.uid not in gone]
        roots, live = _body_roots(loop)
    results = {v.uid for v in roots if v is not None}
    results.update(c.result.uid for c in loop.carried)
    loop.body.outputs = [v for v in loop.body.outputs if v.uid in results]
    return removed + _prune(loop.body, roots)


def slice_count(s: Sliced) -> int | None:
    """The number of pieces `s` yields when its axis has a static length."""
    shape = static_shape(s.value)
    if shape is None or not -len(shape) <= s.axis < len(shape):
        return None
    return s.count(shape[s.axis])


def const_trip_count(loop: Loop) -> int | None:
    """The loop's trip count as a bound on its iterations when it is static, else None."""
    t = static_int(loop.trip_count)
    if t is None or t >= UNBOUNDED_TRIP_COUNT:
        return None
    if t < 0:
        return 0 if loop.negative_trip_count == "zero" else None
    return t


def _same_slicing(a: Sliced, b: Sliced) -> bool:
    return (a.value is b.value and (a.axis, a.start, a.end, a.stride, a.part_size)
            == (b.axis, b.start, b.end, b.stride, b.part_size))


def _bounded_without(loop: Loop, s: Sliced, ports: list) -> bool:
    """Whether the loop runs as many iterations without sliced port `s` as with it."""
    others = [p for p in ports if isinstance(p, Sliced) and p is not s]
    if any(_same_slicing(s, o) for o in others):
        return True
    count = slice_count(s)
    if count is None:
        return False
    bounds = [const_trip_count(loop), *(slice_count(o) for o in others)]
    return any(b is not None and b <= count for b in bounds)

