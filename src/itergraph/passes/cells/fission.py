"""Recurrent cells stacked in one loop, split into a loop per cell (for `fuse_cells`). Not a
pass.

Keras ``RNN([cell_1, cell_2])`` (``StackedRNNCells``) and hand-written PyTorch loops that
call two cells per step run one loop whose body is cell 1 and then cell 2 reading cell 1's
new hidden state. When the first cell reads nothing of the second, the loop is two loops,
the first handing its new hidden states to the second as a sequence::

    for t in range(T):                        for t in range(T):
        h1, c1 = cell_1(x[t], h1, c1)             h1, c1 = cell_1(x[t], h1, c1)
        h2 = cell_2(h1, h2)             ==        y1[t] = h1
        y[t] = h2                             for t in range(T):
                                                  h2 = cell_2(y1[t], h2)
                                                  y[t] = h2

`splits` makes the two loops (each a canonical `Loop` of its own, so a third cell stays in
the second and splits off again); `fuse_cells` fuses each piece that is one cell.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...ir.clone import clone_node
from ...ir.graph import Node, Value
from ...ir.loop import Carried, Concat, Invariant, Last, Loop, Sliced
from ...ir.traversal import needed_nodes
from .match import strip


def _params_read(nodes: list[Node], roots: list[Value], params: set[int]) -> set[int]:
    got = {v.uid for n in nodes for v in n.reads() if v.uid in params}
    return got | {v.uid for v in roots if v is not None and v.uid in params}


def splits(loop: Loop) -> Iterator[tuple[Loop, Loop]]:
    """Pairs of loops computing `loop`'s outputs (see the module docstring), one per group of
    carried values no other carried value feeds: the first loop runs the group, the second
    the rest, reading the values the first computes as a sliced input. Nothing for a loop with
    a condition or precondition; no pair for a group whose values of the previous step the
    rest reads."""
    if loop.precondition is not None or loop.condition_result is not None:
        return
    body = loop.body
    producer = {v.uid: n for n in body.nodes for v in n.outputs}
    changing = [c for c in loop.carried if strip(c.result) is not c.param]
    params = {c.param.uid for c in changing}
    reach = {}
    for c in changing:
        reach[id(c)] = _params_read(needed_nodes(body, [c.result]), [c.result], params)
    tried: set[frozenset] = set()
    for c in changing:
        group = [d for d in changing if d is c or (d.param.uid in reach[id(c)]
                                                   and c.param.uid in reach[id(d)])]
        mine = frozenset(d.param.uid for d in group)
        if mine not in tried and len(group) < len(changing) and all(
                reach[id(d)] <= mine for d in group):
            tried.add(mine)
            pair = _split(loop, producer, changing, group)
            if pair is not None:
                yield pair


def _split(loop: Loop, producer: dict, changing: list, first: list) -> tuple[Loop, Loop] | None:
    body = loop.body
    mine = {d.param.uid for d in first}
    nodes_a = {id(n) for n in needed_nodes(body, [d.result for d in first])}
    defined_a = {v.uid for n in body.nodes if id(n) in nodes_a for v in n.outputs} | mine
    ports_a = [p for p in loop.output_ports
               if p.result.uid in defined_a or p.result.uid not in producer]
    ports_b = [p for p in loop.output_ports if p not in ports_a]
    rest = [c for c in loop.carried if c not in first]
    if any(c.result.uid in defined_a for c in rest if c in changing):
        return None
    nodes_b = {id(n) for n in needed_nodes(body, [c.result for c in rest]
                                           + [p.result for p in ports_b])} - nodes_a
    bridges: dict[int, Value] = {}
    for n in body.nodes:
        if id(n) not in nodes_b:
            continue
        if any(v.uid in mine for v in n.reads()):
            return None  # the previous step's value of the first group
        if any(v.uid in defined_a for v in n.captured()):
            return None
        for v in n.inputs:
            if v is not None and v.uid in defined_a:
                bridges.setdefault(v.uid, v)
    a = _piece(loop, [c for c in loop.carried if c in first or c not in changing], nodes_a,
               ports_a, list(bridges.values()), {})
    if a is None:
        return None
    first_loop, bridge_outputs = a
    b = _piece(loop, rest, nodes_b, ports_b, [], dict(zip(bridges, bridge_outputs)))
    return None if b is None else (first_loop, b[0])


def _piece(loop: Loop, carried: list[Carried], nodes: set[int], ports: list, bridges: list,
           sliced_from: dict[int, Value]) -> tuple[Loop, list[Value]] | None:
    """A copy of `loop` with only `carried`, the body `nodes`, the output `ports` (producing
    `loop`'s own output values), new stacked outputs of the `bridges` values (returned), and
    a new sliced input for each body value in `sliced_from` (uid -> the whole sequence)."""
    m: dict[int, Value] = {}
    copy = clone_node(loop, m)
    old_nodes = {id(n): k for k, n in enumerate(loop.body.nodes)}
    keep_nodes = [copy.body.nodes[old_nodes[i]] for i in sorted(nodes, key=old_nodes.get)]
    steps = {}
    for uid, whole in sliced_from.items():
        body_value = m[uid]
        param = Value(f"{body_value.name}/step", body_value.type)
        steps[body_value.uid] = param
        copy.input_ports.append(Sliced(whole, param))
        copy.body.inputs.append(param)
    for n in keep_nodes:
        if isinstance(n, Loop):
            if any(v is not None and v.uid in steps for v in n.inputs):
                return None  # a nested loop reading the bridge: left alone
        else:
            n.inputs = [steps.get(v.uid, v) if v is not None else None for v in n.inputs]
    kept_carried = {id(m[c.param.uid]) for c in carried}
    read = {v.uid for n in keep_nodes for v in n.reads()}
    read |= {m.get(p.result.uid, p.result).uid for p in ports}
    ins = []
    for p in copy.input_ports:
        if isinstance(p, Carried):
            if id(p.param) in kept_carried:
                ins.append(p)
        elif isinstance(p, Invariant) or steps:
            # (a sequence from the first loop has as many steps as that loop ran: it bounds
            # this one as its sliced inputs did; without one they all stay, bounding it)
            if p.param.uid in read or p.param in steps.values():
                ins.append(p)
        else:
            ins.append(p)
    gone = {p.param.uid for p in copy.input_ports if p not in ins}
    copy.input_ports = ins
    copy.body.inputs = [v for v in copy.body.inputs if v.uid not in gone]
    copy.body.nodes = keep_nodes
    outs: list = []
    index = {id(p): k for k, p in enumerate(loop.output_ports)}
    for p in ports:
        new = copy.output_ports[index[id(p)]]
        outs.append(Last(new.result, p.output) if isinstance(p, Last) else
                    Concat(new.result, p.output, new.axis, new.reverse, new.new_axis,
                           new.length))
    fresh = []
    for v in bridges:
        out = Value(f"{loop.name or 'loop'}/{v.name}/steps")
        outs.append(Concat(m[v.uid], out))
        fresh.append(out)
    copy.set_output_ports(outs)
    copy.body.outputs = _unique([c.result for c in copy.carried] +
                                [p.result for p in copy.output_ports])
    return copy, fresh


def _unique(vs: list[Value]) -> list[Value]:
    seen: set[int] = set()
    out = []
    for v in vs:
        if v.uid not in seen:
            seen.add(v.uid)
            out.append(v)
    return out
