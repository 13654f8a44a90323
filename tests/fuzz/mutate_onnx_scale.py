"""ONNX mutation operators of size and naming, registered in `mutate_onnx.OPS`: a name that
clashes with another (`name_clash`: a node output renamed to another value's name, so that two
nodes produce it, or a node's output given a graph input's name), an INTS attribute made huge
(`attr_huge`: a hundred thousand entries, or a million-long list of a repeated value), and a
chain of a thousand or more nodes put on a value (`node_chain`).

Each operator edits the model in place and returns a description; `NotApplicable` when the
model has nothing of its kind.
"""

from __future__ import annotations

from onnx import AttributeProto
from onnx import helper as h

from .common import pick
from .mutate_onnx import OPS, _label, _loop_biased_node, graphs, nodes


@OPS.register("name_clash")
def name_clash(m, rng):
    """A node output renamed to the name of another value of its graph (another node's output,
    a graph input, an initializer), where it is produced and everywhere it is read."""
    g, n = pick(rng, [(g, n) for g, _ in graphs(m.graph) for n in g.node if n.output])
    outs = [i for i, o in enumerate(n.output) if o]
    i = pick(rng, outs)
    others = sorted({o for x in g.node if x is not n for o in x.output if o}
                    | {v.name for v in g.input} | {t.name for t in g.initializer})
    new = pick(rng, [o for o in others if o != n.output[i]])
    old = n.output[i]
    for x in g.node:
        for names in (x.input, x.output):
            for k, name in enumerate(names):
                if name == old:
                    names[k] = new
    for v in list(g.output) + list(g.value_info):
        if v.name == old:
            v.name = new
    return f"{_label(n)} output {old!r} renamed {new!r}"


@OPS.register("attr_huge")
def attr_huge(m, rng):
    """An INTS or FLOATS attribute given 100,000 entries (its own repeated), or an INTS one
    a million copies of one value."""
    cands = [(n, a) for _, n in nodes(m) for a in n.attribute
             if a.type in (AttributeProto.INTS, AttributeProto.FLOATS)]
    n, a = pick(rng, cands)
    if a.type == AttributeProto.FLOATS:
        vals = list(a.floats) or [1.0]
        a.floats[:] = (vals * (100_000 // len(vals) + 1))[:100_000]
        return f"{_label(n)}.{a.name}: 100,000 floats"
    vals = list(a.ints) or [0]
    if rng.random() < 0.5:
        a.ints[:] = (vals * (100_000 // len(vals) + 1))[:100_000]
        return f"{_label(n)}.{a.name}: 100,000 ints"
    a.ints[:] = [vals[0]] * 1_000_000
    return f"{_label(n)}.{a.name}: 1,000,000 copies of {vals[0]}"


@OPS.register("node_chain")
def node_chain(m, rng):
    """A chain of 1,000 to 3,000 Identity (or Neg twice) nodes put between a node's output and
    its readers: thousands of nodes, in the main graph or a loop body."""
    g, n = _loop_biased_node(m, rng)
    outs = [o for o in n.output if o]
    v = pick(rng, outs)
    count = int(pick(rng, (1000, 3000)))
    op = pick(rng, ("Identity", "Neg"))
    count += count % 2 if op == "Neg" else 0
    chain, prev = [], v
    for k in range(count):
        name = f"{v}__chain{k}"
        chain.append(h.make_node(op, [prev], [name], name=name))
        prev = name
    for x in g.node:
        for k, name in enumerate(x.input):
            if name == v:
                x.input[k] = prev
    for out in g.output:
        if out.name == v:
            out.name = prev
    at = list(g.node).index(n) + 1
    for k, node in enumerate(chain):
        g.node.insert(at + k, node)
    return f"{count} {op} nodes after {_label(n)} output {v!r}"
